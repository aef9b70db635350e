package policy

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestCheckResponseType_Table(t *testing.T) {
	tests := []struct {
		rt   string
		want string // error code, "" for accepted
	}{
		{"code", ""},
		{"", CodeInvalidRequest},
		{"token", CodeUnsupportedResponseType},
		{"code id_token", CodeUnsupportedResponseType},
		{"id_token", CodeUnsupportedResponseType},
		{"Code", CodeUnsupportedResponseType},
	}
	for _, tt := range tests {
		if got := CodeOf(CheckResponseType(tt.rt)); got != tt.want {
			t.Errorf("CheckResponseType(%q) code = %q, want %q", tt.rt, got, tt.want)
		}
	}
}

func TestCheckGrantType_Table(t *testing.T) {
	tests := []struct {
		gt   string
		want string
	}{
		{"authorization_code", ""},
		{"refresh_token", ""},
		{"", CodeInvalidRequest},
		{"password", CodeUnsupportedGrantType},
		{"client_credentials", CodeUnsupportedGrantType},
		{"implicit", CodeUnsupportedGrantType},
		{"urn:ietf:params:oauth:grant-type:device_code", CodeUnsupportedGrantType},
		{"urn:ietf:params:oauth:grant-type:token-exchange", CodeUnsupportedGrantType},
	}
	for _, tt := range tests {
		if got := CodeOf(CheckGrantType(tt.gt)); got != tt.want {
			t.Errorf("CheckGrantType(%q) code = %q, want %q", tt.gt, got, tt.want)
		}
	}
}

func TestOAuthError_Error(t *testing.T) {
	if got, want := Errorf(CodeInvalidGrant, "code %s", "expired").Error(), "invalid_grant: code expired"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&OAuthError{Code: CodeAccessDenied}).Error(), "access_denied"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestOAuthError_HTTPStatus(t *testing.T) {
	tests := []struct {
		code string
		want int
	}{
		{CodeInvalidRequest, http.StatusBadRequest},
		{CodeInvalidGrant, http.StatusBadRequest},
		{CodeInvalidClient, http.StatusUnauthorized},
		{CodeServerError, http.StatusInternalServerError},
		{CodeTemporarilyUnavailable, http.StatusServiceUnavailable},
		{CodeInvalidRedirectURI, http.StatusBadRequest},
	}
	for _, tt := range tests {
		if got := (&OAuthError{Code: tt.code}).HTTPStatus(); got != tt.want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", tt.code, got, tt.want)
		}
	}
}

func TestCodeOf(t *testing.T) {
	wrapped := fmt.Errorf("token: %w", Errorf(CodeInvalidGrant, "x"))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"direct", Errorf(CodeInvalidScope, "x"), CodeInvalidScope},
		{"wrapped", wrapped, CodeInvalidGrant},
		{"other", errors.New("disk full"), CodeServerError},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
