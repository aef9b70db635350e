// This file lists grants for the owner's eyes (the console's Connections
// page): what each client was allowed, when, and whether it still is.

package grant

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// GrantInfo is what the owner approved for a client, as the file keeps it.
// It holds no secret: never a refresh token or its hash.
type GrantInfo struct {
	ID       string   // the grant id, the grant_id claim of its access tokens
	ClientID string   // the client it was issued to
	Subject  string   // who approved it
	Scope    []string // the scopes granted, as stored
	Resource string   // the resource (RFC 8707) its tokens are for
	// CreatedAt is when the code exchange created the grant.
	CreatedAt time.Time
	// RefreshedAt is when its current refresh token was issued: the last
	// refresh, or CreatedAt when there was none.
	RefreshedAt time.Time
	// RevokedAt is when the grant was revoked; nil while it is live.
	RevokedAt *time.Time
	// RevokeReason says why, e.g. "client deleted"; empty while it is live.
	RevokeReason string
}

// Grants returns the grants held by clientID, or by every client when
// clientID is empty: live and revoked (until GC deletes them, Retention after
// their end), newest first. An unknown client has none. It reads the file in
// one View and walks every grant, which GC keeps to a few per client.
func (s *Store) Grants(clientID string) ([]GrantInfo, error) {
	var out []GrantInfo
	err := s.db.View(func(tx *kv.Tx) error {
		return tx.Bucket(BucketGrants).ForEach(func(k, v []byte) error {
			var g grantRecord
			if err := json.Unmarshal(v, &g); err != nil {
				return fmt.Errorf("grant %q: %w", k, err)
			}
			if clientID != "" && g.ClientID != clientID {
				return nil
			}
			out = append(out, GrantInfo{ID: string(k), ClientID: g.ClientID, Subject: g.Subject,
				Scope: slices.Clone(g.Scope), Resource: g.Resource, CreatedAt: g.CreatedAt,
				RefreshedAt: g.RefreshedAt, RevokedAt: g.RevokedAt, RevokeReason: g.RevokeReason})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	slices.SortStableFunc(out, func(a, b GrantInfo) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}
