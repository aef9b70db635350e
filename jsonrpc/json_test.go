package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckJSON(t *testing.T) {
	// many is an object of keys k0…k(n-1), then extra (members with their leading commas).
	many := func(n int, extra string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"k%d":0,`, i)
		}
		return "{" + strings.TrimSuffix(b.String(), ",") + extra + "}"
	}
	for _, tc := range []struct {
		name, in string
		want     string // "" = accepted; else a substring of the error
	}{
		{"empty object", `{}`, ""},
		{"scalars and whitespace", " \t\r\n[1, -0, -0.5e+3, 1E-2, \"a\\u00e9\\/\", true, false, null] ", ""},
		{"surrogate pair", `"\ud83d\ude00"`, ""},
		{"uppercase hex escape", `"\uD83D\uDE00"`, ""},
		{"raw UTF-8", "\"h\u00e9llo \u4e16\u754c \U0001F600\"", ""},
		{"NUL escape is fine in a value", `{"a":"\u0000"}`, ""},
		{"huge number", `[1e400, 123456789012345678901234567890]`, ""},
		{"nested 64", strings.Repeat("[", 64) + strings.Repeat("]", 64), ""},

		{"empty input", ``, "unexpected end of input"},
		{"only whitespace", `  `, "unexpected end of input"},
		{"duplicate key", `{"a":1,"a":2}`, `duplicate key "a"`},
		{"duplicate after unescaping", `{"a":1,"\u0061":2}`, `duplicate key "a"`},
		{"duplicate escaped slash", `{"/":1,"\/":2}`, `duplicate key "/"`},
		{"duplicate deep inside", `{"x":[{"y":{"k":1,"k":2}}]}`, `duplicate key "k"`},
		{"same key in sibling objects is fine", `[{"a":1},{"a":1}]`, ""},
		{"case variants are distinct keys", `{"a":1,"A":2}`, ""},
		{"17 keys", many(17, ""), ""},
		{"duplicate of the first key as the 20th", many(19, `,"k0":1`), `duplicate key "k0" at byte 143`},
		{"duplicate past 16, the earliest named", many(18, `,"k17":1,"k3":1`), `duplicate key "k17" at byte 135`},
		{"duplicate within the first 16 of many", many(3, `,"k1":1,`+strings.TrimSuffix(strings.TrimPrefix(many(20, ""), "{"), "}")), `duplicate key "k1" at byte 22`},
		{"same 17 keys in sibling objects are fine", "[" + many(17, "") + "," + many(17, "") + "]", ""},
		{"17 keys inside an object of 17 keys", many(17, `,"in":`+many(17, "")), ""},
		{"duplicate outside, after an inner object of 17 keys", many(17, `,"in":`+many(17, "")+`,"k16":1`), `duplicate key "k16" at byte 260`},
		{"duplicate inside an inner object of 17 keys", many(17, `,"in":`+many(17, `,"k5":1`)), `duplicate key "k5" at byte 259`},
		{"nested 65", strings.Repeat("[", 65) + strings.Repeat("]", 65), "nesting deeper than 64"},
		{"objects nested 65", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), "nesting deeper than 64"},
		{"trailing value", `{} {}`, "unexpected data after"},
		{"trailing comma in array", `[1,]`, "unexpected character"},
		{"trailing comma in object", `{"a":1,}`, "expected a string key"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"single quotes", `{'a':1}`, "expected a string key"},
		{"unquoted key", `{a:1}`, "expected a string key"},
		{"leading zero", `[01]`, "expected ',' or ']'"},
		{"bare minus", `[-]`, "invalid number"},
		{"no digits after point", `[1.]`, "no digits after '.'"},
		{"leading point", `[.5]`, "unexpected character"},
		{"plus sign", `[+1]`, "unexpected character"},
		{"empty exponent", `[1e]`, "no digits in the exponent"},
		{"NaN", `[NaN]`, "unexpected character"},
		{"bad literal", `[nul]`, "invalid literal"},
		{"truncated literal", `tru`, "invalid literal"},
		{"unterminated string", `"abc`, "unterminated string"},
		{"bad escape", `"\x41"`, `invalid escape \x`},
		{"short unicode escape", `"\u12"`, `invalid \u escape`},
		{"non-hex unicode escape", `"\u12g4"`, `invalid \u escape`},
		{"raw tab in string", "\"a\tb\"", "control character 0x09"},
		{"raw newline in string", "\"a\nb\"", "control character 0x0a"},
		{"lone high surrogate", `"\ud800"`, "lone UTF-16 high surrogate"},
		{"high surrogate then letter", `"\ud800x"`, "lone UTF-16 high surrogate"},
		{"high surrogate then BMP escape", `"\ud800\u0041"`, "lone UTF-16 high surrogate"},
		{"two high surrogates", `"\ud800\ud800"`, "lone UTF-16 high surrogate"},
		{"lone low surrogate", `"\udc00"`, "lone UTF-16 low surrogate"},
		{"reversed pair", `"\ude00\ud83d"`, "lone UTF-16 low surrogate"},
		{"surrogate in a key", `{"\ud800":1}`, "lone UTF-16 high surrogate"},
		{"invalid UTF-8 byte", "\"a\xffb\"", "invalid UTF-8"},
		{"invalid UTF-8 in a key", "{\"k\xc3\":1}", "invalid UTF-8"},
		{"truncated sequence", "\"\xc3\"", "invalid UTF-8"},
		{"overlong encoding", "\"\xc0\xaf\"", "invalid UTF-8"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", "invalid UTF-8"},
		{"byte order mark", "\xef\xbb\xbf{}", "non-ASCII byte 0xef"},
		{"vertical tab is not whitespace", "\v{}", "unexpected character"},
		{"non-breaking space is not whitespace", "\u00a0{}", "non-ASCII byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.in))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckJSON(%q) = %v, want accepted", tc.in, err)
			case tc.want != "" && err == nil:
				t.Errorf("CheckJSON(%q) accepted, want an error with %q", tc.in, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("CheckJSON(%q) = %v, want an error with %q", tc.in, err, tc.want)
			}
			if err == nil && !json.Valid([]byte(tc.in)) {
				t.Errorf("accepted %q, which encoding/json calls invalid", tc.in)
			}
		})
	}
}

func TestCheckJSON_Limits(t *testing.T) {
	keys := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":0`, i)
		}
		b.WriteString("}")
		return b.String()
	}
	for _, tc := range []struct {
		name, in string
		want     string
	}{
		{"10000 keys", keys(MaxObjectKeys), ""},
		{"10001 keys", keys(MaxObjectKeys + 1), "more than 10000 keys"},
		{"100k nested arrays (SECURITY LA-02)", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), "nesting deeper than 64"},
		{"100k nested, unbalanced", strings.Repeat("[", 100000), "nesting deeper than 64"},
		{"100k-key object (SECURITY LA-03)", keys(100000), "more than 10000 keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Errorf("got %v, want accepted", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestDecodeMessage(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		wantFail   int    // code of a whole-message error, 0 if none
		wantID     string // the element's id as kept
		wantMethod string
		invalid    string // substring of the element's -32600 reason
		badParam   bool
		response   bool
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}`, wantID: "7", wantMethod: "ping"},
		{name: "leading whitespace", in: " \n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r\n", wantID: "7", wantMethod: "ping"},
		{name: "escaped method", in: `{"jsonrpc":"2\u002e0","id":"a","method":"tools\/list"}`, wantID: `"a"`, wantMethod: "tools/list"},
		{name: "id kept byte for byte", in: `{"jsonrpc":"2.0","id":  -1.50E+02 ,"method":"ping"}`, wantID: "-1.50E+02", wantMethod: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantMethod: "notifications/initialized"},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, wantFail: CodeParseError},
		{name: "Method", in: `{"jsonrpc":"2.0","id":1,"Method":"a"}`, wantID: "1", invalid: `unknown member "Method"`},
		{name: "PARAMS", in: `{"jsonrpc":"2.0","id":1,"method":"a","PARAMS":{}}`, wantID: "1", invalid: `unknown member "PARAMS"`},
		{name: "long s", in: `{"jsonrpc":"2.0","id":1,"method":"a","paramſ":{}}`, wantID: "1", invalid: `unknown member "paramſ"`},
		{name: "Kelvin", in: `{"jsonrpc":"2.0","id":1,"method":"a","\u212Aey":{}}`, wantID: "1", invalid: "unknown member \"\u212aey\""},
		{name: "NUL suffix", in: `{"jsonrpc":"2.0","id":1,"method":"a","method\u0000":"b"}`, wantID: "1", invalid: `unknown member "method\x00"`},
		{name: "ID", in: `{"jsonrpc":"2.0","ID":1,"method":"a"}`, invalid: `unknown member "ID"`},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"a"}`, invalid: "id must be"},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":false,"method":"a"}`, invalid: "id must be"},
		{name: "id of 256 bytes (SECURITY LA-12)", in: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 254) + `","method":"a"}`, wantID: `"` + strings.Repeat("i", 254) + `"`, wantMethod: "a"},
		{name: "id of 257 bytes", in: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 255) + `","method":"a"}`, invalid: "id of 257 bytes; the limit is 256 bytes of JSON"},
		{name: "id of 257 bytes, escaped", in: `{"jsonrpc":"2.0","id":"` + strings.Repeat(`\u0069`, 42) + `aaaa","method":"a"}`, invalid: "id of 258 bytes"},
		{name: "numeric id of 257 digits", in: `{"jsonrpc":"2.0","id":` + strings.Repeat("7", 257) + `,"method":"a"}`, invalid: "id of 257 bytes"},
		{name: "response with a long id", in: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","result":{}}`, invalid: "id of 302 bytes"},
		{name: "wrong version", in: `{"jsonrpc":"2.0 ","id":1,"method":"a"}`, wantID: "1", invalid: "jsonrpc must be"},
		{name: "no method", in: `{"jsonrpc":"2.0","id":1}`, wantID: "1", invalid: "method must be a string"},
		{name: "null method", in: `{"jsonrpc":"2.0","id":1,"method":null}`, wantID: "1", invalid: "method must be a string"},
		{name: "array params", in: `{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`, wantID: "1", wantMethod: "a", badParam: true},
		{name: "number params", in: `{"jsonrpc":"2.0","id":1,"method":"a","params":1}`, wantID: "1", invalid: "params must be an object"},
		{name: "response", in: `{"jsonrpc":"2.0","id":1,"result":null}`, wantID: "1", response: true},
		{name: "error response", in: `{"jsonrpc":"2.0","id":null,"error":{}}`, wantID: "null", response: true},
		{name: "not an object", in: `42`, invalid: "must be a JSON object"},
		{name: "empty batch", in: `[]`, wantFail: CodeInvalidRequest},
		{name: "batch of 21", in: "[" + strings.Repeat(`1,`, 20) + "1]", wantFail: CodeInvalidRequest},
		{name: "invalid UTF-8", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}", wantFail: CodeParseError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, _, fail := DecodeMessage([]byte(tc.in))
			if tc.wantFail != 0 {
				if fail == nil || fail.Code != tc.wantFail {
					t.Fatalf("fail = %v, want code %d", fail, tc.wantFail)
				}
				return
			}
			if fail != nil || len(reqs) != 1 {
				t.Fatalf("DecodeMessage = %d requests, %v", len(reqs), fail)
			}
			r := reqs[0]
			if got := string(r.ID); got != tc.wantID {
				t.Errorf("id = %q, want %q", got, tc.wantID)
			}
			if r.IsResponse != tc.response {
				t.Errorf("response = %v, want %v", r.IsResponse, tc.response)
			}
			if (r.BadParams != nil) != tc.badParam {
				t.Errorf("badParam = %v, want %v", r.BadParams, tc.badParam)
			}
			switch {
			case tc.invalid == "" && r.Invalid != nil:
				t.Errorf("invalid = %v, want valid", r.Invalid.Data)
			case tc.invalid != "" && (r.Invalid == nil || !strings.Contains(fmt.Sprint(r.Invalid.Data), tc.invalid)):
				t.Errorf("invalid = %v, want a reason with %q", r.Invalid, tc.invalid)
			case tc.invalid == "" && !tc.response && r.Method != tc.wantMethod:
				t.Errorf("method = %q, want %q", r.Method, tc.wantMethod)
			}
		})
	}
}

// referenceCheck is an independent strict check built only from encoding/json and
// unicode/utf8: the Decoder's token walk (with UseNumber, so that 1e400 is not an error)
// detects duplicate keys after unescaping, counts depth and keys, and requires exactly one
// value. It is more lenient than CheckJSON in one known way: encoding/json turns lone
// surrogate escapes into U+FFFD instead of refusing them.
func referenceCheck(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("invalid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // in an object, the next token is a key
	}
	var stack []*frame
	values := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key && tok != json.Delim('}') {
			k := tok.(string)
			if top.keys[k] {
				return fmt.Errorf("duplicate key %q", k)
			}
			top.keys[k] = true
			if len(top.keys) > MaxObjectKeys {
				return errors.New("too many keys")
			}
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &frame{object: tok == json.Delim('{'), keys: map[string]bool{}, key: true})
			if len(stack) > MaxDepth {
				return errors.New("too deep")
			}
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value (a scalar or a closed container) is complete.
		if len(stack) == 0 {
			values++
		} else if f := stack[len(stack)-1]; f.object {
			f.key = true
		}
	}
	if values != 1 {
		return fmt.Errorf("%d top-level values", values)
	}
	return nil
}

// walk decodes checked JSON with the raw walkers (Fields, Elements, Unquote, SkipValue), as
// encoding/json with UseNumber would: numbers stay json.Number, spelled as sent.
func walk(raw []byte) any {
	switch raw[0] {
	case '{':
		m := map[string]any{}
		for k, v := range Fields(raw) {
			m[string(k)] = walk(v)
		}
		return m
	case '[':
		a := []any{}
		for el := range Elements(raw) {
			a = append(a, walk(el))
		}
		return a
	case '"':
		return string(Unquote(raw))
	case 'n':
		return nil
	case 't', 'f':
		return raw[0] == 't'
	}
	return json.Number(raw)
}

func TestWalk(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `"a"`, `-1.5e3`, `true`, `false`, `null`,
		`{ "a" : [ 1 , { "b" : "c\"}" } , [ ] , { } ] , "\u0041\n" : null , "e" : -0 }`,
		"[\n\t\"]\",\r\n \"[\", 1e400 ,true,false ,null]",
		`{"k":{"k":{"k":[[[["\\"]]]]}}}`,
	} {
		want, err := decodeValue([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := walk([]byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("walk(%s) = %#v, want %#v", in, got, want)
		}
	}
}

// decodeValue decodes one JSON value with encoding/json, numbers kept as json.Number.
func decodeValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// referenceEnvelope decodes what referenceCheck accepted into its members.
func referenceEnvelope(data []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	return m, json.Unmarshal(data, &m) == nil
}

func TestReferenceCheck(t *testing.T) {
	for in, ok := range map[string]bool{
		`{}`: true, `[{"a":1},{"a":1}]`: true, `{"a":{"a":1}}`: true, `1e400`: true, `{"a":[]}`: true,
		`{"a":1,"a":2}`: false, `{"a":1,"\u0061":2}`: false, `{} {}`: false, `1 2`: false,
		"\"\xff\"": false, strings.Repeat("[", 65) + strings.Repeat("]", 65): false, ``: false,
		`{"a":{},"b":{},"a":1}`: false,
	} {
		if got := referenceCheck([]byte(in)) == nil; got != ok {
			t.Errorf("referenceCheck(%.40q) ok = %v, want %v", in, got, ok)
		}
	}
}

// FuzzDecodeMessage checks the decoder at the trust boundary against referenceCheck, built on
// encoding/json alone: DecodeMessage refuses with a parse error exactly what CheckJSON refuses,
// and never accepts what the reference rejects; the raw walkers read what encoding/json reads;
// only an empty batch or one over MaxBatch is refused whole, and a batch has as many messages
// as elements; no id over MaxID bytes is kept (SECURITY LA-12); an accepted request has exactly
// the reference's members and method, and an id that its response carries byte for byte;
// nothing panics.
// (mcp's FuzzServer_Handle drives the whole server with the same kind of input.)
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","paramſ":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212A":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212Aey":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"a","x":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00<&>","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 255) + `","method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[]`,
		"[" + strings.Repeat(`1,`, MaxBatch) + "1]",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}",
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
		`{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},"a":1}`,
		`[{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0,"\u0071":0}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checked := CheckJSON(data)
		reqs, batch, fail := DecodeMessage(data)
		if parseError := fail != nil && fail.Code == CodeParseError; parseError != (checked != nil) {
			t.Fatalf("DecodeMessage failed with %v, CheckJSON with %v: %q", fail, checked, data)
		}
		if checked != nil {
			return
		}
		if ref := referenceCheck(data); ref != nil {
			t.Fatalf("accepted what the reference rejects (%v): %q", ref, data)
		}
		// The raw walkers agree with encoding/json.
		trimmed := bytes.Trim(data, " \t\r\n")
		if want, err := decodeValue(trimmed); err != nil || !reflect.DeepEqual(walk(trimmed), want) {
			t.Fatalf("walking %q gave %#v, encoding/json %#v (%v)", data, walk(trimmed), want, err)
		}
		var raws []json.RawMessage
		if batch {
			if err := json.Unmarshal(data, &raws); err != nil {
				t.Fatal(err)
			}
		} else {
			raws = []json.RawMessage{data}
		}
		refuse := batch && (len(raws) == 0 || len(raws) > MaxBatch) // SECURITY LA-11
		if refuse != (fail != nil) || fail != nil && fail.Code != CodeInvalidRequest {
			t.Fatalf("a message of %d elements (batch %v) refused with %v: %.200q", len(raws), batch, fail, data)
		}
		if fail != nil {
			return
		}
		if len(reqs) != len(raws) {
			t.Fatalf("%d messages from %d elements", len(reqs), len(raws))
		}
		var out []*Response
		for i, r := range reqs {
			env, ok := referenceEnvelope(raws[i])
			if !ok {
				if r.Invalid == nil {
					t.Fatalf("element %d is not an object but was accepted: %s", i, raws[i])
				}
				continue
			}
			if id := env["id"]; len(id) > MaxID && (r.Invalid == nil || r.ID != nil) { // SECURITY LA-12
				t.Fatalf("kept an id of %d bytes (limit %d): %s", len(id), MaxID, raws[i])
			}
			if r.Invalid != nil || r.IsResponse {
				continue
			}
			for k := range env {
				if !slices.Contains(EnvelopeKeys, k) {
					t.Fatalf("accepted an envelope with member %q: %s", k, raws[i])
				}
			}
			var method string
			if json.Unmarshal(env["method"], &method) != nil || method != r.Method {
				t.Fatalf("method %q, reference %s", r.Method, env["method"])
			}
			if !bytes.Equal(r.ID, env["id"]) {
				t.Fatalf("id %s, reference %s", r.ID, env["id"])
			}
			if r.ID != nil {
				res := &Response{ID: r.ID, Result: []byte("{}")}
				if b := res.Encode(); !bytes.HasPrefix(b, append([]byte(`{"jsonrpc":"2.0","id":`), r.ID...)) {
					t.Fatalf("id %s re-marshalled as %s", r.ID, b)
				}
				out = append(out, res)
			}
		}
		if len(out) > 0 {
			if b := EncodeAll(nil, batch, out); !json.Valid(b) {
				t.Fatalf("the responses are not JSON: %s", b)
			}
		}
	})
}

// FuzzAppendString: AppendString writes what Marshal writes for the same text as a
// string, whatever its bytes (control characters, quotes, U+2028, invalid UTF-8).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"text":"a \"quoted\" \\ word"}`, "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		"<b>&amp;</b>", "line\u2028para\u2029", "bad \xff\xfe utf-8 \xe2\x82", "café 日本 🎉"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, err := Marshal(string(s))
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got[len("prefix"):], want)
		}
	})
}

// BenchmarkDecodeMessage decodes what clients send: a tools/call of remember's size, a batch of
// three, and a call whose arguments have more than 16 keys (the decoder's second way of
// finding duplicate keys).
func BenchmarkDecodeMessage(b *testing.B) {
	call := func(id int, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":%s,"_meta":{"progressToken":"p%d"}}}`, id, args, id)
	}
	remember := `{"text":"` + strings.Repeat("the cello lesson moved to Thursday ", 8) + `","tags":["music","schedule"],"importance":0.7,"kind":"fact"}`
	var wide strings.Builder
	for i := range 24 {
		fmt.Fprintf(&wide, `,"field%d":"value %d"`, i, i)
	}
	for _, bc := range []struct{ name, msg string }{
		{"request", call(1, remember)},
		{"batch of 3", "[" + call(1, remember) + "," + call(2, remember) + "," + call(3, remember) + "]"},
		{"24 keys", call(1, "{"+wide.String()[1:]+"}")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			msg := []byte(bc.msg)
			if _, _, fail := DecodeMessage(msg); fail != nil {
				b.Fatal(fail)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				DecodeMessage(msg)
			}
		})
	}
}
