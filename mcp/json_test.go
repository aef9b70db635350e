package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ownsona/ownsona/jsonrpc"
)

// referenceCheck is an independent strict check built only from encoding/json and
// unicode/utf8: the Decoder's token walk (with UseNumber, so that 1e400 is not an error)
// detects duplicate keys after unescaping, counts depth and keys, and requires exactly one
// value. It is more lenient than checkJSON in one known way: encoding/json turns lone
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
			if len(top.keys) > jsonrpc.MaxObjectKeys {
				return errors.New("too many keys")
			}
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &frame{object: tok == json.Delim('{'), keys: map[string]bool{}, key: true})
			if len(stack) > jsonrpc.MaxDepth {
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

// walk decodes checked JSON with the raw walkers (fields, elements, unquote, skipValue).
func walk(raw []byte) any {
	switch typeOf(raw) {
	case "object":
		m := map[string]any{}
		for k, v := range jsonrpc.Fields(raw) {
			m[string(k)] = walk(v)
		}
		return m
	case "array":
		a := []any{}
		for el := range jsonrpc.Elements(raw) {
			a = append(a, walk(el))
		}
		return a
	case "string":
		return string(jsonrpc.Unquote(raw))
	case "null":
		return nil
	case "boolean":
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
		if got := walk([]byte(in)); !jsonEqual(got, want) {
			t.Errorf("walk(%s) = %#v, want %#v", in, got, want)
		}
	}
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

// FuzzDecodeEnvelope checks the strict decoder against referenceCheck: it never accepts what
// the reference rejects; an accepted envelope has exactly the reference's members, its
// method, and an id that is re-marshalled byte for byte; nothing panics, and the whole
// pipeline (Handle) answers everything.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","paramſ":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212A":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212Aey":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"fail","arguments":{"text":"a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","Text":"b"}}}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00<&>","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}",
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},"a":1}}`,
		`[{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0,"\u0071":0}]`,
	} {
		f.Add([]byte(seed))
	}
	fx := MustOpenFixture(f)
	close(fx.release) // the slow tool returns at once
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, batch, fail := jsonrpc.DecodeMessage(data)
		ref := referenceCheck(data)
		if fail != nil && fail.Code == jsonrpc.CodeParseError {
			if out := fx.Handle(context.Background(), data); !bytes.Contains(out, []byte(`"code":-32700`)) {
				t.Fatalf("Handle answered a parse error with %s", out)
			}
			return
		}
		if ref != nil {
			t.Fatalf("accepted what the reference rejects (%v): %q", ref, data)
		}
		// The raw walkers that validation uses agree with encoding/json.
		trimmed := bytes.Trim(data, " \t\r\n")
		if want, err := decodeValue(trimmed); err != nil || !jsonEqual(walk(trimmed), want) {
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
		if fail == nil && len(reqs) != len(raws) {
			t.Fatalf("%d requests from %d elements", len(reqs), len(raws))
		}
		for i, r := range reqs {
			env, ok := referenceEnvelope(raws[i])
			if !ok {
				if r.Invalid == nil {
					t.Fatalf("element %d is not an object but was accepted: %s", i, raws[i])
				}
				continue
			}
			if r.Invalid != nil || r.IsResponse {
				continue
			}
			for k := range env {
				if !slices.Contains(jsonrpc.EnvelopeKeys, k) {
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
				out := (&jsonrpc.Response{ID: r.ID, Result: []byte("{}")}).Encode()
				if want := append([]byte(`{"jsonrpc":"2.0","id":`), r.ID...); !bytes.HasPrefix(out, want) {
					t.Fatalf("id %s re-marshalled as %s", r.ID, out)
				}
				if !json.Valid(out) {
					t.Fatalf("response is not JSON: %s", out)
				}
			}
		}
		out := fx.Handle(context.Background(), data)
		if out != nil && !json.Valid(out) {
			t.Fatalf("Handle answered invalid JSON: %s", out)
		}
	})
}
