package web

// What keeps the HTTP server standing on the internet: rate limits per client and per address,
// a bound on concurrent requests, CORS for the allowed browser origins, and the audit log of
// MCP requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
)

// isMCPPath reports whether path is the Streamable HTTP endpoint or one of its aliases.
func isMCPPath(path string) bool {
	return path == "/mcp" || path == "/api/mcp" || path == "/mcp/http"
}

// isStream reports whether r opens a long-lived event stream before its body is read: GET on
// the MCP endpoint or the legacy SSE endpoint. Those are bounded by the streams' gate and
// mcp's per-client limits, not by the gate of requests that come and go. A POST is a stream
// when its body is a subscriptions/listen (listens), whatever its headers say: requireAuth
// decides, once it has read the body (SECURITY.md LA-13).
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet && (isMCPPath(r.URL.Path) || r.URL.Path == "/mcp/sse")
}

// listens reports whether msgs, the body of a POST read ahead, is a subscriptions/listen: a
// stream that lives as long as its client keeps it, in every protocol era (the mcp server
// serves it under 2026-07-28 and refuses it at once otherwise).
func listens(msgs []peekedMessage) bool {
	return len(msgs) == 1 && msgs[0].Method == "subscriptions/listen"
}

// admitStream takes a slot of the streams' gate and one of key's (a principal's) streams; it
// answers 503 or 429 itself and returns false when either is taken, else the function that
// frees them.
func (s *Server) admitStream(w http.ResponseWriter, key string) (release func(), ok bool) {
	if !s.pools.streams.TryAcquire() {
		writeBusy(w, "the server has as many event streams open as it takes")
		return nil, false
	}
	if !s.pools.perOwner.TryAcquire(key) {
		s.pools.streams.Release()
		w.Header().Set("Retry-After", "10")
		writeRPCError(w, http.StatusTooManyRequests, nil, mcp.CodeRateLimited, "too many event streams",
			"too_many_streams", fmt.Sprintf("this client has %d event streams open, the most one client may; close one", maxStreamsPerPrincipal))
		return nil, false
	}
	return func() { s.pools.perOwner.Release(key); s.pools.streams.Release() }, true
}

// ipKey is the rate-limit key of the address r comes from (IPv6 by /64).
func (s *Server) ipKey(r *http.Request) string {
	if ip, err := netip.ParseAddr(s.clientIP(r)); err == nil {
		return limit.IPKey(ip)
	}
	return "ip:" + s.clientIP(r)
}

// limitIP applies the per-address limit to requests that are not MCP (the OAuth endpoints and
// pages) and are not discovery documents, /health or /docs, which stay cheap and cacheable; MCP
// requests are limited per token in requireAuth, or per address when their token fails.
func (s *Server) limitIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if isMCPPath(p) || strings.HasPrefix(p, "/mcp/sse") || strings.HasPrefix(p, "/.well-known/") || p == "/health" || p == oauth.DocsPath || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		d := s.cfg.Limiter.Allow(s.ipKey(r))
		d.SetHeaders(w.Header())
		if !d.Allowed {
			writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate_limited",
				"error_description": fmt.Sprintf("too many requests from this address; retry in %d s", d.RetryAfterSeconds())})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowKey applies the rate limit of key (the client's, or the address of a refused token) to
// an MCP request; false when it answered 429 with JSON-RPC error -32004 (for the request id,
// when it could be read), or seed 003's body in the komcp mode.
func (s *Server) allowKey(w http.ResponseWriter, key string, id json.RawMessage) bool {
	d := s.cfg.Limiter.Allow(key)
	d.SetHeaders(w.Header())
	if d.Allowed {
		return true
	}
	s.writeRateLimited(w, d.RetryAfterSeconds(), id)
	return false
}

func writeRateLimited(w http.ResponseWriter, retry int, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code": mcp.CodeRateLimited, "message": "rate limit exceeded",
		"data": map[string]any{"retry_after": retry, "error_description": fmt.Sprintf("too many requests from this client; retry in %d s", retry)}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(append(body, '\n'))
}

// gate bounds the requests served at once but MCP's, which requireAuth gates.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case isMCPPath(p) || strings.HasPrefix(p, "/mcp/sse"):
			// Gated in requireAuth, once the token is known: authenticated calls in a pool of
			// their own, so that no unauthenticated traffic can starve them, and event streams
			// (GET, and POSTs whose body is a subscriptions/listen) in the streams' gates.
		case strings.HasPrefix(p, UploadPath) && s.cfg.Uploads != nil:
			// Gated in serveUpload, once the upload token is known, in a pool of their own:
			// a body that takes an hour must not hold a slot sign-in needs (SECURITY.md UP-02).
			// Refusals before it read no body.
		case p == "/health" || p == oauth.DocsPath || strings.HasPrefix(p, "/.well-known/") || r.Method == http.MethodOptions:
			// Cheap, without a body: a flood of others never makes these answer 503.
		default:
			release, ok := s.admitOther(w, r)
			if !ok {
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// pools are the bounds on requests in flight (issue 13, items 1 and 2). Authenticated MCP
// calls have a pool of their own (Config.MaxConcurrent), of which one principal holds at most
// half (pool.go); everything else that carries a body
// — the OAuth endpoints and pages, MCP requests without a valid token — shares a smaller pool,
// ahead of which each address (IPv6 by /64) may hold only a few slots, and its bodies must
// arrive within smallBodyTimeout. Upload bodies have a pool of their own (maxUploads,
// upload.go). Event streams of every kind are bounded in all and per principal.
type pools struct {
	mcp        *callPool // pool.go
	other      *limit.Gate
	uploads    *limit.Gate
	perAddress *limit.PerKey
	streams    *limit.Gate
	perOwner   *limit.PerKey // event streams per principal
}

const (
	// maxStreams bounds the open event streams; maxStreamsPerPrincipal those of one token or
	// OAuth client (GET streams with or without a session, legacy SSE, subscriptions/listen).
	maxStreams             = 512
	maxStreamsPerPrincipal = 32
	// maxPerAddress is how many requests of the shared pool one address may have in flight.
	maxPerAddress = 8
	// smallBodyTimeout is how long the body of an OAuth request or of an MCP request without a
	// valid token may take to arrive: such bodies are a few hundred bytes.
	smallBodyTimeout = 5 * time.Second
)

func newPools(maxConcurrent int) *pools {
	other := 0
	if maxConcurrent > 0 {
		other = max(maxConcurrent/4, 8)
	}
	return &pools{
		mcp:        newCallPool(maxConcurrent),
		other:      limit.NewGate(other),
		uploads:    limit.NewGate(maxUploads),
		perAddress: limit.NewPerKey(maxPerAddress),
		streams:    limit.NewGate(maxStreams),
		perOwner:   limit.NewPerKey(maxStreamsPerPrincipal),
	}
}

// admitCall admits an authenticated call of the principal key into the pool of calls: 503
// when the pool is full, 429 when key holds its share of it. Both close the connection
// without reading the body (refuseBody).
func (s *Server) admitCall(w http.ResponseWriter, key string) (*callSlot, bool) {
	ok, full := s.pools.mcp.tryAcquire(key)
	switch {
	case ok:
		return &callSlot{pool: s.pools.mcp, key: key, held: true}, true
	case full:
		writeBusy(w, "the server is at its limit of concurrent requests")
	default:
		refuseBody(w)
		writeRPCError(w, http.StatusTooManyRequests, nil, mcp.CodeRateLimited, "too many calls in progress", "too_many_calls",
			fmt.Sprintf("this client has %d calls in progress, the most one client may hold of the server's %d; retry when one ends",
				s.pools.mcp.share, s.pools.mcp.limit))
	}
	return nil, false
}

// admitOther admits a request of the shared pool: first its address's share, then a slot of
// the pool; its body then has smallBodyTimeout to arrive. It answers 429 or 503 itself and
// returns false when it does not admit; else the function that frees the slots.
func (s *Server) admitOther(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	key := s.ipKey(r)
	if !s.pools.perAddress.TryAcquire(key) {
		refuseBody(w)
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate_limited",
			"error_description": "too many requests in flight from this address; retry in a second"})
		return nil, false
	}
	if !s.pools.other.TryAcquire() {
		s.pools.perAddress.Release(key)
		writeBusy(w, "the server is at its limit of concurrent requests")
		return nil, false
	}
	if r.ContentLength != 0 {
		// Not supported by every ResponseWriter (tests' recorders); a real connection's is.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(smallBodyTimeout))
	}
	return func() { s.pools.other.Release(); s.pools.perAddress.Release(key) }, true
}

// refuseBody prepares the refusal of a request whose body is left unread: the connection
// closes after the answer and reads no more of it. net/http would otherwise read what is left
// of a small body before answering and keep the connection until its read timeout, which is
// just what a slow sender wants.
func refuseBody(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now()) // not on test recorders
}

// writeBusy answers 503, closing the connection (refuseBody).
func writeBusy(w http.ResponseWriter, why string) {
	refuseBody(w)
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "busy", "error_description": why + "; retry in a second"})
}

// cors answers preflights and sets the CORS headers on the MCP endpoint for the allowed
// origins. Requests from other browser origins are refused by checkOrigin.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && s.corsAllowed(origin)
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset")
		}
		if r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if !allowed {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden_origin", "error_description": "requests from this origin are not allowed"})
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	})
}

// corsAllowed: the configured origins, and loopback origins (local tools such as the MCP
// Inspector), which checkOrigin accepts too. Tokens are bearer headers, never cookies, so a
// permitted origin gains nothing without one.
func (s *Server) corsAllowed(origin string) bool {
	if slices.ContainsFunc(s.cfg.CORSOrigins, func(o string) bool { return strings.EqualFold(o, origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && LoopbackHost(u.Hostname())
}

// ---- audit ----

// auditWriter records what an MCP response was, for the audit log: its status, its size, and
// the last bytes written (where a JSON-RPC error or an isError result shows).
type auditWriter struct {
	http.ResponseWriter
	status int
	size   int64
	tail   []byte
}

const auditTail = 8 << 10

// auditTails keeps the tails' arrays for the next request (one was 8 KB of garbage per answer).
var auditTails = sync.Pool{New: func() any { return new([auditTail]byte) }}

func (w *auditWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.size += int64(n)
	// Only the last auditTail bytes are kept, so a large answer written at once is not copied
	// whole (a recall's answer is 10-15 KB).
	written := b[:n]
	if keep := auditTail - len(written); keep <= 0 {
		w.tail = append(w.tail[:0], written[len(written)-auditTail:]...)
	} else {
		if len(w.tail) > keep {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-keep:]...)
		}
		w.tail = append(w.tail, written...)
	}
	return n, err
}

func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// auditMCP records every request to the MCP endpoints: who, what method and tool, how it
// ended, how long it took and how big it was. Never argument contents.
func (s *Server) auditMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Audit == nil || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		tail := auditTails.Get().(*[auditTail]byte)
		defer auditTails.Put(tail)
		aw := &auditWriter{ResponseWriter: w, tail: tail[:0]}
		// the principal is known only inside requireAuth: it hands it back through this slot
		slot := &principalSlot{}
		ctx := mcp.WithCallTrace(withPrincipalSlot(r.Context(), slot), &mcp.CallTrace{Ended: slot.ended})
		next.ServeHTTP(aw, r.WithContext(ctx))
		e := audit.Entry{Time: s.now(), Transport: audit.TransportHTTP, Duration: time.Since(start),
			RequestBytes: max(r.ContentLength, 0), ResponseBytes: aw.size, Status: aw.status}
		if strings.HasPrefix(r.URL.Path, "/mcp/sse") {
			e.Transport = audit.TransportSSE
		}
		if ip, err := netip.ParseAddr(s.clientIP(r)); err == nil {
			e.RemoteIP = ip
		}
		if p := slot.p; p != nil {
			e.Client, e.ClientID = p.Name, p.ClientID
		}
		e.Method, e.Tool, e.Agent = slot.method, slot.tool, slot.agent
		if e.Method == "" {
			e.Method = "http:" + r.Method
		}
		e.Outcome, e.ErrorCode = outcomeOf(aw.status, aw.tail)
		if o := slot.outcome.Load(); o != nil { // a call that did not run as asked says so
			e.Outcome = audit.Outcome(*o)
		}
		s.cfg.Audit.Record(e)
	})
}

// outcomeOf classifies a response by its status and, for a 200, its last bytes: a JSON-RPC
// error member (its code is a number; tool payload errors have string codes) or an isError
// result. Memory text cannot fake either: its quotes are escaped.
func outcomeOf(status int, tail []byte) (audit.Outcome, int) {
	switch {
	case status == http.StatusUnauthorized:
		return audit.OutcomeUnauthorized, 0
	case status == http.StatusForbidden:
		return audit.OutcomeDenied, mcp.CodeAuthorization
	case status == http.StatusTooManyRequests:
		return audit.OutcomeRateLimited, mcp.CodeRateLimited
	case status == http.StatusServiceUnavailable:
		return audit.OutcomeBusy, 0
	case status >= 400:
		return audit.OutcomeError, 0
	}
	const member = `"error":{"code":`
	for rest := tail; ; {
		i := bytes.Index(rest, []byte(member))
		if i < 0 {
			break
		}
		rest = rest[i+len(member):]
		end := bytes.IndexAny(rest, ",}")
		if end <= 0 {
			continue
		}
		code, err := strconv.Atoi(string(rest[:end]))
		if err != nil {
			continue // a tool payload's string code
		}
		if code == mcp.CodeAuthorization || code == mcp.CodeServerError && bytes.Contains(rest, []byte("not in allowlist")) {
			return audit.OutcomeDenied, code
		}
		return audit.OutcomeError, code
	}
	if bytes.Contains(tail, []byte(`"isError":true`)) {
		return audit.OutcomeToolError, 0
	}
	return audit.OutcomeOK, 0
}

// principalSlot carries what requireAuth learned about a request back to auditMCP.
type principalSlot struct {
	p            *oauth.Principal
	method, tool string
	agent        string // the client software's own name, when the request says it
	// outcome is how a call ended where its answer does not say (mcp.CallInfo.Outcome:
	// rejected, cancelled, abandoned…), told by mcp through the request's CallTrace.
	outcome atomic.Pointer[string]
}

// ended is the CallTrace of the request: it keeps a call's outcome word.
func (s *principalSlot) ended(c mcp.CallInfo) {
	if c.Outcome != "" {
		s.outcome.Store(&c.Outcome)
	}
}

type slotKey struct{}

func withPrincipalSlot(ctx context.Context, s *principalSlot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

func slotFrom(ctx context.Context) *principalSlot {
	s, _ := ctx.Value(slotKey{}).(*principalSlot)
	return s
}
