package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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
				t.Errorf("checkJSON(%q) = %v, want accepted", tc.in, err)
			case tc.want != "" && err == nil:
				t.Errorf("checkJSON(%q) accepted, want an error with %q", tc.in, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("checkJSON(%q) = %v, want an error with %q", tc.in, err, tc.want)
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
				t.Fatalf("decodeMessage = %d requests, %v", len(reqs), fail)
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

// FuzzAppendJSONString: appendJSONString writes what marshal writes for the same text as a
// string, whatever its bytes (control characters, quotes, U+2028, invalid UTF-8).
func FuzzAppendJSONString(f *testing.F) {
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
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got[len("prefix"):], want)
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
