package mcp

import (
	"context"
	"errors"
	"net/http"

	"github.com/ownsona/ownsona/jsonrpc"
)

// ownsona's and MCP's error codes, from the range JSON-RPC leaves to servers: with JSON-RPC's
// five (jsonrpc.Code*), the one table (doc.go repeats it with the HTTP statuses).
const (
	CodeServerError      = -32000 // generic server-side refusal (e.g. a tool not in the allowlist)
	CodeStorageError     = -32001 // the database failed
	CodeResourceNotFound = -32002 // resources/read of an unknown URI: data{uri}
	CodeAuthorization    = -32003 // the caller may not do this
	CodeRateLimited      = -32004 // too many requests
	CodeEmbedding        = -32005 // the embedding service failed

	// Codes of MCP 2026-07-28, from the range it reserves (-32020 to -32099).
	CodeHeaderMismatch     = -32020 // HTTP headers missing, malformed or unlike the body (HTTP 400)
	CodeMissingCapability  = -32021 // the request needs a capability the client did not declare (HTTP 400)
	CodeUnsupportedVersion = -32022 // _meta's protocol version is not one of this server's; data{supported, requested} (HTTP 400)
)

// ErrResourceNotFound is returned (possibly wrapped) by Server.ReadResource for a URI it does
// not know; the client sees -32002 "resource not found" with data{uri}.
var ErrResourceNotFound = errors.New("resource not found")

// ArgError is an invalid tool or prompt argument: the field, as a JSON path such as
// "items[3].text", and why it was refused. For tools/call it is a -32602 error with
// data{field, reason} on protocol 2025-06-18 and older and an isError result on 2025-11-25;
// for prompts and completions it is always -32602.
type ArgError struct {
	Field  string
	Reason string
}

func (e *ArgError) Error() string { return e.Field + ": " + e.Reason }

// InvalidArgument returns an *ArgError, for handlers.
func InvalidArgument(field, reason string) error { return &ArgError{Field: field, Reason: reason} }

// headerMismatch is -32020: a request header is missing, malformed or says something else than
// the body.
func headerMismatch(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "header mismatch: " + reason}
}

// unsupportedVersion is -32022, listing every revision this server speaks.
func unsupportedVersion(requested string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeUnsupportedVersion, Message: "unsupported protocol version",
		Data: map[string]any{"supported": AllProtocolVersions(), "requested": requested}}
}

// MissingCapability is -32021: serving the request needs a capability the client did not
// declare, e.g. MissingCapability("elicitation").
func MissingCapability(capability string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeMissingCapability, Message: "missing required client capability: " + capability,
		Data: map[string]any{"requiredCapabilities": map[string]any{capability: struct{}{}}}}
}

// modernStatus is the HTTP status of a 2026-07-28 request answered with code: the transport
// pins a method it does not have to 404 and its own validation errors (and a capability the
// client did not declare) to 400, so that a client tells a modern server's refusal from a
// legacy server's. Any other error is in-band, with 200.
func modernStatus(code int) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// asError is err as the *Error it wraps; internal error when it wraps none.
func asError(err error) *jsonrpc.Error {
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		return re
	}
	return jsonrpc.InternalError()
}

// toError maps what a handler returned to the JSON-RPC error the client sees. Internal errors
// (anything that is not an *Error, *ArgError or ErrResourceNotFound) are reported to OnError and
// shown only as -32603 "Internal error".
func (s *Server) toError(ctx context.Context, method string, err error) *jsonrpc.Error {
	var re *jsonrpc.Error
	var ae *ArgError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &ae):
		return jsonrpc.InvalidParams(ae.Field, ae.Reason)
	case errors.Is(err, ErrResourceNotFound):
		return &jsonrpc.Error{Code: CodeResourceNotFound, Message: "resource not found"}
	}
	s.reportInternal(ctx, method, err)
	return jsonrpc.InternalError()
}

// reportInternal tells OnError about an internal error.
func (s *Server) reportInternal(ctx context.Context, method string, err error) {
	if s.OnError != nil {
		s.OnError(ctx, method, err)
	}
}
