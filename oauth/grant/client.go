// This file keeps the public clients of RFC 7591, "OAuth 2.0 Dynamic Client
// Registration Protocol": registration, lookup, deletion and the garbage
// collection of abandoned registrations (SECURITY.md AS-29).

package grant

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// ClientIDPrefix starts every client_id, so that one is never mistaken for
// a client ID metadata document URL (it never starts with "https://").
const ClientIDPrefix = "cl_"

// ClientMeta is what a registration asks for. It is stored as given:
// validating redirect URIs and the name is the caller's job (package policy).
type ClientMeta struct {
	Name         string   // client_name, shown on the consent page
	RedirectURIs []string // redirect_uris
}

// Client is a registered public client (token_endpoint_auth_method "none":
// it has no secret).
type Client struct {
	ID           string   // client_id: ClientIDPrefix and 144 random bits
	Name         string   // client_name
	RedirectURIs []string // redirect_uris, as registered
	CreatedAt    time.Time
	// LastUsedAt is the last time the client was issued a code or tokens;
	// CreatedAt until then.
	LastUsedAt time.Time
	// AuthorizedAt is the first time the owner approved the client (IssueCode);
	// nil until then.
	AuthorizedAt *time.Time
}

type clientRecord struct {
	Name         string     `json:"name"`
	RedirectURIs []string   `json:"redirect_uris"`
	CreatedAt    time.Time  `json:"created_at"`
	LastUsedAt   time.Time  `json:"last_used_at"`
	AuthorizedAt *time.Time `json:"authorized_at,omitempty"`
}

func (r *clientRecord) client(id string) *Client {
	return &Client{
		ID:           id,
		Name:         r.Name,
		RedirectURIs: slices.Clone(r.RedirectURIs),
		CreatedAt:    r.CreatedAt,
		LastUsedAt:   r.LastUsedAt,
		AuthorizedAt: r.AuthorizedAt,
	}
}

// RegisterClient registers a public client with a new random client_id. When
// Config.MaxClients are registered it takes the place of the oldest client that
// was never authorized, and fails with ErrTooManyClients when there is none.
func (s *Store) RegisterClient(meta ClientMeta) (*Client, error) {
	now := s.cfg.Now()
	id := ClientIDPrefix
	rec := &clientRecord{
		Name:         meta.Name,
		RedirectURIs: slices.Clone(meta.RedirectURIs),
		CreatedAt:    now,
		LastUsedAt:   now,
	}
	err := s.update("register client", func(tx *kv.Tx, _ *changes) error {
		b := tx.Bucket(BucketClients)
		if err := s.makeRoom(b, ClientIDPrefix); err != nil {
			return err
		}
		id = randomID(ClientIDPrefix)
		for b.Get([]byte(id)) != nil { // 2^-144: never, but cheap to rule out
			id = randomID(ClientIDPrefix)
		}
		return put(b, []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.client(id), nil
}

// PutMetadataClient records a client identified by the URL of its client ID
// metadata document (id starts with "https://"), with the name and redirect
// URIs its document holds now, in one Update. The authorization server calls
// it whenever it has fetched and checked the document, so the record follows
// the document; codes and grants then work as for a registered client, and GC
// removes the record when the client is abandoned. Metadata clients have a
// table of their own, bounded by Config.MaxClients like the registered ones: a
// flood of registrations never keeps a first-time Claude.ai connector out.
func (s *Store) PutMetadataClient(id string, meta ClientMeta) (*Client, error) {
	if !strings.HasPrefix(id, "https://") {
		return nil, fmt.Errorf("put metadata client: %q is not a metadata document URL", id)
	}
	var rec *clientRecord
	err := s.update("put metadata client", func(tx *kv.Tx, _ *changes) error {
		b := tx.Bucket(BucketClients)
		old, err := get[clientRecord](b, []byte(id))
		if err != nil {
			return err
		}
		now := s.cfg.Now()
		switch {
		case old != nil:
			rec = old
		default:
			if err := s.makeRoom(b, "https://"); err != nil {
				return err
			}
			rec = &clientRecord{CreatedAt: now, LastUsedAt: now}
		}
		rec.Name = meta.Name
		rec.RedirectURIs = slices.Clone(meta.RedirectURIs)
		return put(b, []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.client(id), nil
}

// Client returns the client registered as id, or ErrInvalidClient.
func (s *Store) Client(id string) (*Client, error) {
	var c *Client
	err := s.db.View(func(tx *kv.Tx) error {
		rec, err := getClient(tx.Bucket(BucketClients), id)
		if err != nil {
			return err
		}
		c = rec.client(id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Clients returns every registered client, in client_id order.
func (s *Store) Clients() ([]*Client, error) {
	var cs []*Client
	err := s.db.View(func(tx *kv.Tx) error {
		return tx.Bucket(BucketClients).ForEach(func(k, v []byte) error {
			var rec clientRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("client %q: %w", k, err)
			}
			cs = append(cs, rec.client(string(k)))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return cs, nil
}

// DeleteClient removes the client and revokes every grant it holds (each with
// an audit event), in one Update. An unknown id is ErrInvalidClient. Codes
// issued to it can no longer be exchanged: the client is unknown.
func (s *Store) DeleteClient(id string) error {
	err := s.update("delete client", func(tx *kv.Tx, ch *changes) error {
		b := tx.Bucket(BucketClients)
		if _, err := getClient(b, id); err != nil {
			return err
		}
		if _, err := s.revokeClientGrants(tx, ch, id, "client deleted"); err != nil {
			return err
		}
		return b.Delete([]byte(id))
	})
	return err
}

// makeRoom makes sure the clients whose ids start with prefix (ClientIDPrefix
// for registered clients, "https://" for metadata documents) number fewer than
// Config.MaxClients, by deleting the oldest that was never authorized (it holds
// no grant); ErrTooManyClients when every one was authorized. Keys sort, so
// one kind is one contiguous range: a walk of at most MaxClients records, in
// the registration's own Update.
func (s *Store) makeRoom(b *kv.Bucket, prefix string) error {
	n := 0
	var oldest []byte
	var oldestAt time.Time
	c := b.Cursor()
	for k, v := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
		n++
		var rec clientRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("client %q: %w", k, err)
		}
		if rec.AuthorizedAt == nil && (oldest == nil || rec.CreatedAt.Before(oldestAt)) {
			oldest, oldestAt = slices.Clone(k), rec.CreatedAt
		}
	}
	switch {
	case n < s.cfg.MaxClients:
		return nil
	case oldest == nil:
		return ErrTooManyClients
	}
	return b.Delete(oldest)
}

// getClient returns the record of client id, or ErrInvalidClient.
func getClient(b *kv.Bucket, id string) (*clientRecord, error) {
	if id == "" {
		return nil, ErrInvalidClient
	}
	rec, err := get[clientRecord](b, []byte(id))
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, ErrInvalidClient
	}
	return rec, nil
}

// touchClient records that client id was used at now, and authorized when
// authorized is set and it had not been before.
func touchClient(b *kv.Bucket, id string, rec *clientRecord, now time.Time, authorized bool) error {
	rec.LastUsedAt = now
	if authorized && rec.AuthorizedAt == nil {
		rec.AuthorizedAt = timePtr(now)
	}
	return put(b, []byte(id), rec)
}
