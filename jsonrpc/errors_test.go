package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestError_Error: an *Error reads as its code and message, and marshals as the error object
// {"code","message","data"?}.
func TestError_Error(t *testing.T) {
	err := error(&Error{Code: -32001, Message: "storage error"})
	if got, want := err.Error(), "jsonrpc error -32001: storage error"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	b, _ := json.Marshal(&Error{Code: -32000, Message: "m"})
	if got, want := string(b), `{"code":-32000,"message":"m"}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
}

// TestErrorConstructors: each of JSON-RPC 2.0's own errors carries its code, the
// specification's message word for word (jsonrpc.org/specification, "Error object"; seed 003),
// and what was wrong in data.
func TestErrorConstructors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"ParseError", ParseError("unexpected end of input"), `{"code":-32700,"message":"Parse error","data":{"reason":"unexpected end of input"}}`},
		{"InvalidRequest", InvalidRequest("empty batch"), `{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}}`},
		{"TooLarge", TooLarge(), `{"code":-32600,"message":"Invalid Request","data":{"reason":"message too large: a message is limited to 4194304 bytes (4 MiB)"}}`},
		{"MethodNotFound", MethodNotFound("tools/cal"), `{"code":-32601,"message":"Method not found","data":{"method":"tools/cal"}}`},
		{"InvalidParams", InvalidParams("params", "must be an object, not an array"), `{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"must be an object, not an array"}}`},
		{"InternalError", InternalError(), `{"code":-32603,"message":"Internal error"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.err)
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}
