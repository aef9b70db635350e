package memory

import (
	"errors"
	"fmt"
	"testing"
)

// TestErrorCode: each error of the store has its code through wrapping, and anything else is
// internal.
func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, ""},
		{"input", Prefix("items[2].", &InputError{Field: "tags[0]", Reason: "is empty"}), CodeInvalid},
		{"secret", fmt.Errorf("remember: %w", &SecretError{Kind: "jwt"}), CodeSecret},
		{"limit", fmt.Errorf("update: %w", &LimitError{Limit: "max-memories", Message: "full"}), CodeLimit},
		{"not found", notFound(7), CodeNotFound},
		{"forgotten", forgotten(7, ""), CodeNotFound},
		{"sentinel", ErrNotFound, CodeNotFound},
		{"other", errors.New("disk on fire"), CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErrorCode(tc.err); got != tc.want {
				t.Errorf("ErrorCode(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
