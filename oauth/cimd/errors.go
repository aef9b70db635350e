package cimd

import (
	"errors"

	"github.com/ownsona/ownsona/oauth/policy"
)

// Kinds of failure. Fetch returns an *Error whose Kind is one of these, so
// errors.Is(err, ErrTooLarge) and the like work on its result.
var (
	// ErrNotMetadataURL: the client_id is not a client identifier URL
	// (IsMetadataURL is false).
	ErrNotMetadataURL = errors.New("client_id is not a metadata document URL")
	// ErrHostNotAllowed: the URL's host is not on Config.AllowedHosts.
	// Nothing was resolved or fetched.
	ErrHostNotAllowed = errors.New("client_id host is not allowed")
	// ErrForbiddenAddress: the host resolved to at least one address that
	// is not public (loopback, private, link-local, CGNAT, …). Nothing was
	// fetched.
	ErrForbiddenAddress = errors.New("client_id host has a non-public address")
	// ErrFetch: resolving, connecting, TLS or reading failed, or
	// Config.Timeout passed.
	ErrFetch = errors.New("metadata document could not be fetched")
	// ErrRedirect: the server answered with a 3xx status, which is never
	// followed.
	ErrRedirect = errors.New("metadata document URL redirects")
	// ErrStatus: the server answered with a status other than 200 or 3xx.
	ErrStatus = errors.New("metadata document status is not 200")
	// ErrContentType: the response's Content-Type is not JSON.
	ErrContentType = errors.New("metadata document is not served as JSON")
	// ErrTooLarge: the body is longer than Config.MaxBytes.
	ErrTooLarge = errors.New("metadata document is too large")
	// ErrInvalidJSON: the body is not one JSON object in valid UTF-8, or an
	// object in it has a duplicate key.
	ErrInvalidJSON = errors.New("metadata document is not valid JSON")
	// ErrClientIDMismatch: the document's client_id is missing or differs
	// from the URL it was fetched from.
	ErrClientIDMismatch = errors.New("metadata document client_id differs from its URL")
	// ErrInvalidMetadata: a field is wrong: redirect_uris missing, empty or
	// refused by policy.ValidateRedirectURI, a bad client_name, a
	// token_endpoint_auth_method other than "none", a client_secret, or a
	// field of the wrong type.
	ErrInvalidMetadata = errors.New("metadata document is invalid")
)

// Error is the error Fetch returns. Its Error text is for logs; the
// *policy.OAuthError in its chain (errors.As, policy.CodeOf) is what a
// client may be shown: code invalid_client, a description naming the kind
// of failure and, for a document the client wrote, what is wrong with it,
// but never addresses or network details.
type Error struct {
	Kind     error  // one of the Err… values above
	ClientID string // the URL that was being fetched
	Detail   string // what exactly failed; may be empty
	Err      error  // the underlying error (network, context), or nil
}

func (e *Error) Error() string {
	s := "cimd: " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Kind, Err (when set) and the OAuth error.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return append(errs, e.OAuth())
}

// OAuth returns the error response for the client: code invalid_client.
func (e *Error) OAuth() *policy.OAuthError {
	switch e.Kind {
	case ErrInvalidJSON, ErrClientIDMismatch, ErrInvalidMetadata, ErrStatus, ErrContentType:
		if e.Detail != "" {
			return policy.Errorf(policy.CodeInvalidClient, "%v: %s", e.Kind, e.Detail)
		}
	}
	return policy.Errorf(policy.CodeInvalidClient, "%v", e.Kind)
}
