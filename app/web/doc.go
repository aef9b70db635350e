// Package web is what the network sees of ownsona: its HTTP routes, the middleware every request
// passes, the bearer-token check in front of MCP, the rate limits and the bound on concurrent
// requests, /health, the discovery documents, and the TLS listeners. It knows nothing of
// memories: MCP arrives as an *mcp.Server (an http.Handler, with the legacy SSE transport beside
// it), the scope each tool needs as a function, and the health checks as a function.
//
// The simplest use, as app wires it:
//
//	s, err := web.New(web.Config{
//		Addr:    "127.0.0.1:8080",
//		OAuth:   oauth.Config{DB: db}, // and the owner's login, the token lifetime…
//		MCP:     mcp,                  // an *mcp.Server with the tools
//		Scope:   scope,                // func(tool string) (scope string, known bool)
//		Version: "1.4.0",
//	})
//	if err != nil {
//		return err // a *SettingError names the setting at fault
//	}
//	defer s.Close()
//	if err := s.Listen(); err != nil { // binds now ("address in use" is this error), serves in goroutines
//		return err
//	}
//
// Tests that need no socket set Config.PublicURL, so that New opens the authorization server,
// and serve Handler() with net/http/httptest.
//
// # Routes
//
//	/mcp, /api/mcp, /mcp/http           MCP Streamable HTTP (POST, GET for the stream, DELETE)
//	/mcp/sse, /mcp/sse/message          the legacy HTTP+SSE transport
//	/oauth/…                            the authorization server and its login pages (oauth.Server.Routes)
//	/.well-known/oauth-…                its metadata, and the protected resource's for /mcp (also
//	                                    the bare path), /api/mcp and /mcp/http, each naming itself
//	/.well-known/mcp/server-card.json   the MCP server card (SEP-2127); lists no tools
//	/.well-known/mcp/catalog.json       the site catalog naming the card
//	/health                             {status, timestamp, uptime, version, checks}: 200, or 503
//	/docs                               the page for developers of clients (resource_documentation)
//	/ca.crt                             the local CA's root with TLS "local"; 404 otherwise
//	/console, /console/…                the owner's console (Config.Console); 404 without one
//	/metrics                            Prometheus metrics (Config.Metrics: who may read them is
//	                                    its business); 404 without
//	/                                   a browser (Accept: text/html) is sent to /console when
//	                                    there is one; others get the 404 below
//	anything else                       404 {"error":"not_found",…}
//
// A browser that opens /mcp (or an alias) without a token — a GET whose Accept lists
// text/html and not text/event-stream — gets the same 401 and challenge as a client, with a
// short page for a person as its body (browser.go); MCP clients never ask for text/html.
//
// # Middleware
//
// Every request passes, outermost first:
//
//  1. the request log: an X-Request-Id header and one debug line (never headers or bodies);
//  2. the security headers: nosniff, X-Frame-Options DENY, a CSP of default-src 'none',
//     Referrer-Policy no-referrer, X-XSS-Protection, X-API-Version, and HSTS (a year,
//     includeSubDomains) under TLS or an https public URL;
//  3. the Host check against DNS rebinding: the public URL's host or a loopback name, else 421;
//  4. the concurrency gate of what is not MCP: the OAuth endpoints and pages and the console
//     share a pool of a quarter of Config.MaxConcurrent (at least 8), at most 8 per address,
//     else 503 (or 429) with Retry-After 1; MCP requests are gated in the bearer check (9),
//     once their token is known, and uploads in the upload route, once their upload token is
//     known: one transfer per upload URL (else 409), two bodies at once in a pool of their own
//     (else 503 uploads_busy), each cut (408 upload_too_slow) when it arrives slower than
//     16 KiB/s over a 30 s window after the first 30 s, and held in memory as it arrives,
//     never sized from Content-Length (SECURITY.md UP-02);
//  5. the rate limit per address (429 with X-RateLimit-* and Retry-After) of everything but
//     MCP, the discovery documents, /health and preflights.
//
// MCP requests then pass:
//
//  6. CORS: preflights from Config.CORSOrigins and loopback origins are answered 204 (cached a
//     day), others 403;
//  7. the Origin check: a present Origin must be the public origin, a loopback one or an
//     allowed one, else 403 forbidden_origin;
//  8. the audit log (Config.Audit): who, which method and tool, the outcome, never arguments;
//  9. the bearer check: no valid token is 401 with a WWW-Authenticate challenge naming the
//     resource metadata of the path it was sent to (an alias's own document) and a JSON-RPC
//     error body, rate-limited per address before its body is read; a body is read ahead
//     (4 MiB with a token, 64 KiB without, unless it may carry an argument token) and a batch
//     of more than 20 messages refused before any element is decoded (peek.go); a body without
//     a valid token is never decoded whole; a valid one is rate-limited per client
//     (Principal.Key) with JSON-RPC error -32004 and served in a pool of Config.MaxConcurrent
//     calls, at most half of them (at least 2) for one principal (429 too_many_calls), from
//     which a call waiting for the owner's approval steps out while it waits (Park, pool.go);
//     event streams — GET /mcp, GET /mcp/sse, and a POST whose body is a
//     subscriptions/listen, whatever its Mcp-Method header says — in a gate of their own (512,
//     32 per principal) instead; a tools/call the token's scopes do not cover (Config.Scope)
//     is 403 insufficient_scope with a step-up challenge. The principal then rides in the
//     request's context (oauth.PrincipalFrom) for
//     mcp.Server.Permit and Owner, which check scopes again for every message of a batch.
//
// # Compatibility modes
//
// Config.Compat, and SetCompat at run time (safe while serving), switch the opt-in modes for
// clients written for the seed systems (compat.go): once (argument tokens, ONCE's server-card
// fields), komcp (KOmcp's scopes and the bare origin as a resource at the authorization server,
// refusals on MCP in seed 003's {error, error_description} shape) and sophon (nothing on the
// HTTP side but /docs). With none on, the surface is the default one.
//
// # API version
//
// X-API-Version is APIVersion, a semantic version of the HTTP and MCP surface (see its doc for
// when it bumps); Config.Version, the build's, is in /health and the server card.
//
// # Listeners
//
// Listen binds Config.Addr; without Config.PublicURL, the authorization server takes the bound
// address as its origin. With TLS local, acme or files it makes the certificate manager
// (package certs) and, for acme by default, a plain-HTTP listener on :80 (Config.HTTPAddr) that
// answers HTTP-01 challenges and redirects the rest to https; it returns once certificates are
// ready. Close cancels the servers' base context (event streams end), shuts both listeners down
// with a 5 s deadline (then cuts what is left), and closes the certificate manager and the
// authorization server. The rate limiter and the audit log are the caller's to close.
//
// # Caveats
//
// New, Listen and Close are called in that order from one goroutine, and Addr, Auth, Handler and
// TLSInfo not while Listen or Close run. The handler is safe for concurrent use, and requests may
// be in flight while Close runs. Handler panics before the authorization server is open. Each
// call of Handler builds a new chain with gates of its own.
package web
