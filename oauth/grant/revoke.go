// This file implements revocation — of one grant, of a client's grants, of
// everything, and of a refresh token as RFC 7009 ("OAuth 2.0 Token
// Revocation") describes — and the audit trail of family revocations.

package grant

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/token"
)

// Kinds of audit events.
const (
	EventCodeReuse    = "code_reuse"    // a consumed code was exchanged again: its family is revoked (AS-06)
	EventRefreshReuse = "refresh_reuse" // a rotated refresh token was presented outside its grace window: its family is revoked (AS-11)
	EventRevoked      = "revoked"       // a family was revoked on request: Reason says which
)

// Event is one record of the audit trail: a family revocation.
type Event struct {
	Seq      uint64    `json:"-"` // the key in BucketAudit: events sort by it
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"` // one of the Event… kinds
	ClientID string    `json:"client_id"`
	GrantID  string    `json:"grant_id"`
	Reason   string    `json:"reason"`
}

// revokeFamily revokes grant id and its active refresh token, and appends an
// audit event. A missing or already revoked grant is left alone (and no
// event is written).
func (s *Store) revokeFamily(tx *kv.Tx, ch *changes, id, kind, reason string, now time.Time) error {
	gb := tx.Bucket(BucketGrants)
	g, err := getGrant(gb, id)
	if err != nil || g == nil || g.RevokedAt != nil {
		return err
	}
	return s.revokeRecord(tx, ch, id, g, kind, reason, now)
}

// revokeRecord is revokeFamily for a grant already read.
func (s *Store) revokeRecord(tx *kv.Tx, ch *changes, id string, g *grantRecord, kind, reason string, now time.Time) error {
	if err := s.setRTState(tx.Bucket(BucketRefresh), g.ActiveRT, rtRevoked, now); err != nil {
		return err
	}
	g.ActiveRT = nil
	g.Pending = nil // no replay of a revoked family is answered: drop its sealed successor
	g.RevokedAt = timePtr(now)
	g.RevokeReason = reason
	if err := put(tx.Bucket(BucketGrants), []byte(id), g); err != nil {
		return err
	}
	ch.removed = append(ch.removed, id)
	return appendEvent(tx, Event{Time: now, Kind: kind, ClientID: g.ClientID, GrantID: id, Reason: reason})
}

// revokeWhere revokes every live grant for which match is true, and returns
// how many it revoked.
func (s *Store) revokeWhere(tx *kv.Tx, ch *changes, reason string, match func(*grantRecord) bool) (int, error) {
	type hit struct {
		id string
		g  *grantRecord
	}
	var hits []hit
	err := tx.Bucket(BucketGrants).ForEach(func(k, v []byte) error {
		g := new(grantRecord)
		if err := json.Unmarshal(v, g); err != nil {
			return fmt.Errorf("grant %q: %w", k, err)
		}
		if g.RevokedAt == nil && match(g) {
			hits = append(hits, hit{string(k), g})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	now := s.cfg.Now()
	for _, h := range hits {
		if err := s.revokeRecord(tx, ch, h.id, h.g, EventRevoked, reason, now); err != nil {
			return 0, err
		}
	}
	return len(hits), nil
}

// revokeClientGrants revokes every live grant of client id.
func (s *Store) revokeClientGrants(tx *kv.Tx, ch *changes, id, reason string) (int, error) {
	return s.revokeWhere(tx, ch, reason, func(g *grantRecord) bool { return g.ClientID == id })
}

// appendEvent adds e to the audit trail under the next sequence number.
func appendEvent(tx *kv.Tx, e Event) error {
	b := tx.Bucket(BucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return put(b, kv.Key(seq), e)
}

// RevokeGrant revokes a grant (a refresh-token family): its refresh tokens
// are refused and GrantActive reports false at once, so its access tokens
// stop working. Revoking a revoked grant does nothing; an unknown id is
// ErrInvalidGrant. This is how an access token presented at the revocation
// endpoint is revoked: by its grant_id claim.
func (s *Store) RevokeGrant(id string) error {
	return s.update("revoke grant", func(tx *kv.Tx, ch *changes) error {
		g, err := getGrant(tx.Bucket(BucketGrants), id)
		if err != nil || g == nil {
			return orInvalidGrant(err)
		}
		if g.RevokedAt != nil {
			return nil
		}
		return s.revokeRecord(tx, ch, id, g, EventRevoked, "grant revoked", s.cfg.Now())
	})
}

// RevokeClient revokes every grant of a client, which stays registered (it
// may be authorized again), and returns how many it revoked. An unknown
// client is ErrInvalidClient.
func (s *Store) RevokeClient(clientID string) (int, error) {
	var n int
	err := s.update("revoke client", func(tx *kv.Tx, ch *changes) error {
		if _, err := getClient(tx.Bucket(BucketClients), clientID); err != nil {
			return err
		}
		var err error
		n, err = s.revokeClientGrants(tx, ch, clientID, "client revoked")
		return err
	})
	return n, err
}

// RevokeToken revokes the family of a refresh token, active or not (RFC 7009
// §2.1: revoking a refresh token also invalidates the access tokens of the
// same grant). An unknown or already revoked token is not an error (§2.2).
// Whoever holds a refresh token may revoke it: it proves as much as using it
// would, so the requesting client_id is not compared.
func (s *Store) RevokeToken(rt string) error {
	hash := token.HashToken(rt)
	return s.update("revoke token", func(tx *kv.Tx, ch *changes) error {
		rec, err := get[refreshRecord](tx.Bucket(BucketRefresh), hash[:])
		if err != nil || rec == nil {
			return err
		}
		return s.revokeFamily(tx, ch, rec.GrantID, EventRevoked, "refresh token revoked", s.cfg.Now())
	})
}

// RevokeAll revokes every live grant, in one Update, and returns how many it
// revoked (AS-17 "revoke-all"): every refresh token is refused and every
// access token fails GrantActive. Clients stay registered.
func (s *Store) RevokeAll() (int, error) {
	var n int
	err := s.update("revoke all", func(tx *kv.Tx, ch *changes) error {
		var err error
		n, err = s.revokeWhere(tx, ch, "all grants revoked", func(*grantRecord) bool { return true })
		return err
	})
	return n, err
}

// Events returns the newest limit audit events, newest first; all of them
// when limit ≤ 0.
func (s *Store) Events(limit int) ([]Event, error) {
	var out []Event
	err := s.db.View(func(tx *kv.Tx) error {
		c := tx.Bucket(BucketAudit).Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("audit event %d: %w", kv.ID(k), err)
			}
			e.Seq = kv.ID(k)
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit events: %w", err)
	}
	return out, nil
}
