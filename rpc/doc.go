// Package rpc is ownsona's JSON-RPC 2.0 and MCP framing: a strict decoder, method dispatch,
// protocol-version negotiation, errors, pagination, argument validation against each tool's
// inputSchema, and the stdio and Streamable HTTP transports. It knows nothing of memories or
// OAuth: the app hands it tables of tools, resources and prompts.
//
// The simplest use:
//
//	s := &rpc.Server{Info: rpc.Implementation{Name: "ownsona", Version: "1.0"}, Tools: tools}
//	err := s.ServeStdio(ctx, os.Stdin, os.Stdout) // or http.Handle("/mcp", s)
//
// Decoding is strict and never repairs input: invalid JSON or UTF-8, duplicate object keys
// anywhere in a message, nesting deeper than 64 and objects with more than 10,000 keys are parse
// errors (-32700); envelope keys must be exactly jsonrpc, id, method and params (-32600).
//
// Errors, one table:
//
//	-32700 parse error         -32600 invalid request      -32601 method not found
//	-32602 invalid params      -32603 internal error       -32000 server error
//	-32001 storage error       -32002 resource not found   -32003 authorization error
//	-32004 rate limited        -32005 embedding error
//
// Tool argument errors (ArgError) are -32602 with data{field, reason} for clients on protocol
// 2025-06-18 and older, and an isError result carrying the same field and reason on 2025-11-25,
// as that revision asks. A Server is safe for concurrent use once its fields are set.
package rpc
