// This file implements password storage and verification following the
// OWASP Password Storage Cheat Sheet: argon2id (RFC 9106) with m=19 MiB,
// t=2, p=1, encoded as a PHC string, with bcrypt hashes also accepted.

package login

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// The argon2id parameters HashPassword uses (OWASP's first recommendation).
const (
	argonMemory  = 19456 // KiB
	argonTime    = 2
	argonThreads = 1
	argonSaltLen = 16
	argonKeyLen  = 32
)

// Bounds on the parameters of a configured argon2id hash, so that a
// mistyped hash cannot make each check take gigabytes or minutes.
const (
	maxArgonMemory  = 256 * 1024 // KiB
	maxArgonTime    = 10
	maxArgonThreads = 16
)

// DefaultConcurrency is how many password checks a Verifier runs at once.
// Each argon2id check with the default parameters holds 19 MiB.
const DefaultConcurrency = 2

// PlainTextWarning is the warning NewVerifier returns for a plain-text secret.
const PlainTextWarning = "OWNSONA_LOGIN_PASSWORD is plain text; use ownsona hash-password"

// ErrBusy is returned by Verifier.Check when its context ends before one of
// the DefaultConcurrency check slots frees up. The login page answers 503.
var ErrBusy = errors.New("too many password checks in progress")

// HashPassword returns an argon2id PHC string for pw with a fresh random
// salt: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded base64). It
// fails only for an empty password.
func HashPassword(pw string) (string, error) {
	if pw == "" {
		return "", errors.New("hash password: empty password")
	}
	salt := make([]byte, argonSaltLen)
	rand.Read(salt) // never fails (crypto/rand since Go 1.24)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// GeneratePassword returns a new random password of 26 characters from the
// base32 alphabet (A–Z, 2–7), about 130 bits, for a first start without a
// configured password. Store only HashPassword's result.
func GeneratePassword() string {
	return rand.Text()
}

// Verifier checks the owner's username and password. It keeps the SHA-256
// digest of the username and the password's hash, never the password. It is
// safe for concurrent use; at most DefaultConcurrency checks run at once.
type Verifier struct {
	user [sha256.Size]byte
	sem  chan struct{}
	mu   sync.RWMutex // guards kdf, which SetHash replaces
	// kdf runs the full key derivation for pw and reports whether it matches
	// the stored hash. Tests wrap it to count calls.
	kdf func(pw []byte) bool
}

// NewVerifier returns a Verifier for username and secret, where secret is
//
//   - an argon2id PHC string such as HashPassword returns (preferred);
//   - a bcrypt hash ($2a$, $2b$ or $2y$);
//   - anything else, taken as the password in plain text: it is hashed here
//     with HashPassword, the Verifier keeps only the hash, and warn is
//     PlainTextWarning for the caller to log.
//
// A secret that starts with "$argon2" or a bcrypt prefix but does not parse
// (a truncated copy, argon2i, parameters out of bounds) is an error rather
// than a plain-text password. An empty username or secret is an error. Error
// messages never contain the secret.
func NewVerifier(username, secret string) (v *Verifier, warn string, err error) {
	if username == "" {
		return nil, "", errors.New("login verifier: empty username")
	}
	if secret == "" {
		return nil, "", errors.New("login verifier: empty password")
	}
	v = &Verifier{user: sha256.Sum256([]byte(username)), sem: make(chan struct{}, DefaultConcurrency)}
	if v.kdf, warn, err = kdfFor(secret); err != nil {
		return nil, "", fmt.Errorf("login verifier: %w", err)
	}
	return v, warn, nil
}

// kdfFor returns the check of a password against secret, as NewVerifier reads it.
func kdfFor(secret string) (kdf func(pw []byte) bool, warn string, err error) {
	switch {
	case strings.HasPrefix(secret, "$argon2"):
		h, err := parseArgon2id(secret)
		if err != nil {
			return nil, "", err
		}
		return h.verify, "", nil
	case isBcrypt(secret):
		hash := []byte(secret)
		if _, err := bcrypt.Cost(hash); err != nil {
			return nil, "", errors.New("malformed bcrypt hash")
		}
		return func(pw []byte) bool { return bcrypt.CompareHashAndPassword(hash, pw) == nil }, "", nil
	}
	phc, err := HashPassword(secret)
	if err != nil {
		return nil, "", err
	}
	h, err := parseArgon2id(phc)
	if err != nil {
		return nil, "", err
	}
	return h.verify, PlainTextWarning, nil
}

// SetHash makes v check passwords against hash from now on — an argon2id PHC
// string or a bcrypt hash; plain text is refused — for a password changed
// while the server runs. The username stays; checks already running finish
// against the old password. The error never contains the hash.
func (v *Verifier) SetHash(hash string) error {
	if hash == "" || !strings.HasPrefix(hash, "$argon2") && !isBcrypt(hash) {
		return errors.New("set password hash: not an argon2id or bcrypt hash")
	}
	kdf, _, err := kdfFor(hash)
	if err != nil {
		return fmt.Errorf("set password hash: %w", err)
	}
	v.mu.Lock()
	v.kdf = kdf
	v.mu.Unlock()
	return nil
}

// Check reports whether user and pw are the owner's. It always runs the
// full key derivation, also for a wrong username, and compares usernames as
// fixed-length SHA-256 digests with subtle.ConstantTimeCompare, so a wrong
// username and a wrong password take the same time and give the same
// answer. It waits for a free check slot until ctx ends and then returns
// ErrBusy; that is its only error.
func (v *Verifier) Check(ctx context.Context, user, pw string) (bool, error) {
	if ctx.Err() != nil {
		return false, ErrBusy
	}
	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return false, ErrBusy
	}
	defer func() { <-v.sem }()
	digest := sha256.Sum256([]byte(user))
	userOK := subtle.ConstantTimeCompare(digest[:], v.user[:]) == 1
	v.mu.RLock()
	kdf := v.kdf
	v.mu.RUnlock()
	pwOK := kdf([]byte(pw))
	return userOK && pwOK, nil
}

func isBcrypt(s string) bool {
	return strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")
}

// argon2idHash is a parsed PHC string.
type argon2idHash struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func (h argon2idHash) verify(pw []byte) bool {
	got := argon2.IDKey(pw, h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// parseArgon2id parses $argon2id$v=19$m=M,t=T,p=P$salt$key, the format of
// the PHC string specification and of the argon2 reference implementation,
// with the parameters in that order and unpadded standard base64.
func parseArgon2id(s string) (argon2idHash, error) {
	var h argon2idHash
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" {
		return h, errors.New("malformed argon2id hash: want $argon2id$v=19$m=…,t=…,p=…$salt$hash")
	}
	if parts[1] != "argon2id" {
		return h, errors.New("unsupported password hash: only argon2id is accepted")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return h, errors.New("unsupported argon2id version: want v=19")
	}
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return h, errors.New("malformed argon2id parameters: want m=…,t=…,p=…")
	}
	m, err1 := param(params[0], "m", 1, maxArgonMemory)
	t, err2 := param(params[1], "t", 1, maxArgonTime)
	p, err3 := param(params[2], "p", 1, maxArgonThreads)
	if err := errors.Join(err1, err2, err3); err != nil {
		return h, err
	}
	if m < 8*p {
		return h, errors.New("argon2id parameter m must be at least 8*p")
	}
	salt, err := base64.RawStdEncoding.Strict().DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return h, errors.New("malformed argon2id salt")
	}
	key, err := base64.RawStdEncoding.Strict().DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return h, errors.New("malformed argon2id hash value")
	}
	return argon2idHash{memory: uint32(m), time: uint32(t), threads: uint8(p), salt: salt, key: key}, nil
}

func param(kv, name string, lo, hi uint64) (uint64, error) {
	v, ok := strings.CutPrefix(kv, name+"=")
	if !ok {
		return 0, fmt.Errorf("malformed argon2id parameters: want %s=", name)
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("argon2id parameter %s must be between %d and %d", name, lo, hi)
	}
	return n, nil
}
