package login

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Bucket is the bucket of the database file that holds the key signing transactions and, in its
// nested bucket "devices", the digests of the device cookies (see Config.DB).
const Bucket = "oauth_login"

var (
	keyTxnKey     = []byte("txn_key")
	bucketDevices = "devices"
)

// maxTxn bounds a transaction token. Start refuses a request whose token would be longer (a
// client's state or name of kilobytes): the token travels in a form of at most maxForm bytes and
// in the URL of PathContinue.
const maxTxn = 4 << 10

// txnVersion is the format of a transaction token; a token of another version is refused.
const txnVersion = 1

// msgCodeWrong is the flash of a login page after a wrong username or password.
const msgCodeWrong = "wrong"

// txn is a pending authorization transaction. No server state exists for it until the owner
// decides: the pages' forms and PathContinue carry it whole, as a token signed by sealer. The
// signature covers the request, the expiry, the session the consent page was shown to and when,
// and the CSRF token is derived from the signature; its ID is recorded as decided (store.markUsed)
// only by a consent POST of a live session.
type txn struct {
	V     int     `json:"v"`
	ID    string  `json:"id"`              // 128 random bits: the transaction, decided at most once
	Exp   int64   `json:"exp"`             // Unix seconds; set by Start, kept by every re-signing
	Sess  string  `json:"s,omitempty"`     // sealer.sessionTag of the session the consent page was shown to; "" on the login page
	Shown int64   `json:"shown,omitempty"` // Unix milliseconds the consent page was rendered
	Msg   string  `json:"m,omitempty"`     // a flash for the login page: msgCodeWrong
	Req   wireReq `json:"r"`
}

// wireReq is a Request in a token.
type wireReq struct {
	ClientID      string   `json:"c"`
	ClientName    string   `json:"n,omitempty"`
	RedirectURI   string   `json:"u"`
	Scope         []string `json:"sc,omitempty"`
	State         string   `json:"st,omitempty"`
	CodeChallenge string   `json:"cc"`
	Resource      string   `json:"rs,omitempty"`
}

func toWire(r Request) wireReq {
	return wireReq{ClientID: r.ClientID, ClientName: r.ClientName, RedirectURI: r.RedirectURI, Scope: slices.Clone(r.Scope),
		State: r.State, CodeChallenge: r.CodeChallenge, Resource: r.Resource}
}

func (w wireReq) request() Request {
	return Request{ClientID: w.ClientID, ClientName: w.ClientName, RedirectURI: w.RedirectURI, Scope: slices.Clone(w.Scope),
		State: w.State, CodeChallenge: w.CodeChallenge, Resource: w.Resource}
}

// expires is the end of t's life.
func (t txn) expires() time.Time { return time.Unix(t.Exp, 0) }

// shownAt is when t's consent page was rendered, or the zero time.
func (t txn) shownAt() time.Time {
	if t.Shown == 0 {
		return time.Time{}
	}
	return time.UnixMilli(t.Shown)
}

// sealer signs and opens transaction tokens and derives the tokens bound to them, each with
// HMAC-SHA256 under one 256-bit key and a label of its own. It is safe for concurrent use.
type sealer struct {
	key []byte
}

// HMAC labels: one per use of the key, so that no value made for one use passes for another.
const (
	labelTxn     = "ownsona login txn v1\x00"
	labelCSRF    = "ownsona login csrf v1\x00"
	labelSession = "ownsona login session v1\x00"
	labelLogout  = "ownsona login logout v1\x00"
)

func (s *sealer) mac(label string, parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// unb64 decodes strictly, so that one value has exactly one encoding.
func unb64(s string) ([]byte, error) { return base64.RawURLEncoding.Strict().DecodeString(s) }

// errTooLarge is seal's error for a token longer than maxTxn.
var errTooLarge = errors.New("transaction too large")

// seal returns t as a token: base64url(JSON) "." base64url(HMAC).
func (s *sealer) seal(t txn) (string, error) {
	t.V = txnVersion
	payload, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	body := b64(payload)
	tok := body + "." + b64(s.mac(labelTxn, body))
	if len(tok) > maxTxn {
		return "", errTooLarge
	}
	return tok, nil
}

// open returns the transaction of tok if tok is a token seal made with this key, of this
// version, not expired at now.
func (s *sealer) open(tok string, now time.Time) (txn, bool) {
	if len(tok) > maxTxn {
		return txn{}, false
	}
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return txn{}, false
	}
	got, err := unb64(sig)
	if err != nil || !hmac.Equal(got, s.mac(labelTxn, body)) {
		return txn{}, false
	}
	payload, err := unb64(body)
	if err != nil {
		return txn{}, false
	}
	var t txn
	if err := json.Unmarshal(payload, &t); err != nil || t.V != txnVersion || t.ID == "" || !now.Before(t.expires()) {
		return txn{}, false
	}
	return t, true
}

// csrf is the CSRF token of the form that carries tok: bound to its signature, so to every
// field of the transaction.
func (s *sealer) csrf(tok string) string {
	_, sig, _ := strings.Cut(tok, ".")
	return b64(s.mac(labelCSRF, sig))
}

// checkCSRF reports whether token is the CSRF token of tok.
func (s *sealer) checkCSRF(tok, token string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(s.csrf(tok)))
}

// sessionTag names the session with digest sess inside a token, without revealing the digest.
func (s *sealer) sessionTag(sess string) string {
	return b64(s.mac(labelSession, sess)[:16])
}

// logoutCSRF is the CSRF token of the sign-out form of the session with digest sess.
func (s *sealer) logoutCSRF(sess string) string {
	return b64(s.mac(labelLogout, sess))
}

// newID returns 128 random bits, base64url-encoded.
func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return b64(b)
}

// loadKey returns the transaction signing key kept in db's Bucket, creating it on a first start;
// with no db, a new random key.
func loadKey(db *kv.DB) ([]byte, error) {
	key := make([]byte, 32)
	rand.Read(key)
	if db == nil {
		return key, nil
	}
	err := db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(Bucket)
		if err != nil {
			return err
		}
		if k := b.Get(keyTxnKey); len(k) == 32 {
			key = k
			return nil
		}
		return b.Put(keyTxnKey, key)
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}
