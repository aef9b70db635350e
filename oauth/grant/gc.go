package grant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// GCStats counts what GC removed.
type GCStats struct {
	Clients       int // abandoned registrations
	Codes         int // expired codes
	Grants        int // revoked or expired families
	RefreshTokens int // tokens of removed families
	Windows       int // sealed successors whose grace window had passed
	Events        int // audit events beyond MaxEvents
}

// GC removes, in one Update, as of now:
//   - clients never authorized UnauthorizedClientTTL (24h) after they
//     registered, and clients unused for UnusedClientTTL (90 days), revoking
//     their grants (AS-29);
//   - codes expired more than Retention ago;
//   - families revoked, or past Config.RefreshMax or Config.RefreshIdle,
//     more than Retention ago, with their refresh tokens;
//   - the oldest audit events beyond MaxEvents;
//   - sealed successors whose grace window has passed (CloseWindows).
//
// Run it at startup and then periodically (hourly is plenty).
func (s *Store) GC(now time.Time) (GCStats, error) {
	var st GCStats
	err := s.update("gc", func(tx *kv.Tx, ch *changes) error {
		st = GCStats{}
		var err error
		if st.Clients, err = s.gcClients(tx, ch, now); err != nil {
			return err
		}
		if st.Codes, err = gcBucket(tx.Bucket(BucketCodes), func(k, v []byte) (bool, error) {
			var c codeRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return false, fmt.Errorf("code %x: %w", k, err)
			}
			return now.Sub(c.ExpiresAt) > Retention, nil
		}); err != nil {
			return err
		}
		dead := make(map[string]bool)
		if st.Grants, err = gcBucket(tx.Bucket(BucketGrants), func(k, v []byte) (bool, error) {
			var g grantRecord
			if err := json.Unmarshal(v, &g); err != nil {
				return false, fmt.Errorf("grant %q: %w", k, err)
			}
			gone := g.RevokedAt != nil && now.Sub(*g.RevokedAt) > Retention ||
				now.Sub(g.CreatedAt) > s.cfg.RefreshMax+Retention ||
				now.Sub(g.RefreshedAt) > s.cfg.RefreshIdle+Retention
			if gone {
				dead[string(k)] = true
			}
			return gone, nil
		}); err != nil {
			return err
		}
		for id := range dead {
			ch.removed = append(ch.removed, id)
		}
		gb := tx.Bucket(BucketGrants)
		if st.RefreshTokens, err = gcBucket(tx.Bucket(BucketRefresh), func(k, v []byte) (bool, error) {
			var r refreshRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return false, fmt.Errorf("refresh token %x: %w", k, err)
			}
			return dead[r.GrantID] || gb.Get([]byte(r.GrantID)) == nil, nil
		}); err != nil {
			return err
		}
		if st.Events, err = gcEvents(tx.Bucket(BucketAudit)); err != nil {
			return err
		}
		st.Windows, err = s.closeWindows(tx, now)
		return err
	})
	return st, err
}

// gcClients removes abandoned clients and revokes their grants.
func (s *Store) gcClients(tx *kv.Tx, ch *changes, now time.Time) (int, error) {
	b := tx.Bucket(BucketClients)
	var ids []string
	err := b.ForEach(func(k, v []byte) error {
		var c clientRecord
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("client %q: %w", k, err)
		}
		if c.AuthorizedAt == nil && now.Sub(c.CreatedAt) > UnauthorizedClientTTL ||
			now.Sub(c.LastUsedAt) > UnusedClientTTL {
			ids = append(ids, string(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, err := s.revokeClientGrants(tx, ch, id, "unused client removed"); err != nil {
			return 0, err
		}
		if err := b.Delete([]byte(id)); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// gcBucket deletes the keys of b for which drop is true and returns how many.
func gcBucket(b *kv.Bucket, drop func(k, v []byte) (bool, error)) (int, error) {
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		ok, err := drop(k, v)
		if ok {
			keys = append(keys, bytes.Clone(k))
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// gcEvents deletes the oldest audit events beyond MaxEvents.
func gcEvents(b *kv.Bucket) (int, error) {
	extra := b.Stats() - MaxEvents
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil && n < extra; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
