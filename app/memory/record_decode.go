package memory

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// recordDecoder reads a stored memory record faster than encoding/json, for Open, which reads
// every record of the file. It understands the records encodeMemory writes: one JSON object
// with record's keys spelled as they are stored, each at most once, and values of their
// fields' types. Anything else (another spelling of a key, an unknown key, a null where the
// field is not a pointer, a surrogate escape, invalid UTF-8, bad JSON) makes it decline, and
// the caller decodes the record with encoding/json, which then decides: so a record decodes to
// the same Memory either way (FuzzRecordDecoder), and nothing a record may hold is refused
// here that encoding/json accepts.
//
// It interns the short strings that repeat across records (tags, where a memory came from),
// so that 100k memories share a handful of copies, and hands out Memory values from blocks of
// memoryBlock: a Memory is 272 bytes, which Go's allocator would round up to 288 one at a time
// (1.6 MB at 100k). A block stays allocated while any of its memories is held, so a store
// that later forgets most of them keeps at most what it loaded. A decoder is not safe for
// concurrent use.
type recordDecoder struct {
	intern map[string]string
	block  []Memory // the next memories to hand out
}

// memoryBlock is how many memories a decoder allocates at a time: Open's chunk.
const memoryBlock = 1024

// internMax bounds the strings a decoder interns and how many it keeps.
const (
	internMaxLen   = 64
	internMaxCount = 4096
)

// record's keys, as bits of the set a record has named.
const (
	keyID = 1 << iota
	keyText
	keyTags
	keyImportance
	keyCreatedAt
	keyUpdatedAt
	keyLastConfirmedAt
	keyExpiresAt
	keySourceProvider
	keySourceClient
	keyCaptureMode
	keySessionID
	keyDeletedAt
	keyForgetReason
	keyReplacedByID
	keySupersedes
	keySupersededBy
)

// decode returns the memory of record b, or false when b is not a record it understands.
func (d *recordDecoder) decode(b []byte) (*Memory, bool) {
	p := recordParser{b: b, d: d}
	if len(d.block) == 0 {
		d.block = make([]Memory, memoryBlock)
	}
	m := &d.block[0]
	ok := p.object(m)
	if ok {
		p.skipSpace()
		ok = p.i == len(p.b)
	}
	if !ok {
		*m = Memory{} // declined: the slot goes to the next record
		return nil, false
	}
	d.block = d.block[1:]
	if m.Tags == nil {
		m.Tags = []string{}
	}
	return m, true
}

// recordParser is one record being read: b from i on.
type recordParser struct {
	b []byte
	i int
	d *recordDecoder
}

func (p *recordParser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// consume skips spaces and then c, reporting whether c was there.
func (p *recordParser) consume(c byte) bool {
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// null consumes a JSON null if one comes next.
func (p *recordParser) null() bool {
	p.skipSpace()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

func (p *recordParser) object(m *Memory) bool {
	if !p.consume('{') {
		return false
	}
	if p.consume('}') {
		return true
	}
	seen := 0
	for {
		key, ok := p.rawString()
		if !ok || !p.consume(':') {
			return false
		}
		bit, ok := p.field(m, key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.consume(',') {
			continue
		}
		return p.consume('}')
	}
}

// field reads the value of key into m and returns key's bit.
func (p *recordParser) field(m *Memory, key []byte) (int, bool) {
	var ok bool
	switch string(key) {
	case "id":
		m.ID, ok = p.uint()
		return keyID, ok
	case "text":
		m.Text, ok = p.str(false)
		return keyText, ok
	case "tags":
		m.Tags, ok = list(p, func() (string, bool) { return p.str(true) })
		return keyTags, ok
	case "importance":
		m.Importance, ok = p.float()
		return keyImportance, ok
	case "created_at":
		return keyCreatedAt, p.time(&m.CreatedAt)
	case "updated_at":
		return keyUpdatedAt, p.time(&m.UpdatedAt)
	case "last_confirmed_at":
		return keyLastConfirmedAt, p.time(&m.LastConfirmedAt)
	case "expires_at":
		m.ExpiresAt, ok = p.timePtr()
		return keyExpiresAt, ok
	case "source_provider":
		m.SourceProvider, ok = p.str(true)
		return keySourceProvider, ok
	case "source_client":
		m.SourceClient, ok = p.str(true)
		return keySourceClient, ok
	case "capture_mode":
		m.CaptureMode, ok = p.str(true)
		return keyCaptureMode, ok
	case "session_id":
		m.SessionID, ok = p.str(true)
		return keySessionID, ok
	case "deleted_at":
		m.DeletedAt, ok = p.timePtr()
		return keyDeletedAt, ok
	case "forget_reason":
		m.ForgetReason, ok = p.str(false)
		return keyForgetReason, ok
	case "replaced_by_id":
		m.ReplacedByID, ok = p.uintPtr()
		return keyReplacedByID, ok
	case "supersedes":
		m.Supersedes, ok = list(p, p.uint)
		return keySupersedes, ok
	case "superseded_by":
		m.SupersededBy, ok = p.uintPtr()
		return keySupersededBy, ok
	}
	return 0, false
}

// rawString reads a string without escapes and returns its bytes in b (a key).
func (p *recordParser) rawString() ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str reads a JSON string: its escapes, except a surrogate's, are undone; interned when short.
func (p *recordParser) str(intern bool) (string, bool) {
	if !p.consume('"') {
		return "", false
	}
	start, ascii := p.i, true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false // encoding/json would replace the bad bytes
			}
			if intern {
				return p.d.interned(raw), true
			}
			return string(raw), true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	return "", false
}

// escaped finishes a string that has an escape at p.i, which began at start.
func (p *recordParser) escaped(start int) (string, bool) {
	out := make([]byte, 0, p.i-start+16)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", false
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if p.i+4 > len(p.b) {
				return "", false
			}
			r, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 16)
			if err != nil || p.b[p.i] == '+' || (r >= 0xd800 && r < 0xe000) {
				return "", false // a surrogate: encoding/json pairs or replaces it
			}
			out = utf8.AppendRune(out, rune(r))
			p.i += 4
		default:
			return "", false
		}
	}
	return "", false
}

// interned returns raw as a string, shared with earlier records when short.
func (d *recordDecoder) interned(raw []byte) string {
	if len(raw) > internMaxLen {
		return string(raw)
	}
	if s, ok := d.intern[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if d.intern == nil {
		d.intern = make(map[string]string)
	}
	if len(d.intern) < internMaxCount {
		d.intern[s] = s
	}
	return s
}

// list reads a JSON array whose items item reads; [] is an empty slice, not nil, as
// encoding/json has it.
func list[T any](p *recordParser, item func() (T, bool)) ([]T, bool) {
	if !p.consume('[') {
		return nil, false
	}
	out := []T{}
	if p.consume(']') {
		return out, true
	}
	for {
		v, ok := item()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.consume(',') {
			continue
		}
		return out, p.consume(']')
	}
}

// number returns the bytes of a JSON number, checked against JSON's grammar.
func (p *recordParser) number() ([]byte, bool) {
	p.skipSpace()
	b, i := p.b, p.i
	digits := func() bool {
		from := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > from
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	num := b[p.i:i]
	p.i = i
	return num, true
}

// uint reads a non-negative integer that fits a uint64 (encoding/json refuses the others).
func (p *recordParser) uint() (uint64, bool) {
	num, ok := p.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(string(num), 10, 64)
	return n, err == nil
}

func (p *recordParser) uintPtr() (*uint64, bool) {
	if p.null() {
		return nil, true
	}
	n, ok := p.uint()
	if !ok {
		return nil, false
	}
	return &n, true
}

func (p *recordParser) float() (float64, bool) {
	num, ok := p.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return f, err == nil
}

// time reads a timestamp the way encoding/json does: Time.UnmarshalJSON of the quoted value.
func (p *recordParser) time(t *time.Time) bool {
	p.skipSpace()
	start := p.i
	if _, ok := p.rawString(); !ok {
		return false
	}
	return t.UnmarshalJSON(p.b[start:p.i]) == nil
}

func (p *recordParser) timePtr() (*time.Time, bool) {
	if p.null() {
		return nil, true
	}
	var t time.Time
	if !p.time(&t) {
		return nil, false
	}
	return &t, true
}
