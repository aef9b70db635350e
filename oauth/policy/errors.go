// This file implements the error responses of RFC 6749 §4.1.2.1 and §5.2,
// with the codes added by RFC 7591 §3.2.2 (registration), RFC 8707 §2
// (invalid_target) and OpenID Connect Core §3.1.2.6 (consent_required,
// login_required).

package policy

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes, as sent in the "error" field of an OAuth error response.
const (
	CodeInvalidRequest          = "invalid_request"
	CodeInvalidClient           = "invalid_client"
	CodeInvalidGrant            = "invalid_grant"
	CodeUnauthorizedClient      = "unauthorized_client"
	CodeUnsupportedGrantType    = "unsupported_grant_type"
	CodeUnsupportedResponseType = "unsupported_response_type"
	CodeInvalidScope            = "invalid_scope"
	CodeInvalidTarget           = "invalid_target"
	CodeAccessDenied            = "access_denied"
	CodeServerError             = "server_error"
	CodeTemporarilyUnavailable  = "temporarily_unavailable"
	CodeConsentRequired         = "consent_required"
	CodeLoginRequired           = "login_required"

	// RFC 7591 §3.2.2, for dynamic client registration.
	CodeInvalidRedirectURI    = "invalid_redirect_uri"
	CodeInvalidClientMetadata = "invalid_client_metadata"
)

// OAuthError is an OAuth error response: Code is the "error" field and
// Description the "error_description" field. Descriptions are written for
// the developer of the client; they never contain a secret, so they may be
// sent as they are.
type OAuthError struct {
	Code        string
	Description string
}

// Errorf returns an *OAuthError with the given code and a formatted
// description.
func Errorf(code, format string, args ...any) *OAuthError {
	return &OAuthError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// Error returns "code: description", or the code alone.
func (e *OAuthError) Error() string {
	if e.Description == "" {
		return e.Code
	}
	return e.Code + ": " + e.Description
}

// HTTPStatus is the status of a JSON error response from the token,
// registration or revocation endpoint carrying e: 401 for invalid_client
// (RFC 6749 §5.2), 500 for server_error, 503 for temporarily_unavailable and
// 400 for everything else. Errors at /authorize are redirects or an error
// page instead, so this does not apply there.
func (e *OAuthError) HTTPStatus() int {
	switch e.Code {
	case CodeInvalidClient:
		return http.StatusUnauthorized
	case CodeServerError:
		return http.StatusInternalServerError
	case CodeTemporarilyUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// CodeOf returns the OAuth error code of err: the Code of the first
// *OAuthError in its chain, "" for a nil err, and server_error for any other
// error.
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	var oe *OAuthError
	if errors.As(err, &oe) {
		return oe.Code
	}
	return CodeServerError
}

// CheckResponseType accepts only the authorization code flow
// (response_type=code, OAuth 2.1 §4.1.1). An empty value is invalid_request;
// anything else, including the implicit flow's "token" and OpenID hybrids
// such as "code id_token", is unsupported_response_type (RFC 9700 §2.1.2).
func CheckResponseType(rt string) error {
	switch rt {
	case "code":
		return nil
	case "":
		return Errorf(CodeInvalidRequest, "response_type is required")
	}
	return Errorf(CodeUnsupportedResponseType, "response_type %q is not supported; use \"code\"", rt)
}

// CheckGrantType accepts authorization_code and refresh_token. An empty
// value is invalid_request; anything else, including password and
// client_credentials, is unsupported_grant_type (RFC 9700 §2.4).
func CheckGrantType(gt string) error {
	switch gt {
	case "authorization_code", "refresh_token":
		return nil
	case "":
		return Errorf(CodeInvalidRequest, "grant_type is required")
	}
	return Errorf(CodeUnsupportedGrantType, "grant_type %q is not supported", gt)
}
