package jsonrpc

import (
	"fmt"
	"strconv"
)

// JSON-RPC 2.0's error codes (jsonrpc.org/specification, "Error object").
const (
	CodeParseError     = -32700 // the message is not strict JSON (HTTP 400)
	CodeInvalidRequest = -32600 // not a valid JSON-RPC envelope (HTTP 400)
	CodeMethodNotFound = -32601 // unknown method, or a capability this server lacks
	CodeInvalidParams  = -32602 // params or arguments are wrong: data{field, reason}
	CodeInternalError  = -32603 // a handler failed; details go to mcp's Server.OnError only
)

// The messages of JSON-RPC 2.0's own codes, in its words (jsonrpc.org/specification, "Error
// object"). Every error with one of those codes carries its message; what went wrong is in
// data (see mcp's doc.go, "Errors").
const (
	MessageParseError     = "Parse error"
	MessageInvalidRequest = "Invalid Request"
	MessageMethodNotFound = "Method not found"
	MessageInvalidParams  = "Invalid params"
	MessageInternalError  = "Internal error"
)

// Error is a JSON-RPC error object, {"code","message","data"?}. A handler that returns one
// (possibly wrapped) answers the request with it verbatim, in every era and on every
// transport, whatever its code: an app's own code (-32000 to -32099 is the range JSON-RPC
// leaves to servers) reaches the client as it is.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message }

// ParseError is -32700: the message is not strict JSON.
func ParseError(reason string) *Error {
	return &Error{Code: CodeParseError, Message: MessageParseError, Data: map[string]string{"reason": reason}}
}

// InvalidRequest is -32600: the message is JSON but not a request this server accepts.
func InvalidRequest(reason string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: MessageInvalidRequest, Data: map[string]string{"reason": reason}}
}

// TooLarge is -32600 for a stdio line or HTTP body over MaxMessage.
func TooLarge() *Error {
	return InvalidRequest(fmt.Sprintf("message too large: a message is limited to %d bytes (4 MiB)", MaxMessage))
}

// InvalidParams is -32602 "Invalid params" with data{field, reason}, naming the field at
// fault; for a handler that wants that error in every era: an *mcp.ArgError
// (mcp.InvalidArgument) from a tool is an isError result for clients on 2025-11-25 and later
// instead.
func InvalidParams(field, reason string) *Error {
	return &Error{Code: CodeInvalidParams, Message: MessageInvalidParams, Data: map[string]string{"field": field, "reason": reason}}
}

func MethodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: MessageMethodNotFound, Data: map[string]string{"method": method}}
}

// InternalError is -32603 without data: what failed is told to mcp's Server.OnError only.
func InternalError() *Error { return &Error{Code: CodeInternalError, Message: MessageInternalError} }
