// Personal access tokens: long-lived bearer tokens for scripts, created on the command line and
// stored only as their SHA-256 (SECURITY.md AS-17, ST-14).

package oauth

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// Buckets of the personal access tokens.
const (
	BucketPATs      = "oauth_pats"       // PAT id → record
	BucketPATHashes = "oauth_pat_hashes" // SHA-256 of the token → PAT id
)

// PATIDPrefix starts every PAT id (the handle that list and revoke use; not a secret).
const PATIDPrefix = "pat_"

// MaxPATNameLen is the longest PAT name, in bytes.
const MaxPATNameLen = 64

// patTouchEvery is how often a PAT's last use is written back to the file: at most once per
// interval, so that a busy script does not turn every request into a write.
const patTouchEvery = time.Minute

var (
	// ErrPATNotFound: no PAT has that id or name.
	ErrPATNotFound = errors.New("no such personal access token")
	// ErrPATExists: a PAT with that name exists already.
	ErrPATExists = errors.New("a personal access token with that name exists already")
)

// PAT is a personal access token as stored and listed: everything but the token itself.
type PAT struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scope      []string   `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	Hash       string     `json:"hash"` // hex SHA-256 of the token
}

// PATs keeps the personal access tokens in the database file.
type PATs struct {
	db  *kv.DB
	now func() time.Time
}

// OpenPATs returns the PAT store of db, creating its buckets.
func OpenPATs(db *kv.DB, now func() time.Time) (*PATs, error) {
	if now == nil {
		now = time.Now
	}
	err := db.Update(func(tx *kv.Tx) error {
		for _, name := range []string{BucketPATs, BucketPATHashes} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open personal access tokens: %w", err)
	}
	return &PATs{db: db, now: now}, nil
}

// checkPATName refuses names that would be ambiguous or unprintable in `ownsona token list`.
func checkPATName(name string) error {
	switch {
	case name == "":
		return errors.New("name: empty; give the token a name that says what uses it, e.g. --name backup-script")
	case len(name) > MaxPATNameLen:
		return fmt.Errorf("name: longer than %d bytes", MaxPATNameLen)
	case strings.HasPrefix(name, PATIDPrefix):
		return fmt.Errorf("name: must not start with %q, which marks token ids", PATIDPrefix)
	case !utf8.ValidString(name):
		return errors.New("name: not valid UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			return errors.New("name: use letters, digits and punctuation, no spaces or control characters")
		}
	}
	return nil
}

// Create makes a new PAT and returns the token ("osk_…", shown once) and its record. ttl ≤ 0
// means it never expires; scope must be valid scopes (policy.ParseScope's result).
func (p *PATs) Create(name string, scope []string, ttl time.Duration) (string, *PAT, error) {
	if err := checkPATName(name); err != nil {
		return "", nil, err
	}
	if len(scope) == 0 {
		return "", nil, errors.New("scope: empty")
	}
	for _, s := range scope {
		if s != policy.ScopeRead && s != policy.ScopeWrite {
			return "", nil, fmt.Errorf("scope: %q is not %s or %s", s, policy.ScopeRead, policy.ScopeWrite)
		}
	}
	tok, hash := token.NewOpaque(token.PrefixPAT)
	var b [9]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	now := p.now().UTC()
	rec := &PAT{ID: PATIDPrefix + hex.EncodeToString(b[:]), Name: name, Scope: slices.Clone(scope),
		CreatedAt: now, Hash: hex.EncodeToString(hash[:])}
	if ttl > 0 {
		exp := now.Add(ttl)
		rec.ExpiresAt = &exp
	}
	err := p.db.Update(func(tx *kv.Tx) error {
		pb := tx.Bucket(BucketPATs)
		found := false
		err := pb.ForEach(func(_, v []byte) error {
			var old PAT
			if err := json.Unmarshal(v, &old); err != nil {
				return err
			}
			found = found || old.Name == name
			return nil
		})
		if err != nil {
			return err
		}
		if found {
			return ErrPATExists
		}
		buf, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := pb.Put([]byte(rec.ID), buf); err != nil {
			return err
		}
		return tx.Bucket(BucketPATHashes).Put(hash[:], []byte(rec.ID))
	})
	if err != nil {
		return "", nil, err
	}
	return tok, rec, nil
}

// List returns every PAT, oldest first.
func (p *PATs) List() ([]*PAT, error) {
	var out []*PAT
	err := p.db.View(func(tx *kv.Tx) error {
		return tx.Bucket(BucketPATs).ForEach(func(_, v []byte) error {
			var rec PAT
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			out = append(out, &rec)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b *PAT) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, err
}

// Revoke deletes the PAT whose id or name is idOrName; it stops working at once.
func (p *PATs) Revoke(idOrName string) (*PAT, error) {
	var gone *PAT
	err := p.db.Update(func(tx *kv.Tx) error {
		pb := tx.Bucket(BucketPATs)
		err := pb.ForEach(func(k, v []byte) error {
			var rec PAT
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			if rec.ID == idOrName || rec.Name == idOrName {
				gone = &rec
			}
			return nil
		})
		if err != nil {
			return err
		}
		if gone == nil {
			return ErrPATNotFound
		}
		h, err := hex.DecodeString(gone.Hash)
		if err != nil {
			return fmt.Errorf("token %s: stored hash: %w", gone.ID, err)
		}
		if err := tx.Bucket(BucketPATHashes).Delete(h); err != nil {
			return err
		}
		return pb.Delete([]byte(gone.ID))
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}

// RevokeToken deletes the PAT tok, as RFC 7009 revocation does: whoever holds a token may end
// it. An unknown token is not an error.
func (p *PATs) RevokeToken(tok string) error {
	if !strings.HasPrefix(tok, token.PrefixPAT) || len(tok) > 128 {
		return nil
	}
	hash := token.HashToken(tok)
	var id []byte
	_ = p.db.View(func(tx *kv.Tx) error {
		id = bytes.Clone(tx.Bucket(BucketPATHashes).Get(hash[:]))
		return nil
	})
	if id == nil {
		return nil
	}
	if _, err := p.Revoke(string(id)); err != nil && !errors.Is(err, ErrPATNotFound) {
		return err
	}
	return nil
}

// Lookup returns the live PAT for tok, or ErrPATNotFound for an unknown, revoked or expired one.
// It records the use (at most once a minute per token).
func (p *PATs) Lookup(tok string) (*PAT, error) {
	if !strings.HasPrefix(tok, token.PrefixPAT) || len(tok) > 128 {
		return nil, ErrPATNotFound
	}
	hash := token.HashToken(tok)
	now := p.now().UTC()
	var rec *PAT
	err := p.db.View(func(tx *kv.Tx) error {
		id := tx.Bucket(BucketPATHashes).Get(hash[:])
		if id == nil {
			return ErrPATNotFound
		}
		v := tx.Bucket(BucketPATs).Get(id)
		if v == nil {
			return ErrPATNotFound
		}
		rec = new(PAT)
		return json.Unmarshal(v, rec)
	})
	if err != nil {
		return nil, err
	}
	stored, err := hex.DecodeString(rec.Hash)
	if err != nil || len(stored) != len(hash) || !token.HashEqual([32]byte(stored), hash) {
		return nil, ErrPATNotFound
	}
	if rec.ExpiresAt != nil && !now.Before(*rec.ExpiresAt) {
		return nil, ErrPATNotFound
	}
	if rec.LastUsedAt == nil || now.Sub(*rec.LastUsedAt) >= patTouchEvery {
		rec.LastUsedAt = &now
		p.touch(rec.ID, now)
	}
	return rec, nil
}

// touch writes a PAT's last use; a failure only loses that timestamp.
func (p *PATs) touch(id string, now time.Time) {
	_ = p.db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(BucketPATs)
		v := b.Get([]byte(id))
		if v == nil {
			return nil // revoked meanwhile
		}
		var rec PAT
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		rec.LastUsedAt = &now
		buf, err := json.Marshal(&rec)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), buf)
	})
}
