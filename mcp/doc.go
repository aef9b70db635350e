// Package mcp is ownsona's server side of MCP over jsonrpc's framing: method dispatch,
// protocol-version negotiation, errors, pagination, argument validation against each tool's
// inputSchema (by a JSON Schema validator of its own, CompileSchema), sessions, and the stdio,
// Streamable HTTP and legacy HTTP+SSE transports. It implements the server side of MCP in both
// of its eras: the stateless 2026-07-28, and the initialize-based 2025-11-25 (also negotiating
// 2025-06-18, 2025-03-26 and 2024-11-05), on the same endpoint and connection. It knows nothing
// of memories or OAuth: the app hands it tables of tools, resources and prompts. It imports
// jsonrpc and no other package of ours.
//
// The simplest use:
//
//	s := &mcp.Server{Info: mcp.Implementation{Name: "ownsona", Version: "1.0"}, Tools: tools}
//	if err := s.Check(); err != nil { ... }        // bad schemas, duplicate names
//	err := s.ServeStdio(ctx, os.Stdin, os.Stdout)  // or mux.Handle("/mcp", s)
//
// # Decoding
//
// Messages are decoded by jsonrpc: every message passes a strict scanner before anything is
// unmarshalled, and is never repaired: invalid JSON, invalid UTF-8 (raw, or a lone or reversed
// \u surrogate), a duplicate key in any object (compared after unescaping, so "a" and "\u0061"
// collide), nesting deeper than 64 and objects with more than 10,000 keys are -32700. An
// envelope has exactly the keys jsonrpc ("2.0"), id (string, number or null of at most 256
// bytes of JSON, echoed byte for byte; a longer one is -32600 with a null id), method and
// params (an object); any other key, such as "Method", "paramſ" or "method\u0000", is -32600
// and nothing runs. Params are read by exact key, never through encoding/json's
// case-insensitive struct matching. Batches (at most 20 messages, counted before any is
// decoded) are accepted only when the client named no revision, or one up to 2025-03-26 (MCP
// removed them in 2025-06-18).
//
// # Errors
//
// One table, with the HTTP status of a single request answered with it (legacy, then
// 2026-07-28 where it differs):
//
//	code    message                      data and when                                 HTTP
//	-32700  Parse error                  {reason}: not strict JSON                     400
//	-32600  Invalid Request              {reason}: bad envelope or batch, a line or    400 (413
//	                                     body over 4 MiB, or ({reason, requested,      too large)
//	                                     supported}) an unsupported legacy
//	                                     MCP-Protocol-Version
//	-32601  Method not found             {method}                                      200, 404
//	-32602  Invalid params               {field, reason}; missing _meta members;       200, 400
//	                                     {uri}: a resource not found in 2026-07-28
//	-32603  Internal error               none: handler failure (details to OnError)    200
//	-32000  server error                 app-defined (e.g. tool not in the allowlist)  200
//	-32001  storage error                app-defined                                   200
//	-32002  resource not found           ErrResourceNotFound; {uri} (legacy only)      200
//	-32003  authorization error          app-defined                                   200
//	-32004  rate limited                 app-defined                                   200
//	-32005  embedding error              app-defined                                   200
//	-32020  header mismatch: R           MCP-Protocol-Version, Mcp-Method, Mcp-Name or 400
//	                                     Mcp-Param-* missing or unlike the body
//	-32021  missing required client …    MissingCapability; {requiredCapabilities}     200, 400
//	-32022  unsupported protocol version _meta's version; {supported, requested}      400
//
// The rule for messages: JSON-RPC 2.0's five codes (-32700 to -32603) carry its own message
// word for word (jsonrpc.MessageParseError and the others), and what went wrong is in data, as
// members: reason, a sentence naming what was wrong, with field (a JSON path into params) for
// -32602, method for -32601, and whatever else a client can act on (requested and supported,
// uri). -32603 carries no data, since its detail is the server's. The codes MCP defines
// (-32020 to -32022) and the application's own (-32000 to -32005) keep a message of their
// own, which names what was wrong. Clients tell errors apart by code and data, never by
// message: the official SDKs do (the TypeScript SDK v2 reads a -32602 whose data is exactly
// {uri} as a resource not found, so that data has no reason).
//
// In 2026-07-28 a resource not found is -32602 with data{uri}, and a -32602 is 400 only when
// the request's _meta lacks what that revision requires (see classify for which error a
// request failing several checks gets); other -32602 errors are in-band, 200.
//
// A handler answers with any of them by returning an *Error (wrapped or not), with any code,
// in every era and on every transport: a tool handler's *Error is a JSON-RPC error, never a
// result. An *ArgError (InvalidArgument) from a tool, or a schema violation, is -32602 for
// clients on protocol 2025-06-18 and older, and an isError result carrying the same field and
// reason for 2025-11-25 and 2026-07-28, as those revisions ask (Server.ToolErrorResult shapes
// it); InvalidParams is -32602 in every era.
//
// # The 2026-07-28 era
//
// A request whose _meta names io.modelcontextprotocol/protocolVersion, or an HTTP POST whose
// MCP-Protocol-Version header names 2026-07-28, is served statelessly under that revision: its
// version, client capabilities, client info and log level come from its _meta, never from a
// session, and no Mcp-Session-Id is minted or honoured for it. Over HTTP its headers are checked
// against its body first (Mcp-Method, Mcp-Name with the =?base64?…?= sentinel decoded, and the
// Mcp-Param-* headers of arguments a tool's inputSchema marks with x-mcp-header). One mismatch
// is served, for Claude's connectors, which send it on every call (anthropics/claude-code
// #93290): an MCP-Protocol-Version naming a legacy revision under a _meta naming a newer
// stateless one; the request runs under _meta's revision, the mirrored headers may be absent
// but must match when sent, and OnWarning hears of it once per owner. Results carry
// resultType, the server's identity in _meta and, for server/discover, the lists and
// resources/read, the cache hints ttlMs and cacheScope ("private": what a caller sees depends on
// its token). initialize, ping, logging/setLevel and resources/(un)subscribe do not exist in
// it; subscriptions/listen replaces the GET stream and resources/subscribe, and a handler that
// needs the client's input asks with Input or Elicit, which end the call with an input_required
// result instead of sending the client a request. server/discover answers in both eras.
//
// # Sessions and streams
//
// Over stdio the connection is the session. Over Streamable HTTP sessions are optional: any
// method works without initialize, and a request without Mcp-Session-Id is served on its own
// at the revision of its MCP-Protocol-Version header (2025-03-26 when absent). A successful
// initialize without Mcp-Session-Id starts a session whose id (256 random bits) the response
// carries; requests that send it back share the negotiated revision, the client's info, the log
// level, the subscriptions and cancellation. A session belongs to the Owner that started it
// (another owner gets 404, so an id is never authentication), ends on DELETE, after
// SessionIdle without use, or when a new one would exceed MaxSessions (or 64 for its owner)
// and it is the least recently used. The legacy HTTP+SSE transport of 2024-11-05 (ServeLegacySSE, ServeLegacyMessage) keeps
// one session per event stream.
//
// What the server sends unasked travels with the request it belongs to: Progress, Log and
// Request (sampling/createMessage, elicitation/create) go on the stdio connection, on the POST's
// answer (which becomes an event stream, the answer last) or on the legacy stream; a client
// that accepts only application/json gets none of them. KeepAlive sends a comment line on a
// POST's event stream, for a handler that waits long. NotifyResourceUpdated and
// NotifyListChanged go on the sessions' own streams (stdio, GET, legacy). A client's answer to
// Request may come in any later message of the same owner.
//
// # Caveats
//
// Events carry no ids, so a broken stream is not resumed with Last-Event-ID and what it would
// have carried is lost; a session's stream drops notifications while 64 (or 256 KiB) wait to
// be written. A subscriptions/listen stream does too, and one whose queue stays full for 30 s,
// its client reading nothing, is ended with notifications/cancelled naming it, and no result.
// The context of an HTTP call ends with its POST, so a client that disconnects cancels its
// calls. Request is sent whatever capabilities the client declared in initialize. The tables
// are read once (Check); changing them later has no effect. What may change while the server
// runs goes through Permit, Visible and ListResources, consulted at every request, and is
// announced with NotifyListChanged.
package mcp
