// This file implements the authorization code grant of OAuth 2.1
// (draft-ietf-oauth-v2-1 §4.1) with PKCE (RFC 7636) and resource indicators
// (RFC 8707): single-use codes bound to their client, redirect URI, code
// challenge and resource, stored only as hashes, and the revocation of what
// a code issued when it is replayed (§4.1.3, "Reuse of Authorization Codes").

package grant

import (
	"errors"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/token"
)

// CodeRequest is an approved authorization request: what the code will be
// bound to and what the grant will hold. The caller has validated it (client,
// redirect URI match, S256 challenge, resource, scopes) and the owner has
// approved it.
type CodeRequest struct {
	ClientID    string
	RedirectURI string   // the redirect_uri the code is sent to
	Challenge   string   // the S256 code_challenge
	Resource    string   // the RFC 8707 resource the tokens are for (the "aud")
	Scope       []string // the approved scopes
	Subject     string   // the resource owner who approved
}

// Tokens is what a code exchange or a refresh gives: the caller mints an
// access token for it (with GrantID as its grant_id claim) and returns
// RefreshToken, which is given out only this once.
type Tokens struct {
	GrantID      string   // the grant (refresh-token family)
	RefreshToken string   // "osr_…"; only its hash is stored
	Scope        []string // the scopes of the access token to mint
	Resource     string   // the audience of the access token to mint
	ClientID     string
	Subject      string
}

type codeRecord struct {
	ClientID    string     `json:"client_id"`
	RedirectURI string     `json:"redirect_uri"`
	Challenge   string     `json:"code_challenge"`
	Resource    string     `json:"resource"`
	Scope       []string   `json:"scope"`
	Subject     string     `json:"sub"`
	IssuedAt    time.Time  `json:"issued_at"`
	ExpiresAt   time.Time  `json:"expires_at"`
	ConsumedAt  *time.Time `json:"consumed_at,omitempty"`
	GrantID     string     `json:"grant_id,omitempty"` // the family the exchange created
}

// IssueCode stores a new authorization code for an approved request and
// returns it ("osc_…", given out once; only its SHA-256 is stored). It
// expires after Config.CodeTTL. It also records the client as authorized and
// used. An unknown client is ErrInvalidClient.
func (s *Store) IssueCode(req CodeRequest) (string, error) {
	switch {
	case req.Challenge == "":
		return "", errors.New("issue code: code challenge required")
	case req.RedirectURI == "":
		return "", errors.New("issue code: redirect URI required")
	case req.Subject == "":
		return "", errors.New("issue code: subject required")
	}
	code, hash := token.NewOpaque(token.PrefixCode)
	err := s.update("issue code", func(tx *kv.Tx, _ *changes) error {
		now := s.cfg.Now()
		cb := tx.Bucket(BucketClients)
		c, err := getClient(cb, req.ClientID)
		if err != nil {
			return err
		}
		if err := touchClient(cb, req.ClientID, c, now, true); err != nil {
			return err
		}
		return put(tx.Bucket(BucketCodes), hash[:], &codeRecord{
			ClientID:    req.ClientID,
			RedirectURI: req.RedirectURI,
			Challenge:   req.Challenge,
			Resource:    req.Resource,
			Scope:       slices.Clone(req.Scope),
			Subject:     req.Subject,
			IssuedAt:    now,
			ExpiresAt:   now.Add(s.cfg.CodeTTL),
		})
	})
	if err != nil {
		return "", err
	}
	return code, nil
}

// ExchangeCode redeems an authorization code, in one Update: it consumes the
// code and creates a grant (refresh-token family) with its first refresh
// token. redirectURI and resource are compared when not empty (they are
// optional at the token endpoint).
//
// Errors, in the order checked: an unknown clientID is ErrInvalidClient. An
// unknown code, one bound to another client, redirect URI or resource, or a
// verifier that does not match the challenge is ErrInvalidGrant and changes
// nothing, so the rightful exchange still works (AS-07, AS-09). A code
// already exchanged is ErrInvalidGrant and revokes the family the first
// exchange created (AS-06). An expired code is ErrInvalidGrant (AS-08).
func (s *Store) ExchangeCode(code, clientID, redirectURI, verifier, resource string) (*Tokens, error) {
	hash := token.HashToken(code)
	var (
		out    *Tokens
		result error
	)
	err := s.update("exchange code", func(tx *kv.Tx, ch *changes) error {
		out, result = nil, nil
		now := s.cfg.Now()
		cb := tx.Bucket(BucketClients)
		c, err := getClient(cb, clientID)
		if err != nil {
			return err
		}
		codes := tx.Bucket(BucketCodes)
		rec, err := get[codeRecord](codes, hash[:])
		if err != nil {
			return err
		}
		if rec == nil ||
			rec.ClientID != clientID ||
			redirectURI != "" && redirectURI != rec.RedirectURI ||
			resource != "" && resource != rec.Resource ||
			!s.cfg.VerifyPKCE(verifier, rec.Challenge) {
			return ErrInvalidGrant
		}
		if rec.ConsumedAt != nil {
			// A replay by someone who holds the code and its verifier: what
			// the first exchange issued may be in the wrong hands.
			result = ErrInvalidGrant
			return s.revokeFamily(tx, ch, rec.GrantID, EventCodeReuse, "authorization code used twice", now)
		}
		if !now.Before(rec.ExpiresAt) {
			return ErrInvalidGrant
		}
		g := &grantRecord{
			ClientID:  rec.ClientID,
			Subject:   rec.Subject,
			Scope:     rec.Scope,
			Resource:  rec.Resource,
			CreatedAt: now,
		}
		id, rt, err := s.newFamily(tx, g, now)
		if err != nil {
			return err
		}
		rec.ConsumedAt = timePtr(now)
		rec.GrantID = id
		if err := put(codes, hash[:], rec); err != nil {
			return err
		}
		if err := touchClient(cb, clientID, c, now, false); err != nil {
			return err
		}
		ch.added = append(ch.added, id)
		out = &Tokens{
			GrantID:      id,
			RefreshToken: rt,
			Scope:        slices.Clone(g.Scope),
			Resource:     g.Resource,
			ClientID:     g.ClientID,
			Subject:      g.Subject,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if result != nil {
		return nil, result
	}
	return out, nil
}
