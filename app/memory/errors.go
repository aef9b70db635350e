package memory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ownsona/ownsona/app/memtext"
)

// Sentinel errors of the store. Per-item failures wrap them with the memory's id, so
// errors.Is(err, ErrNotFound) holds and err.Error() reads "memory 7 not found".
var (
	// ErrNotFound: no stored memory has the id (never stored, or hard-deleted).
	ErrNotFound = errors.New("memory not found")
	// ErrForgotten: the memory is soft-deleted, and the operation needs an active one
	// (update, confirm). Get and Forget still see it.
	ErrForgotten = errors.New("memory was forgotten")
)

// InputError is a value a memory may not hold, or an argument an operation cannot take. Field is
// a JSON path such as "text", "tags[1]" or "expires_at"; callers that write several memories at
// once prefix it with Prefix, giving "items[3].tags[1]". Reason completes "<field> …".
type InputError = memtext.InputError

// LimitError is an operation refused at one of the store's limits: a quota of the file
// (Config.MaxMemories, Config.MaxFileBytes) or a bound of one import (ImportOptions). Limit
// names the limit, as the setting that raises it is called where there is one ("max-memories",
// "max-file-mb", "max-upload-mb"), else what it bounds ("import-items"); Message says what was
// reached, the limit, and what to do. Adapters answer it as LIMIT_EXCEEDED.
type LimitError struct {
	Limit   string
	Message string
}

func (e *LimitError) Error() string { return e.Message }

// SecretError is text that looks like a credential (memtext.DetectSecret). Kind names the
// shape ("aws-access-key", "card-number"); the text itself is never repeated.
type SecretError struct{ Kind string }

func (e *SecretError) Error() string {
	return "text looks like a secret (" + e.Kind + ") and was not stored; remember a description of it instead"
}

// Prefix puts prefix before the field of an *InputError (e.g. "items[3]." before "tags[1]";
// an error about the whole item gets "items[3]"); other errors are returned as they are.
func Prefix(prefix string, err error) error {
	var ie *InputError
	if !errors.As(err, &ie) {
		return err
	}
	if ie.Field == "" {
		return &InputError{Field: strings.TrimSuffix(prefix, "."), Reason: ie.Reason}
	}
	return &InputError{Field: prefix + ie.Field, Reason: ie.Reason}
}

// idError is a sentinel error about one memory, with a message that names it.
type idError struct {
	msg string
	err error
}

func (e *idError) Error() string { return e.msg }
func (e *idError) Unwrap() error { return e.err }

func notFound(id uint64) error {
	return &idError{fmt.Sprintf("memory %d not found", id), ErrNotFound}
}

// forgotten says memory id is forgotten; advice completes the sentence for the operation.
func forgotten(id uint64, advice string) error {
	return &idError{fmt.Sprintf("memory %d was forgotten%s", id, advice), ErrForgotten}
}

// Code sorts an error of the store for the adapters: the one table from the store's errors to
// the kinds its callers answer differently (wtf's ErrorCode). The values are the payload codes
// of TOOLS.md, which the tools send as they are; the console words each kind for the owner.
type Code string

// The codes of ErrorCode.
const (
	// CodeInvalid: an *InputError, a value a memory may not hold or an argument refused.
	CodeInvalid Code = "INVALID_INPUT"
	// CodeNotFound: ErrNotFound or ErrForgotten, whose message names the memory.
	CodeNotFound Code = "NOT_FOUND"
	// CodeSecret: a *SecretError.
	CodeSecret Code = "SECRET_REJECTED"
	// CodeLimit: a *LimitError, whose message names the limit and what to do.
	CodeLimit Code = "LIMIT_EXCEEDED"
	// CodeInternal: anything else, a failure of the file or a bug. Adapters log it in full and
	// show only that it happened.
	CodeInternal Code = "DATABASE_ERROR"
)

// ErrorCode is the Code of err, looking through wrapping: CodeInternal for an error the store
// does not define, "" for nil.
func ErrorCode(err error) Code {
	var ie *InputError
	var se *SecretError
	var le *LimitError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ie):
		return CodeInvalid
	case errors.As(err, &se):
		return CodeSecret
	case errors.As(err, &le):
		return CodeLimit
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrForgotten):
		return CodeNotFound
	}
	return CodeInternal
}
