// This file implements the metadata document of "OAuth Client ID Metadata
// Document" (draft-ietf-oauth-client-id-metadata-document, section "Client ID
// Metadata Document"): RFC 7591 client metadata, served as JSON at the
// client identifier URL, whose client_id equals that URL.

package cimd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ownsona/ownsona/oauth/policy"
)

// Limits on a document's contents.
const (
	// MaxClientNameLen is the longest client_name accepted, in characters.
	MaxClientNameLen = 128
	// MaxRedirectURIs is the most redirect_uris a document may list.
	MaxRedirectURIs = 32
	// maxDepth is the deepest nesting of arrays and objects accepted.
	maxDepth = 16
)

// Document is a client's metadata as fetched and checked. The fields ownsona
// does not use (grant_types, response_types, scope, contacts, …) are not
// kept.
type Document struct {
	// ClientID is the client identifier URL, equal byte for byte to the
	// document's client_id.
	ClientID string
	// ClientName is the name to show on the consent page; empty if the
	// document has none. It has no control or formatting characters but is
	// not escaped: HTML templates escape it.
	ClientName string
	// ClientURI and LogoURI are https URLs, or empty when the document has
	// none or one that is not a plain https URL (they are only shown, so a
	// bad one is dropped rather than refused).
	ClientURI string
	LogoURI   string
	// RedirectURIs are the registered redirect URIs, each accepted by
	// policy.ValidateRedirectURI, in the document's order. Match the
	// requested one with policy.MatchRedirectURI.
	RedirectURIs []string
	// FetchedAt is when the document was fetched; ExpiresAt is when the
	// cached copy stops being used.
	FetchedAt time.Time
	ExpiresAt time.Time
}

// clone returns a copy of d that shares no memory with it.
func (d *Document) clone() *Document {
	c := *d
	c.RedirectURIs = slices.Clone(d.RedirectURIs)
	return &c
}

// parseDocument checks body, a fetched metadata document, against the
// client identifier URL it was fetched from. It returns an *Error of kind
// ErrInvalidJSON, ErrClientIDMismatch or ErrInvalidMetadata.
func parseDocument(body []byte, clientID string, customSchemes []string) (*Document, error) {
	bad := func(kind error, format string, args ...any) error {
		return &Error{Kind: kind, ClientID: clientID, Detail: fmt.Sprintf(format, args...)}
	}
	if err := checkStrictJSON(body); err != nil {
		return nil, bad(ErrInvalidJSON, "%v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, bad(ErrInvalidJSON, "not a JSON object")
	}

	id, ok, err := stringField(m, "client_id")
	if err != nil {
		return nil, bad(ErrClientIDMismatch, "%v", err)
	}
	if !ok || id != clientID {
		return nil, bad(ErrClientIDMismatch, "client_id in the document is not the URL it was fetched from")
	}
	doc := &Document{ClientID: clientID}

	raw, ok := m["redirect_uris"]
	if !ok {
		return nil, bad(ErrInvalidMetadata, "redirect_uris is missing")
	}
	if err := json.Unmarshal(raw, &doc.RedirectURIs); err != nil || isNull(raw) {
		return nil, bad(ErrInvalidMetadata, "redirect_uris is not an array of strings")
	}
	switch n := len(doc.RedirectURIs); {
	case n == 0:
		return nil, bad(ErrInvalidMetadata, "redirect_uris is empty")
	case n > MaxRedirectURIs:
		return nil, bad(ErrInvalidMetadata, "redirect_uris has more than %d entries", MaxRedirectURIs)
	}
	for i, u := range doc.RedirectURIs {
		if err := policy.ValidateRedirectURI(u, customSchemes); err != nil {
			var oe *policy.OAuthError
			if errors.As(err, &oe) {
				err = errors.New(oe.Description)
			}
			return nil, bad(ErrInvalidMetadata, "redirect_uris[%d]: %v", i, err)
		}
	}

	name, _, err := stringField(m, "client_name")
	if err != nil {
		return nil, bad(ErrInvalidMetadata, "%v", err)
	}
	if reason := checkClientName(name); reason != "" {
		return nil, bad(ErrInvalidMetadata, "client_name %s", reason)
	}
	doc.ClientName = name

	for _, f := range []struct {
		key string
		dst *string
	}{{"client_uri", &doc.ClientURI}, {"logo_uri", &doc.LogoURI}} {
		v, _, err := stringField(m, f.key)
		if err != nil {
			return nil, bad(ErrInvalidMetadata, "%v", err)
		}
		if isDisplayURL(v) {
			*f.dst = v
		}
	}

	method, ok, err := stringField(m, "token_endpoint_auth_method")
	if err != nil {
		return nil, bad(ErrInvalidMetadata, "%v", err)
	}
	if ok && method != "none" {
		return nil, bad(ErrInvalidMetadata, "token_endpoint_auth_method must be \"none\"")
	}
	// The draft forbids shared secrets in a metadata document: anyone can
	// read it.
	for _, k := range []string{"client_secret", "client_secret_expires_at"} {
		if _, ok := m[k]; ok {
			return nil, bad(ErrInvalidMetadata, "%s must not be present", k)
		}
	}
	return doc, nil
}

// stringField returns the string value of key in m and whether it is
// present. A present value that is not a string (null included) is an
// error.
func stringField(m map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := m[key]
	if !ok {
		return "", false, nil
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return "", false, fmt.Errorf("%s is not a string", key)
	}
	return s, true, nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// checkClientName returns why name may not be shown, or "".
func checkClientName(name string) string {
	if utf8.RuneCountInString(name) > MaxClientNameLen {
		return fmt.Sprintf("is longer than %d characters", MaxClientNameLen)
	}
	for _, r := range name {
		// Cf holds the bidirectional overrides and zero-width characters
		// that make one name look like another.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return "contains a control or formatting character"
		}
	}
	return ""
}

// isDisplayURL reports whether s is a plain https URL that may be shown
// or linked: a host, no userinfo or fragment, printable ASCII.
func isDisplayURL(s string) bool {
	if !strings.HasPrefix(s, "https://") || len(s) > policy.MaxRedirectURILen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>' {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.User == nil && u.Host != "" && u.Fragment == "" && !strings.Contains(s, "#")
}

// checkStrictJSON reports an error if body is not exactly one JSON value in
// valid UTF-8, with no object holding the same key twice and no nesting
// deeper than maxDepth. encoding/json alone would replace invalid UTF-8
// with U+FFFD and keep the last of duplicate keys.
func checkStrictJSON(body []byte) error {
	if !utf8.Valid(body) {
		return errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := walkJSON(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// walkJSON reads one value from dec, checking every object in it for
// duplicate keys.
func walkJSON(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("malformed JSON: %w", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return errors.New("JSON nested too deeply")
	}
	switch delim {
	case '{':
		seen := make(map[string]bool)
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("malformed JSON: %w", err)
			}
			key, ok := tok.(string)
			if !ok {
				return errors.New("malformed JSON: object key is not a string")
			}
			if seen[key] {
				return fmt.Errorf("duplicate key %q", key)
			}
			seen[key] = true
			if err := walkJSON(dec, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := walkJSON(dec, depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("malformed JSON: %w", err)
	}
	return nil
}

// CheckJSON reports an error if body is not exactly one strict JSON value: valid UTF-8, no
// duplicate keys, bounded nesting. Dynamic client registration parses its body with it too.
func CheckJSON(body []byte) error { return checkStrictJSON(body) }

// CheckClientName returns why a client_name may not be shown on the consent page (too long, a
// control or formatting character), or "" when it may.
func CheckClientName(name string) string { return checkClientName(name) }
