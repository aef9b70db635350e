package audit

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Transport is how a request arrived.
type Transport string

// Transports.
const (
	TransportHTTP  Transport = "http"  // Streamable HTTP (POST /mcp)
	TransportSSE   Transport = "sse"   // the legacy HTTP+SSE transport
	TransportStdio Transport = "stdio" // ownsona stdio
)

// Outcome is how a request ended. The caller chooses; these are the usual ones.
type Outcome string

// Outcomes.
const (
	OutcomeOK           Outcome = "ok"           // answered with a result
	OutcomeError        Outcome = "error"        // answered with a JSON-RPC error
	OutcomeToolError    Outcome = "tool_error"   // a tools/call result with isError
	OutcomeUnauthorized Outcome = "unauthorized" // 401: no valid token
	OutcomeDenied       Outcome = "denied"       // 403, a scope or the tool allowlist refused it
	OutcomeRateLimited  Outcome = "rate_limited" // 429
	OutcomeBusy         Outcome = "busy"         // 503: too many requests in flight

	// A call that did not run as asked, although its answer may look like any other (an
	// isError result, a 200 whose stream ended early). The words are mcp.CallInfo.Outcome's
	// and approval.Outcome's.
	OutcomeRejected      Outcome = "rejected"       // not approved: nothing changed
	OutcomeTimedOut      Outcome = "timed_out"      // nobody approved it in time: nothing changed
	OutcomeWithdrawn     Outcome = "withdrawn"      // the server stopped while it waited for approval
	OutcomeCancelled     Outcome = "cancelled"      // its client cancelled it (notifications/cancelled): no answer
	OutcomeAbandoned     Outcome = "abandoned"      // its client went before the answer (connection, stream or session)
	OutcomeInputRequired Outcome = "input_required" // a 2026-07-28 round that asked the client (its retry is an entry of its own)
	OutcomeApproved      Outcome = "approved"       // method "approval": the owner or the user approved the call
)

// Entry is one MCP request in the audit log. It describes the request, never its content: no
// field holds arguments, memory text, tokens or results, and the string fields are bounded when
// stored (see the package doc) so that none can carry them either.
type Entry struct {
	// Time is when the request arrived. If zero, Record sets it to Config.Now(). Entries read
	// back are in UTC.
	Time time.Time
	// Client is the principal's name: the OAuth client's registered name, "pat:" and the
	// personal access token's name, or "stdio". Empty when the request was not authenticated.
	Client string
	// ClientID is the OAuth client_id or the PAT's id, if any.
	ClientID string
	// RemoteIP is the client's address; the zero Addr for stdio.
	RemoteIP netip.Addr
	// Transport is how the request arrived.
	Transport Transport
	// Method is the JSON-RPC method ("tools/call"), empty when the request was refused before
	// it was read.
	Method string
	// Tool is the tool name of a tools/call.
	Tool string
	// Outcome is how the request ended.
	Outcome Outcome
	// ErrorCode is the JSON-RPC error code of the answer, 0 if none.
	ErrorCode int
	// Status is the HTTP status, 0 for stdio.
	Status int
	// Duration is how long the request took to answer.
	Duration time.Duration
	// RequestBytes and ResponseBytes are the sizes of the request and response bodies.
	RequestBytes, ResponseBytes int64
	// Agent is the MCP client software as it names itself ("claude-code 2.1.4": the clientInfo
	// of initialize or of a 2026-07-28 request's _meta), when it sent one. Self-reported and
	// unverified: for reading the log, never for a decision.
	Agent string
	// Count is how many requests the entry stands for: 0 or 1 for one. Refusals (see
	// Refusal) are recorded once per address, outcome and minute, with their count; the
	// sizes are then the sums and Duration the longest.
	Count int
}

// Refusal reports whether e records a request refused before it was served (no valid token,
// rate limited, or the server busy): what an anonymous flood produces, so the log keeps it
// aggregated and apart, where it can never push out the record of real use.
func (e *Entry) Refusal() bool {
	switch e.Outcome {
	case OutcomeUnauthorized, OutcomeRateLimited, OutcomeBusy:
		return true
	}
	return false
}

// Bounds on the stored string fields, in runes. Longer values are cut and end in "…".
const (
	maxClient   = 128
	maxClientID = 256
	maxName     = 64 // Method and Tool
	maxWord     = 32 // Transport and Outcome
)

// clean returns e as it is stored: strings bounded and stripped of anything that could be text
// or could drive a terminal, negative numbers zeroed, the address unmapped and without zone.
func clean(e Entry) Entry {
	e.Time = e.Time.UTC()
	e.Client = printable(e.Client, maxClient)
	e.Agent = printable(e.Agent, maxClient)
	e.ClientID = printable(e.ClientID, maxClientID)
	e.RemoteIP = e.RemoteIP.Unmap().WithZone("")
	e.Transport = Transport(token(string(e.Transport), maxWord))
	e.Method = token(e.Method, maxName)
	e.Tool = token(e.Tool, maxName)
	e.Outcome = Outcome(token(string(e.Outcome), maxWord))
	e.Status = max(e.Status, 0)
	e.Duration = max(e.Duration, 0)
	e.RequestBytes = max(e.RequestBytes, 0)
	e.ResponseBytes = max(e.ResponseBytes, 0)
	e.Count = max(e.Count, 0)
	return e
}

// printable replaces what unicode.IsPrint refuses (control and format characters, so escape
// sequences and bidi overrides; every space but U+0020) and invalid UTF-8 with '?', and cuts s
// to n runes.
func printable(s string, n int) string {
	return mapRunes(s, n, func(r rune) bool { return r != utf8.RuneError && unicode.IsPrint(r) })
}

// token keeps the characters of method and tool names ([A-Za-z0-9_./:-]), replaces every other
// one with '?', and cuts s to n runes: no spaces, so no sentence fits.
func token(s string, n int) string {
	return mapRunes(s, n, func(r rune) bool {
		return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("_./:-", r))
	})
}

func mapRunes(s string, n int, keep func(rune) bool) string {
	clean := true
	count := 0
	for _, r := range s {
		count++
		if !keep(r) {
			clean = false
		}
	}
	if clean && count <= n {
		return s
	}
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == n-1 && count > n {
			b.WriteRune('…')
			break
		}
		if !keep(r) {
			r = '?'
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}

// ErrCorrupt: a stored entry could not be decoded. Query skips such entries and counts them.
var ErrCorrupt = errors.New("corrupt audit entry")

// version is the first byte of every stored entry. A change to the layout takes a new version,
// and the decoder keeps reading the old ones.
const (
	version1 = 1 // the fields up to ResponseBytes
	version2 = 2 // then Agent and Count
)

// maxStored bounds every stored string's length in bytes, when decoding.
const maxStored = 4 * maxClientID

// encodeEntry is the stored form of a clean entry, version 2: the version byte, then the time
// (Unix nanoseconds, varint), Client and ClientID (uvarint length and bytes), the address (a
// length byte, 0, 4 or 16, and the bytes), Transport, Method, Tool and Outcome (strings), then
// ErrorCode, Status, Duration, RequestBytes and ResponseBytes (varints), then Agent (a string)
// and Count (a varint). Version 1, written before, ends after ResponseBytes.
func encodeEntry(e Entry) []byte {
	b := make([]byte, 0, 64+len(e.Client)+len(e.ClientID)+len(e.Method)+len(e.Tool)+len(e.Agent))
	b = append(b, version2)
	b = binary.AppendVarint(b, e.Time.UnixNano())
	b = appendString(b, e.Client)
	b = appendString(b, e.ClientID)
	switch {
	case e.RemoteIP.Is4():
		a := e.RemoteIP.As4()
		b = append(append(b, 4), a[:]...)
	case e.RemoteIP.Is6():
		a := e.RemoteIP.As16()
		b = append(append(b, 16), a[:]...)
	default:
		b = append(b, 0)
	}
	for _, s := range []string{string(e.Transport), e.Method, e.Tool, string(e.Outcome)} {
		b = appendString(b, s)
	}
	for _, n := range []int64{int64(e.ErrorCode), int64(e.Status), int64(e.Duration), e.RequestBytes, e.ResponseBytes} {
		b = binary.AppendVarint(b, n)
	}
	b = appendString(b, e.Agent)
	return binary.AppendVarint(b, int64(e.Count))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeEntry decodes what encodeEntry wrote. Any defect, including trailing bytes, is an
// error wrapping ErrCorrupt; it never panics.
func decodeEntry(b []byte) (Entry, error) {
	if len(b) == 0 {
		return Entry{}, fmt.Errorf("decode audit entry: empty: %w", ErrCorrupt)
	}
	if b[0] != version1 && b[0] != version2 {
		return Entry{}, fmt.Errorf("decode audit entry: unknown version %d: %w", b[0], ErrCorrupt)
	}
	d := decoder{b: b[1:]}
	var e Entry
	e.Time = time.Unix(0, d.varint()).UTC()
	e.Client = d.string()
	e.ClientID = d.string()
	switch n := d.byte(); n {
	case 0:
	case 4:
		e.RemoteIP = netip.AddrFrom4([4]byte(d.bytes(4)))
	case 16:
		e.RemoteIP = netip.AddrFrom16([16]byte(d.bytes(16)))
	default:
		d.fail("address length %d", n)
	}
	e.Transport = Transport(d.string())
	e.Method = d.string()
	e.Tool = d.string()
	e.Outcome = Outcome(d.string())
	e.ErrorCode = int(d.varint())
	e.Status = int(d.varint())
	e.Duration = time.Duration(d.varint())
	e.RequestBytes = d.varint()
	e.ResponseBytes = d.varint()
	if b[0] == version2 {
		e.Agent = d.string()
		if e.Count = int(d.varint()); e.Count < 0 {
			d.fail("negative count")
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return Entry{}, fmt.Errorf("decode audit entry: %w: %w", d.err, ErrCorrupt)
	}
	return e, nil
}

// decoder reads b; after the first failure every read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	d.b = nil
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail("truncated")
		return make([]byte, n)
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) byte() byte { return d.bytes(1)[0] }

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	if d.err != nil {
		return ""
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > maxStored {
		d.fail("bad string length")
		return ""
	}
	d.b = d.b[k:]
	return string(d.bytes(int(n)))
}

// MarshalJSON is the entry as one JSON object, the form of WriteJSONLines: snake_case names,
// time in RFC 3339 with nanoseconds, duration_ms a number, empty optional fields omitted.
func (e Entry) MarshalJSON() ([]byte, error) {
	j := struct {
		Time          string  `json:"time"`
		Client        string  `json:"client"`
		ClientID      string  `json:"client_id,omitempty"`
		Agent         string  `json:"agent,omitempty"`
		RemoteIP      string  `json:"remote_ip,omitempty"`
		Transport     string  `json:"transport"`
		Method        string  `json:"method"`
		Tool          string  `json:"tool,omitempty"`
		Outcome       string  `json:"outcome"`
		ErrorCode     int     `json:"error_code,omitempty"`
		Status        int     `json:"status,omitempty"`
		DurationMS    float64 `json:"duration_ms"`
		RequestBytes  int64   `json:"request_bytes"`
		ResponseBytes int64   `json:"response_bytes"`
		Count         int     `json:"count,omitempty"`
	}{
		Time:          e.Time.Format(time.RFC3339Nano),
		Client:        e.Client,
		ClientID:      e.ClientID,
		Agent:         e.Agent,
		Transport:     string(e.Transport),
		Method:        e.Method,
		Tool:          e.Tool,
		Outcome:       string(e.Outcome),
		ErrorCode:     e.ErrorCode,
		Status:        e.Status,
		DurationMS:    float64(e.Duration) / float64(time.Millisecond),
		RequestBytes:  e.RequestBytes,
		ResponseBytes: e.ResponseBytes,
	}
	if e.Count > 1 {
		j.Count = e.Count
	}
	if e.RemoteIP.IsValid() {
		j.RemoteIP = e.RemoteIP.String()
	}
	return json.Marshal(j)
}
