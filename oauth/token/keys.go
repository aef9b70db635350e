package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/ownsona/ownsona/kv"
)

// Algorithm is a JWS signature algorithm that ownsona signs and accepts.
type Algorithm string

// The only two algorithms: Verify refuses every other one.
const (
	EdDSA Algorithm = "EdDSA" // Ed25519, the default signing algorithm
	ES256 Algorithm = "ES256" // ECDSA P-256 with SHA-256
)

const (
	// MaxAccessTokenTTL is the longest access-token lifetime Mint allows (exp − now).
	// Configured lifetimes must not exceed it.
	MaxAccessTokenTTL = 24 * time.Hour
	// MaxLeeway is the largest clock-skew allowance Verify applies; a larger
	// Expect.Leeway is cut to it.
	MaxLeeway = 60 * time.Second
	// RetireAfter is how long a key that Rotate replaced keeps verifying tokens and
	// stays in JWKS: every token it signed has expired by then.
	RetireAfter = MaxAccessTokenTTL + MaxLeeway
)

// Bucket is the bucket of the database file that holds the signing keys.
const Bucket = "oauth_keys"

// Key states in the file.
const (
	stateActive   = "active"   // the one key that signs
	stateStandby  = "standby"  // published and verifying, of the other algorithm
	stateRetiring = "retiring" // published and verifying until RetireAt
)

// record is a key as stored in the file, under its kid.
type record struct {
	KID      string    `json:"kid"`
	Alg      Algorithm `json:"alg"`
	State    string    `json:"state"`
	Created  int64     `json:"created"`             // unix seconds
	RetireAt int64     `json:"retire_at,omitempty"` // unix seconds, retiring keys only
	PKCS8    []byte    `json:"pkcs8"`               // the private key, unencrypted (ST-14)
}

// key is a parsed record.
type key struct {
	kid      string
	alg      Algorithm
	state    string
	created  time.Time
	retireAt time.Time
	priv     crypto.Signer
	pub      crypto.PublicKey
}

// usable reports whether k may still verify at now.
func (k *key) usable(now time.Time) bool {
	return k.state != stateRetiring || now.Before(k.retireAt)
}

// Keys is the set of signing keys kept in the database file: one active key
// that signs (Mint), and the keys that verify (Verify) and are published
// (JWKS). It is safe for concurrent use. See the package doc for the file
// layout and the ST-14 caveat.
type Keys struct {
	db  *kv.DB
	now func() time.Time

	// failpoint, when set by tests, runs inside Rotate's Update after all its
	// writes; an error or panic from it must roll the rotation back.
	failpoint func() error

	mu     sync.RWMutex
	active *key
	byKID  map[string]*key
	order  []*key // active first, then newest first
}

// OpenKeys loads the signing keys from db's bucket "oauth_keys", creating the
// bucket and generating an Ed25519 (active) and a P-256 (standby) key in one
// Update when there are none, and deleting keys whose retirement has passed.
// now is the clock (time.Now if nil). It fails if the file holds keys but not
// exactly one active key, or a key it cannot parse.
func OpenKeys(db *kv.DB, now func() time.Time) (*Keys, error) {
	if now == nil {
		now = time.Now
	}
	k := &Keys{db: db, now: now}
	err := db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(Bucket)
		if err != nil {
			return err
		}
		recs, err := readRecords(b)
		if err != nil {
			return err
		}
		t := now()
		if len(recs) == 0 {
			return putGeneration(b, EdDSA, t)
		}
		if err := checkOneActive(recs); err != nil {
			return err
		}
		return prune(b, recs, t)
	})
	if err != nil {
		return nil, fmt.Errorf("open keys: %w", err)
	}
	if err := k.load(); err != nil {
		return nil, fmt.Errorf("open keys: %w", err)
	}
	return k, nil
}

// Rotate makes a new key of the active key's algorithm the active signing key
// (with a new standby key of the other algorithm) and marks every previous key
// retiring, in one Update: after an error nothing has changed. New tokens
// carry the new kid at once; tokens signed by the old keys verify until
// RetireAfter has passed.
func (k *Keys) Rotate() error {
	k.mu.RLock()
	alg := k.active.alg
	k.mu.RUnlock()
	return k.RotateTo(alg)
}

// RotateTo is Rotate with the algorithm of the new active key chosen: EdDSA or
// ES256. Switching algorithms is a rotation, so the new kid signs at once.
func (k *Keys) RotateTo(alg Algorithm) error {
	if alg != EdDSA && alg != ES256 {
		return fmt.Errorf("rotate keys: %w: %q", ErrAlgorithm, alg)
	}
	err := k.db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(Bucket)
		if b == nil {
			return errors.New("no bucket " + Bucket)
		}
		recs, err := readRecords(b)
		if err != nil {
			return err
		}
		if err := checkOneActive(recs); err != nil {
			return err
		}
		t := k.now()
		retireAt := t.Add(RetireAfter).Unix()
		for _, r := range recs {
			if r.State == stateRetiring {
				continue
			}
			r.State, r.RetireAt = stateRetiring, retireAt
			if err := putRecord(b, r); err != nil {
				return err
			}
		}
		if err := prune(b, recs, t); err != nil {
			return err
		}
		if err := putGeneration(b, alg, t); err != nil {
			return err
		}
		if k.failpoint != nil {
			return k.failpoint()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rotate keys: %w", err)
	}
	if err := k.load(); err != nil {
		return fmt.Errorf("rotate keys: %w", err)
	}
	return nil
}

// JWKS returns the JSON Web Key Set (RFC 7517) of the public keys that verify
// now: each with kid, alg and use "sig", the active key first. It never
// contains private key material.
func (k *Keys) JWKS() []byte {
	now := k.now()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	k.mu.RLock()
	for _, key := range k.order {
		if key.usable(now) {
			set.Keys = append(set.Keys, jose.JSONWebKey{
				Key: key.pub, KeyID: key.kid, Algorithm: string(key.alg), Use: "sig",
			})
		}
	}
	k.mu.RUnlock()
	b, err := json.Marshal(set)
	if err != nil { // only for key types we never create
		return []byte(`{"keys":[]}`)
	}
	return b
}

// ActiveKID returns the kid of the key that Mint signs with.
func (k *Keys) ActiveKID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.active.kid
}

// lookup returns the key named kid if it may verify at now.
func (k *Keys) lookup(kid string, now time.Time) *key {
	k.mu.RLock()
	key := k.byKID[kid]
	k.mu.RUnlock()
	if key == nil || !key.usable(now) {
		return nil
	}
	return key
}

// load replaces the in-memory key set with the file's.
func (k *Keys) load() error {
	var recs []*record
	err := k.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(Bucket)
		if b == nil {
			return errors.New("no bucket " + Bucket)
		}
		var err error
		recs, err = readRecords(b)
		return err
	})
	if err != nil {
		return err
	}
	if err := checkOneActive(recs); err != nil {
		return err
	}
	byKID := make(map[string]*key, len(recs))
	order := make([]*key, 0, len(recs))
	var active *key
	for _, r := range recs {
		key, err := parseRecord(r)
		if err != nil {
			return err
		}
		byKID[key.kid] = key
		order = append(order, key)
		if key.state == stateActive {
			active = key
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if (order[i] == active) != (order[j] == active) {
			return order[i] == active
		}
		return order[i].created.After(order[j].created)
	})
	k.mu.Lock()
	k.active, k.byKID, k.order = active, byKID, order
	k.mu.Unlock()
	return nil
}

func readRecords(b *kv.Bucket) ([]*record, error) {
	var recs []*record
	err := b.ForEach(func(kid, v []byte) error {
		r := new(record)
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("key %q: %w", kid, err)
		}
		if r.KID != string(kid) {
			return fmt.Errorf("key %q: record names kid %q", kid, r.KID)
		}
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

func checkOneActive(recs []*record) error {
	n := 0
	for _, r := range recs {
		if r.State == stateActive {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%d active signing keys in %s, want 1", n, Bucket)
	}
	return nil
}

// prune deletes the retiring keys whose retirement has passed at now.
func prune(b *kv.Bucket, recs []*record, now time.Time) error {
	for _, r := range recs {
		if r.State == stateRetiring && !now.Before(time.Unix(r.RetireAt, 0)) {
			if err := b.Delete([]byte(r.KID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// putGeneration generates and stores a new Ed25519 and a new P-256 key; the
// one of algorithm active becomes the active key, the other is on standby.
func putGeneration(b *kv.Bucket, active Algorithm, now time.Time) error {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		r, err := generate(alg, now)
		if err != nil {
			return err
		}
		r.State = stateStandby
		if alg == active {
			r.State = stateActive
		}
		if err := putRecord(b, r); err != nil {
			return err
		}
	}
	return nil
}

func putRecord(b *kv.Bucket, r *record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.Put([]byte(r.KID), v)
}

func generate(alg Algorithm, now time.Time) (*record, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("generate key: %w: %q", ErrAlgorithm, alg)
	}
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", alg, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", alg, err)
	}
	return &record{KID: newKID(), Alg: alg, Created: now.Unix(), PKCS8: der}, nil
}

func parseRecord(r *record) (*key, error) {
	p, err := x509.ParsePKCS8PrivateKey(r.PKCS8)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", r.KID, err)
	}
	k := &key{
		kid: r.KID, alg: r.Alg, state: r.State,
		created: time.Unix(r.Created, 0), retireAt: time.Unix(r.RetireAt, 0),
	}
	switch p := p.(type) {
	case ed25519.PrivateKey:
		if r.Alg != EdDSA {
			return nil, fmt.Errorf("key %q: Ed25519 key with alg %q", r.KID, r.Alg)
		}
		k.priv, k.pub = p, p.Public()
	case *ecdsa.PrivateKey:
		if r.Alg != ES256 || p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("key %q: ECDSA key with alg %q", r.KID, r.Alg)
		}
		k.priv, k.pub = p, &p.PublicKey
	default:
		return nil, fmt.Errorf("key %q: unsupported key type %T", r.KID, p)
	}
	switch r.State {
	case stateActive, stateStandby, stateRetiring:
	default:
		return nil, fmt.Errorf("key %q: unknown state %q", r.KID, r.State)
	}
	return k, nil
}

// newKID returns 128 random bits, base64url without padding (22 characters).
func newKID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go ≥1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
