package rpc

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of the strict decoder.
const (
	maxDepth      = 64
	maxObjectKeys = 10000
)

// checkJSON validates data as exactly one JSON value (RFC 8259) with surrounding whitespace,
// rejecting what encoding/json would silently accept or repair: invalid UTF-8 (raw or as lone
// \u surrogates), duplicate keys in any object (compared after unescaping), nesting deeper than
// maxDepth and objects with more than maxObjectKeys keys. The error names the problem and its
// byte offset.
func checkJSON(data []byte) error {
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
	data []byte
	pos  int
}

type jsonError struct {
	offset int
	reason string
}

func (e *jsonError) Error() string { return fmt.Sprintf("%s at byte %d", e.reason, e.offset) }

func (p *jsonChecker) errorf(format string, args ...any) error {
	return &jsonError{offset: p.pos, reason: fmt.Sprintf(format, args...)}
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
		_, err := p.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		if c >= 0x80 {
			return p.errorf("unexpected non-ASCII byte")
		}
		return p.errorf("unexpected character %q", c)
	}
}

func (p *jsonChecker) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.errorf("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *jsonChecker) object(depth int) error {
	if depth > maxDepth {
		return p.errorf("nesting deeper than %d", maxDepth)
	}
	p.pos++ // {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	keys := map[string]struct{}{}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.errorf("expected a string key")
		}
		start := p.pos
		key, err := p.str()
		if err != nil {
			return err
		}
		if _, dup := keys[key]; dup {
			p.pos = start
			return p.errorf("duplicate key %q", key)
		}
		keys[key] = struct{}{}
		if len(keys) > maxObjectKeys {
			return p.errorf("object with more than %d keys", maxObjectKeys)
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
			return nil
		default:
			return p.errorf("expected ',' or '}' in an object")
		}
	}
}

func (p *jsonChecker) array(depth int) error {
	if depth > maxDepth {
		return p.errorf("nesting deeper than %d", maxDepth)
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

// str checks a string starting at '"' and returns its unescaped value.
func (p *jsonChecker) str() (string, error) {
	p.pos++ // opening quote
	var out []byte
	for {
		if p.pos >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				return "", p.errorf("unterminated escape")
			}
			e := p.data[p.pos+1]
			p.pos += 2
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
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 || p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
						return "", p.errorf("lone UTF-16 surrogate in a \\u escape")
					}
					p.pos += 2
					r2, err := p.hex4()
					if err != nil {
						return "", err
					}
					r = utf16.DecodeRune(r, r2)
					if r == utf8.RuneError {
						return "", p.errorf("invalid UTF-16 surrogate pair in a \\u escape")
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				p.pos--
				return "", p.errorf("invalid escape \\%c", e)
			}
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8")
			}
			out = append(out, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

func (p *jsonChecker) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return rune(v), nil
}

func (p *jsonChecker) number() error {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		p.pos = start
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
