package rpc

import (
	"errors"
	"fmt"
)

// JSON-RPC and ownsona error codes.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeServerError      = -32000
	CodeStorageError     = -32001
	CodeResourceNotFound = -32002
	CodeAuthorization    = -32003
	CodeRateLimited      = -32004
	CodeEmbedding        = -32005
)

// Error is a JSON-RPC error object. Handlers may return one to answer with it verbatim.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// ErrResourceNotFound is returned (possibly wrapped) by Server.ReadResource for an unknown URI;
// the client sees -32002 with data{uri}.
var ErrResourceNotFound = errors.New("resource not found")

// ArgError is an invalid tool or prompt argument: the field (a JSON path such as
// "items[3].text") and why.
type ArgError struct {
	Field  string
	Reason string
}

func (e *ArgError) Error() string { return e.Field + ": " + e.Reason }

// InvalidArgument returns an *ArgError for handlers.
func InvalidArgument(field, reason string) error { return &ArgError{Field: field, Reason: reason} }

func parseError(reason string) *Error {
	return &Error{Code: CodeParseError, Message: "parse error", Data: map[string]string{"reason": reason}}
}

func invalidRequest(reason string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request", Data: map[string]string{"reason": reason}}
}

func invalidParams(field, reason string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "invalid params: " + field + ": " + reason, Data: map[string]string{"field": field, "reason": reason}}
}
