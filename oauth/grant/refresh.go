// This file implements the refresh token grant of OAuth 2.1
// (draft-ietf-oauth-v2-1 §4.3) for public clients: rotation on every use and
// reuse detection that revokes the whole family, as RFC 9700 ("Best Current
// Practice for OAuth 2.0 Security") §4.14.2 requires, with a grace window in
// which a replay of the just-rotated token gets the successor already issued,
// for the refreshes real clients race (SECURITY.md AS-11..AS-16).

package grant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/token"
)

// GrantIDPrefix starts every grant id.
const GrantIDPrefix = "gr_"

// grantRecord is a grant: what the owner approved for a client, and the
// family of refresh tokens that carries it.
type grantRecord struct {
	ClientID  string    `json:"client_id"`
	Subject   string    `json:"sub"`
	Scope     []string  `json:"scope"`
	Resource  string    `json:"resource"`
	CreatedAt time.Time `json:"created_at"`
	// ActiveRT is the hash of the family's one active refresh token; nil once
	// the family is revoked.
	ActiveRT []byte `json:"active_rt,omitempty"`
	// RefreshedAt is when ActiveRT was issued.
	RefreshedAt time.Time `json:"refreshed_at"`
	// Pending is ActiveRT sealed for replays of its parent while the grace
	// window of that rotation is open; nil otherwise (seal.go).
	Pending      *pendingSuccessor `json:"pending,omitempty"`
	RevokedAt    *time.Time        `json:"revoked_at,omitempty"`
	RevokeReason string            `json:"revoke_reason,omitempty"`
}

// States of a refresh token. A token is active only while its family is live
// and the family's ActiveRT names it, so a family has at most one.
const (
	rtActive  = "active"  // the family's current token
	rtRotated = "rotated" // used: Child replaced it
	rtRevoked = "revoked" // was active when its family was revoked
	// "superseded" (never used: a grace replay of its parent replaced it) is
	// in files written before replays got the same successor; presenting one
	// is reuse, like any state but active.
)

type refreshRecord struct {
	GrantID   string     `json:"grant_id"`
	State     string     `json:"state"`
	IssuedAt  time.Time  `json:"issued_at"`
	Parent    []byte     `json:"parent,omitempty"` // hash of the token it replaced
	RotatedAt *time.Time `json:"rotated_at,omitempty"`
	Child     []byte     `json:"child,omitempty"`    // hash of its replacement
	EndedAt   *time.Time `json:"ended_at,omitempty"` // when it was revoked
}

// getGrant returns grant id's record, or nil when there is none.
func getGrant(b *kv.Bucket, id string) (*grantRecord, error) {
	if id == "" {
		return nil, nil
	}
	return get[grantRecord](b, []byte(id))
}

// newFamily stores g as a new grant with a random id and its first refresh
// token, and returns both.
func (s *Store) newFamily(tx *kv.Tx, g *grantRecord, now time.Time) (id, rt string, err error) {
	gb := tx.Bucket(BucketGrants)
	id = randomID(GrantIDPrefix)
	for gb.Get([]byte(id)) != nil {
		id = randomID(GrantIDPrefix)
	}
	rt, err = s.issueRT(tx, g, id, nil, now)
	if err != nil {
		return "", "", err
	}
	return id, rt, put(gb, []byte(id), g)
}

// issueRT stores a new active refresh token in family id, child of parent
// (nil for the first), and makes it g's ActiveRT. The caller stores g.
func (s *Store) issueRT(tx *kv.Tx, g *grantRecord, id string, parent []byte, now time.Time) (string, error) {
	rt, hash := token.NewOpaque(token.PrefixRefresh)
	err := put(tx.Bucket(BucketRefresh), hash[:], &refreshRecord{
		GrantID:  id,
		State:    rtActive,
		IssuedAt: now,
		Parent:   parent,
	})
	if err != nil {
		return "", err
	}
	g.ActiveRT = hash[:]
	g.RefreshedAt = now
	return rt, nil
}

// Refresh redeems a refresh token for a new one, in one Update. scope, when
// not empty, narrows the access token to mint (the grant keeps its scope);
// resource, when not empty, must be the grant's.
//
// Errors, in the order checked: an unknown clientID is ErrInvalidClient. An
// unknown token, one of a revoked family, or one issued to another client
// (AS-14) is ErrInvalidGrant. A scope the grant does not hold is
// ErrInvalidScope and another resource ErrInvalidTarget (AS-15). A family
// older than Config.RefreshMax, or an active token unused for longer than
// Config.RefreshIdle, is ErrInvalidGrant (AS-16). None of these change
// anything.
//
// The family's active token is rotated: it is marked rotated and a new
// active child is returned (AS-11), kept sealed under the rotated token for
// the grace window (seal.go); using that child closes the window of its
// parent. A rotated token presented again while its window is open —
// within Config.GraceWindow of its rotation, and its child not yet used — is
// one of the refreshes real clients race (two egress addresses, several
// processes): it gets the same child again, so every racer ends up holding
// the family's one working token, and nothing changes but a count of
// replays, at most MaxReplays per rotation (then ErrInvalidGrant, changing
// nothing) (AS-12, AS-13). Any other reuse — of a rotated token after the
// window or once its child was used — revokes the whole family with an
// audit event and is ErrInvalidGrant (AS-11, RFC 9700 §4.14.2).
func (s *Store) Refresh(rt, clientID string, scope []string, resource string) (*Tokens, error) {
	hash := token.HashToken(rt)
	var (
		out    *Tokens
		result error
	)
	err := s.update("refresh", func(tx *kv.Tx, ch *changes) error {
		out, result = nil, nil
		now := s.cfg.Now()
		cb := tx.Bucket(BucketClients)
		c, err := getClient(cb, clientID)
		if err != nil {
			return err
		}
		rb, gb := tx.Bucket(BucketRefresh), tx.Bucket(BucketGrants)
		rec, err := get[refreshRecord](rb, hash[:])
		if err != nil || rec == nil {
			return orInvalidGrant(err)
		}
		g, err := getGrant(gb, rec.GrantID)
		if err != nil || g == nil || g.RevokedAt != nil {
			return orInvalidGrant(err)
		}
		if g.ClientID != clientID {
			return ErrInvalidGrant
		}
		for _, sc := range scope {
			if !slices.Contains(g.Scope, sc) {
				return ErrInvalidScope
			}
		}
		if resource != "" && resource != g.Resource {
			return ErrInvalidTarget
		}
		if now.Sub(g.CreatedAt) > s.cfg.RefreshMax {
			return ErrInvalidGrant
		}

		var newRT string
		switch {
		case rec.State == rtActive && bytes.Equal(g.ActiveRT, hash[:]):
			if now.Sub(rec.IssuedAt) > s.cfg.RefreshIdle {
				return ErrInvalidGrant
			}
			// Rotate. The parent's window (if open) closes: its successor is used.
			if newRT, err = s.issueRT(tx, g, rec.GrantID, hash[:], now); err != nil {
				return err
			}
			rec.State = rtRotated
			rec.RotatedAt = timePtr(now)
			rec.Child = g.ActiveRT
			g.Pending = nil
			if s.cfg.GraceWindow > 0 {
				sealed, err := sealSuccessor(rt, newRT)
				if err != nil {
					return err
				}
				g.Pending = &pendingSuccessor{Parent: hash[:], RotatedAt: now, Sealed: sealed}
			}
			if err := put(rb, hash[:], rec); err != nil {
				return err
			}
		case rec.State == rtRotated && g.Pending.open(now, s.cfg.GraceWindow) &&
			bytes.Equal(g.Pending.Parent, hash[:]) && bytes.Equal(rec.Child, g.ActiveRT):
			// A racing refresh: the child it raced with is still unused.
			if g.Pending.Replays >= MaxReplays {
				return ErrInvalidGrant
			}
			if newRT, err = openSuccessor(rt, g.Pending.Sealed, g.ActiveRT); err != nil {
				return err
			}
			g.Pending.Replays++
		default:
			result = ErrInvalidGrant
			return s.revokeFamily(tx, ch, rec.GrantID, EventRefreshReuse, "refresh token reused ("+rec.State+")", now)
		}

		if err := put(gb, []byte(rec.GrantID), g); err != nil {
			return err
		}
		if err := touchClient(cb, clientID, c, now, false); err != nil {
			return err
		}
		out = &Tokens{
			GrantID:      rec.GrantID,
			RefreshToken: newRT,
			Scope:        slices.Clone(g.Scope),
			Resource:     g.Resource,
			ClientID:     g.ClientID,
			Subject:      g.Subject,
		}
		if len(scope) > 0 {
			out.Scope = dedupe(scope)
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

// CloseWindows drops, in one Update, the sealed successors whose grace
// window has passed at now, so that no rotated token can open its successor
// from the file any longer, and returns how many it dropped. It reads the
// grants first (a few per client) and writes only when there is one to drop:
// run it every minute or so. GC does the same.
func (s *Store) CloseWindows(now time.Time) (int, error) {
	var due []string
	err := s.db.View(func(tx *kv.Tx) error {
		var err error
		due, err = s.closedWindows(tx, now)
		return err
	})
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var n int
	err = s.update("close grace windows", func(tx *kv.Tx, _ *changes) error {
		var err error
		n, err = s.closeWindows(tx, now)
		return err
	})
	return n, err
}

// closedWindows returns the ids of the grants that keep a sealed successor
// whose window has passed at now.
func (s *Store) closedWindows(tx *kv.Tx, now time.Time) ([]string, error) {
	var ids []string
	err := tx.Bucket(BucketGrants).ForEach(func(k, v []byte) error {
		var g grantRecord
		if err := json.Unmarshal(v, &g); err != nil {
			return fmt.Errorf("grant %q: %w", k, err)
		}
		if g.Pending != nil && !g.Pending.open(now, s.cfg.GraceWindow) {
			ids = append(ids, string(k))
		}
		return nil
	})
	return ids, err
}

// closeWindows drops the sealed successors whose window has passed at now.
func (s *Store) closeWindows(tx *kv.Tx, now time.Time) (int, error) {
	ids, err := s.closedWindows(tx, now)
	if err != nil {
		return 0, err
	}
	gb := tx.Bucket(BucketGrants)
	for _, id := range ids {
		g, err := getGrant(gb, id)
		if err != nil {
			return 0, err
		}
		g.Pending = nil
		if err := put(gb, []byte(id), g); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// setRTState sets the state of the refresh token whose hash is h, if it is
// stored.
func (s *Store) setRTState(rb *kv.Bucket, h []byte, state string, now time.Time) error {
	if h == nil {
		return nil
	}
	rec, err := get[refreshRecord](rb, h)
	if err != nil || rec == nil {
		return err
	}
	rec.State = state
	rec.EndedAt = timePtr(now)
	return put(rb, h, rec)
}

// orInvalidGrant returns err, or ErrInvalidGrant when err is nil.
func orInvalidGrant(err error) error {
	if err != nil {
		return err
	}
	return ErrInvalidGrant
}

// dedupe returns the distinct entries of ss, in order.
func dedupe(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
