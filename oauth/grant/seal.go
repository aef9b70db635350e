// This file keeps the successor of a just-rotated refresh token for the
// grace window of RFC 9700 §4.14.2 (SECURITY.md AS-12, AS-13) without
// storing a usable token: the successor is sealed with AES-256-GCM (NIST SP
// 800-38D) under a key derived with HKDF-SHA-256 (RFC 5869) from the
// rotated token's plaintext, which the file never holds (only its SHA-256,
// AS-17). Only someone presenting the rotated token can open it.

package grant

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/ownsona/ownsona/oauth/token"
)

// successorInfo is HKDF's info: it ties the key to this one use, so that it
// is never the token's stored hash nor any other key derived from the token.
const successorInfo = "ownsona refresh-token successor v1"

// pendingSuccessor is the successor of a family's last rotation, kept while
// its grace window is open: from the rotation until the successor is used,
// the window's length passes, or the family is revoked. A family has at
// most one, since using the successor closes its parent's window.
type pendingSuccessor struct {
	// Parent is the hash of the rotated token whose replays it answers.
	Parent []byte `json:"parent"`
	// RotatedAt is when Parent was rotated: the window opened.
	RotatedAt time.Time `json:"rotated_at"`
	// Sealed is nonce ‖ AES-GCM(successor), keyed by the parent's plaintext,
	// with the successor's hash as additional data.
	Sealed []byte `json:"sealed"`
	// Replays counts the replays answered, at most MaxReplays.
	Replays int `json:"replays,omitempty"`
}

// open reports whether the window is open at now for a window of grace.
func (p *pendingSuccessor) open(now time.Time, grace time.Duration) bool {
	return p != nil && grace > 0 && now.Sub(p.RotatedAt) <= grace
}

// successorKey derives the sealing key from the parent token's plaintext.
func successorKey(parent string) ([]byte, error) {
	return hkdf.Key(sha256.New, []byte(parent), nil, successorInfo, 32)
}

// sealSuccessor seals successor under parent, binding it to the successor's
// hash.
func sealSuccessor(parent, successor string) ([]byte, error) {
	aead, err := successorAEAD(parent)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(successor)+aead.Overhead())
	_, _ = rand.Read(nonce) // never fails (crypto/rand, Go ≥1.24)
	h := token.HashToken(successor)
	return aead.Seal(nonce, nonce, []byte(successor), h[:]), nil
}

// openSuccessor opens what sealSuccessor sealed with parent, and checks that
// it is the token whose hash is child.
func openSuccessor(parent string, sealed, child []byte) (string, error) {
	aead, err := successorAEAD(parent)
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("open refresh-token successor: sealed copy too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], child)
	if err != nil {
		return "", fmt.Errorf("open refresh-token successor: %w", err)
	}
	if h := token.HashToken(string(plain)); string(h[:]) != string(child) {
		return "", errors.New("open refresh-token successor: not the family's active token")
	}
	return string(plain), nil
}

func successorAEAD(parent string) (cipher.AEAD, error) {
	key, err := successorKey(parent)
	if err != nil {
		return nil, fmt.Errorf("derive successor key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
