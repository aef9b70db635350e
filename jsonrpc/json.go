package jsonrpc

// The strict JSON decoder. RFC 8259 JSON, minus what encoding/json silently accepts or repairs:
// invalid UTF-8 (replaced by U+FFFD there), lone or reversed \u surrogates (also replaced),
// duplicate object keys (the last one wins there, and case-insensitive struct matching lets
// "Method", "paramſ" or "\u212Aey" stand in for a field), unbounded nesting and key counts.
// CheckJSON runs over every message before anything is unmarshalled, so later stages may use
// encoding/json on the (now unambiguous) bytes as long as they match keys exactly.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"iter"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of the strict decoder and the transports.
const (
	MaxDepth      = 64      // nested arrays and objects
	MaxObjectKeys = 10000   // keys in one object
	MaxMessage    = 4 << 20 // bytes in one stdio line or HTTP body
	MaxBatch      = 20      // requests in one batch
	MaxID         = 256     // bytes of a request id's JSON, as sent
)

// CheckJSON reports whether data is exactly one strict JSON value, optionally surrounded by
// JSON whitespace. The error names the problem and its byte offset.
func CheckJSON(data []byte) error {
	p := &jsonChecker{data: data}
	p.space()
	if err := p.value(0); err != nil {
		return err
	}
	p.space()
	if p.pos != len(p.data) {
		return p.errorf("unexpected data after the JSON value")
	}
	return nil
}

type jsonChecker struct {
	data   []byte
	pos    int
	keys   [][]byte   // the keys of the objects being checked that have more than 16, innermost last
	tables []keyTable // by depth: the key index of the object there that has more than 16 keys
}

// keyTable indexes the keys of one object (in jsonChecker.keys) by hash, with open addressing.
// It is reused by the next object at its depth without being cleared: a slot belongs to the
// current object only when it carries the table's current generation, so a body of 30,000
// objects of 17 keys builds one table, not 30,000 sets, and clearing costs nothing.
type keyTable struct {
	slots []keySlot // a power of two, at least twice the keys of the current object
	gen   uint32    // the current object's generation (a 4 MiB message has far fewer objects)
}

type keySlot struct {
	gen uint32
	idx int32 // in jsonChecker.keys
}

// keySeed seeds the hash of keys: random per process, so that a client cannot choose keys that
// collide.
var keySeed = maphash.MakeSeed()

// startKeys begins the key index of a new object at depth and returns it.
func (p *jsonChecker) startKeys(depth int) *keyTable {
	if depth >= len(p.tables) {
		p.tables = append(p.tables, make([]keyTable, depth+1-len(p.tables))...)
	}
	t := &p.tables[depth]
	t.gen++
	if len(t.slots) == 0 {
		t.slots = make([]keySlot, 64)
	}
	return t
}

// addKey appends key to p.keys as the object's n-th key (those from base on are the object's)
// and reports whether the object already has it.
func (p *jsonChecker) addKey(t *keyTable, base int, key []byte) (dup bool) {
	n := len(p.keys) - base
	if 2*(n+1) > len(t.slots) { // grow, then index the object's keys again
		t.slots = make([]keySlot, 2*len(t.slots))
		for i := base; i < len(p.keys); i++ {
			t.insert(p.keys, int32(i))
		}
	}
	p.keys = append(p.keys, key)
	if !t.insert(p.keys, int32(len(p.keys)-1)) {
		p.keys = p.keys[:len(p.keys)-1]
		return true
	}
	return false
}

// insert indexes keys[idx], unless the current object already has the same key: then false.
func (t *keyTable) insert(keys [][]byte, idx int32) bool {
	mask := uint64(len(t.slots) - 1)
	for i := maphash.Bytes(keySeed, keys[idx]) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.gen != t.gen {
			*s = keySlot{gen: t.gen, idx: idx}
			return true
		}
		if bytes.Equal(keys[s.idx], keys[idx]) {
			return false
		}
	}
}

func (p *jsonChecker) errorf(format string, args ...any) error {
	return fmt.Errorf(format+" at byte %d", append(args, p.pos)...)
}

func (p *jsonChecker) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonChecker) value(depth int) error {
	if p.pos >= len(p.data) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		_, err := p.str(false)
		return err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c >= utf8.RuneSelf:
		return p.errorf("unexpected non-ASCII byte 0x%02x", c)
	default:
		return p.errorf("unexpected character %q", c)
	}
}

func (p *jsonChecker) literal(word string) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return p.errorf("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *jsonChecker) object(depth int) error {
	if depth > MaxDepth {
		return p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++ // {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	// Keys are compared as bytes: the first 16 in an array on the stack, each against those
	// before it, so that the many small objects of a message cost no allocation; beyond, all
	// are indexed in the table of the object's depth (startKeys).
	var small [16][]byte
	base := len(p.keys)
	var table *keyTable
	for n := 0; ; n++ {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.errorf("expected a string key")
		}
		if n >= MaxObjectKeys {
			return p.errorf("object with more than %d keys", MaxObjectKeys)
		}
		start := p.pos
		key, err := p.str(true)
		if err != nil {
			return err
		}
		dup := false
		switch {
		case n < len(small):
			for _, k := range small[:n] {
				dup = dup || bytes.Equal(k, key)
			}
			small[n] = key
		default:
			if table == nil {
				table = p.startKeys(depth)
				for _, k := range small {
					p.addKey(table, base, k)
				}
			}
			dup = p.addKey(table, base, key)
		}
		if dup {
			p.pos = start
			return p.errorf("duplicate key %q", key)
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.errorf("expected ':' after a key")
		}
		p.pos++
		p.space()
		if err := p.value(depth); err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.data) {
			return p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.keys = p.keys[:base]
			return nil
		default:
			return p.errorf("expected ',' or '}' in an object")
		}
	}
}

func (p *jsonChecker) array(depth int) error {
	if depth > MaxDepth {
		return p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++ // [
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		p.space()
		if err := p.value(depth); err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.data) {
			return p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or ']' in an array")
		}
	}
}

// str checks the string at p.pos (its opening quote) and, when want is set, returns its
// unescaped value: a slice of the input when it has no escapes, else a copy.
func (p *jsonChecker) str(want bool) ([]byte, error) {
	p.pos++ // opening quote
	start := p.pos
	var out []byte // nil until the first escape
	for {
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			var s []byte
			if want {
				s = out
				if s == nil {
					s = p.data[start:p.pos:p.pos]
				}
			}
			p.pos++
			return s, nil
		case c == '\\':
			if want && out == nil {
				out = append([]byte{}, p.data[start:p.pos]...)
			}
			r, err := p.escape()
			if err != nil {
				return nil, err
			}
			if want {
				out = utf8.AppendRune(out, r)
			}
		case c < 0x20:
			return nil, p.errorf("control character 0x%02x in a string", c)
		case c < utf8.RuneSelf:
			if out != nil {
				out = append(out, c)
			}
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, p.errorf("invalid UTF-8")
			}
			if out != nil {
				out = append(out, p.data[p.pos:p.pos+size]...)
			}
			p.pos += size
		}
	}
}

// escape decodes the escape at p.pos (a backslash), joining a \u surrogate pair.
func (p *jsonChecker) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.errorf("unterminated escape")
	}
	e := p.data[p.pos+1]
	switch e {
	case '"', '\\', '/':
		p.pos += 2
		return rune(e), nil
	case 'b':
		p.pos += 2
		return '\b', nil
	case 'f':
		p.pos += 2
		return '\f', nil
	case 'n':
		p.pos += 2
		return '\n', nil
	case 'r':
		p.pos += 2
		return '\r', nil
	case 't':
		p.pos += 2
		return '\t', nil
	case 'u':
	default:
		return 0, p.errorf("invalid escape \\%c", e)
	}
	r, ok := hex4(p.data[p.pos+2:])
	if !ok {
		return 0, p.errorf("invalid \\u escape")
	}
	if !utf16.IsSurrogate(r) {
		p.pos += 6
		return r, nil
	}
	if r >= 0xDC00 {
		return 0, p.errorf("lone UTF-16 low surrogate \\u%04x", r)
	}
	rest := p.data[p.pos+6:]
	if len(rest) < 2 || rest[0] != '\\' || rest[1] != 'u' {
		return 0, p.errorf("lone UTF-16 high surrogate \\u%04x", r)
	}
	r2, ok := hex4(rest[2:])
	if !ok {
		return 0, p.errorf("invalid \\u escape")
	}
	joined := utf16.DecodeRune(r, r2)
	if joined == utf8.RuneError {
		return 0, p.errorf("lone UTF-16 high surrogate \\u%04x", r)
	}
	p.pos += 12
	return joined, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *jsonChecker) number() error {
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.errorf("invalid number: no digits in the exponent")
		}
	}
	return nil
}

// ---- envelopes ----

// Message is one decoded JSON-RPC envelope (a batch holds several): a request, a
// notification, or a response a client sent.
type Message struct {
	ID         json.RawMessage // the id exactly as sent; nil for a notification
	Method     string
	Params     json.RawMessage // nil when absent or null
	Invalid    *Error          // the envelope is unacceptable: answer with this and run nothing
	BadParams  *Error          // params is not an object: answer a request with this
	IsResponse bool            // a client-sent response object (result or error, no method)
	Result     json.RawMessage // of a response
	RawError   json.RawMessage // of a response: its error object
}

// EnvelopeKeys are the members a request may have.
var EnvelopeKeys = []string{"jsonrpc", "id", "method", "params"}

// DecodeMessage decodes one message: a single envelope or a batch. The error is for the
// message as a whole (parse errors, an empty or oversized batch); a bad element of a batch
// carries its own error.
func DecodeMessage(data []byte) (reqs []Message, batch bool, fail *Error) {
	if err := CheckJSON(data); err != nil {
		return nil, false, ParseError(err.Error())
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	if data[0] != '[' {
		return []Message{decodeEnvelope(data)}, false, nil
	}
	// The elements are counted before any is decoded, so that a body of 2M tiny elements
	// costs two scans, CheckJSON's and this one, not 2M decoded values (SECURITY LA-11). This
	// one skips each value and builds nothing; CheckJSON has bounded its nesting.
	n := 0
	for range Elements(data) {
		n++
	}
	switch {
	case n == 0:
		return nil, true, InvalidRequest("empty batch")
	case n > MaxBatch:
		return nil, true, InvalidRequest(fmt.Sprintf("batch of %d messages; the limit is %d", n, MaxBatch))
	}
	reqs = make([]Message, 0, n)
	for item := range Elements(data) {
		reqs = append(reqs, decodeEnvelope(item))
	}
	return reqs, true, nil
}

// decodeEnvelope decodes one envelope that CheckJSON has accepted. Keys match exactly.
func decodeEnvelope(data []byte) Message {
	var env map[string]json.RawMessage
	if data[0] != '{' || json.Unmarshal(data, &env) != nil {
		return Message{Invalid: InvalidRequest("a message must be a JSON object")}
	}
	var r Message
	if id, ok := env["id"]; ok {
		// An id is copied into every message about its request (a subscription's queued
		// notifications carry it as their subscriptionId), so its size is bounded. The refusal
		// has a null id: JSON-RPC 2.0 §5 answers null when the id could not be determined, and
		// this one is refused, not echoed.
		if len(id) > MaxID {
			return Message{Invalid: InvalidRequest(fmt.Sprintf("id of %d bytes; the limit is %d bytes of JSON", len(id), MaxID))}
		}
		switch c := id[0]; {
		case c == '"', c == '-', c >= '0' && c <= '9', string(id) == "null":
			r.ID = id
		default:
			return Message{Invalid: InvalidRequest("id must be a string, a number or null")}
		}
	}
	_, hasMethod := env["method"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	if !hasMethod && (hasResult || hasError) {
		return Message{ID: r.ID, IsResponse: true, Result: env["result"], RawError: env["error"]}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(EnvelopeKeys, k) {
			r.Invalid = InvalidRequest(fmt.Sprintf("unknown member %q; a request has only jsonrpc, id, method and params", k))
			return r
		}
	}
	var version string
	if v := env["jsonrpc"]; v == nil || v[0] != '"' || json.Unmarshal(v, &version) != nil || version != "2.0" {
		r.Invalid = InvalidRequest(`jsonrpc must be "2.0"`)
		return r
	}
	if m := env["method"]; !hasMethod || m[0] != '"' || json.Unmarshal(m, &r.Method) != nil {
		r.Invalid = InvalidRequest("method must be a string")
		return r
	}
	switch params := env["params"]; {
	case params == nil, string(params) == "null":
	case params[0] == '{':
		r.Params = params
	case params[0] == '[':
		r.BadParams = InvalidParams("params", "must be an object, not an array")
	default:
		r.Invalid = InvalidRequest("params must be an object")
	}
	return r
}

// ---- walking checked JSON ----

// The helpers below walk JSON that CheckJSON has accepted, without decoding it: they assume
// well-formed input and do not re-check it.

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// SkipValue returns the index just after the value that starts at data[i].
func SkipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		for i++; ; i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch data[i] {
			case '"':
				i = SkipValue(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for ; i < len(data); i++ { // a number or a literal
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			return i
		}
	}
	return i
}

// Elements yields the elements of the array raw.
func Elements(raw []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		i := skipSpace(raw, 1)
		for raw[i] != ']' {
			end := SkipValue(raw, i)
			if !yield(raw[i:end]) {
				return
			}
			i = skipSpace(raw, end)
			if raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	}
}

// Fields yields the keys (unescaped) and values of the object raw. A key is a slice of raw
// unless it has escapes; it is valid until the next iteration only if copied.
func Fields(raw []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		i := skipSpace(raw, 1)
		for raw[i] != '}' {
			end := SkipValue(raw, i)
			key := Unquote(raw[i:end])
			i = skipSpace(raw, end) + 1 // ':'
			i = skipSpace(raw, i)
			end = SkipValue(raw, i)
			if !yield(key, raw[i:end]) {
				return
			}
			i = skipSpace(raw, end)
			if raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	}
}

// Unquote returns the value of the string raw (with its quotes): a slice of raw when it has
// no escapes.
func Unquote(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	var s string
	json.Unmarshal(raw, &s) // cannot fail on checked input
	return []byte(s)
}

// ---- encoding ----

// Marshal encodes v as compact JSON without HTML escaping, so that text reaches clients as
// written ("<" stays "<").
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := MarshalInto(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// AppendString appends s as a JSON string, escaped as Marshal escapes a string: quote,
// backslash and control characters, U+2028 and U+2029, and invalid UTF-8 as U+FFFD; never HTML.
func AppendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), `\u202`...)
			dst = append(dst, hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// MarshalInto is Marshal into buf, which it empties first.
func MarshalInto(buf *bytes.Buffer, v any) error {
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// Results are encoded into buffers kept for the next answer (a recall's result is 5-10 KB and
// was garbage once its response had copied it). A buffer goes back to the pool only once what
// it holds is copied out: a result's when its response is encoded (response.appendTo), a tool's
// structured content's when its callResult is (exec). One grown past pooledMax is left to the
// collector.
var resultBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const pooledMax = 64 << 10

// GetResultBuf returns an empty buffer from resultBufs.
func GetResultBuf() *bytes.Buffer { return resultBufs.Get().(*bytes.Buffer) }

// PutResultBuf gives b back to resultBufs, unless it grew past pooledMax. Nothing may use b
// after.
func PutResultBuf(b *bytes.Buffer) {
	if b.Cap() <= pooledMax {
		resultBufs.Put(b)
	}
}

// messageBufs keeps the arrays HTTP answers are encoded into, for the next answer: the
// message is written to the client before the handler returns, and then the array is free.
var messageBufs bytePool

type bytePool struct{ p sync.Pool }

// GetMessageBuf returns an empty slice from messageBufs (see bytePool.get).
func GetMessageBuf() []byte { return messageBufs.get() }

// PutMessageBuf gives b's array back to messageBufs (see bytePool.put).
func PutMessageBuf(b []byte) { messageBufs.put(b) }

// get returns an empty slice, with the capacity of an earlier message if one was put back.
func (bp *bytePool) get() []byte {
	if b, ok := bp.p.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// put keeps b's array for a later get, unless it grew past pooledMax. Nothing may use b after.
func (bp *bytePool) put(b []byte) {
	if cap(b) > 0 && cap(b) <= pooledMax {
		bp.p.Put(&b)
	}
}

// Members decodes a JSON object into its members by exact key (encoding/json matches struct
// fields case-insensitively; a map never does). raw has passed CheckJSON, so keys are unique.
func Members(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}
