package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestResponse_Encode(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Response
		want string
	}{
		{"result", &Response{ID: json.RawMessage(`"a"`), Result: []byte(`{"x":1}`)}, `{"jsonrpc":"2.0","id":"a","result":{"x":1}}`},
		{"id kept as sent", &Response{ID: json.RawMessage(`1.50E+02`), Result: []byte(`{}`)}, `{"jsonrpc":"2.0","id":1.50E+02,"result":{}}`},
		{"no id is null", &Response{Err: ParseError("x")}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"x"}}}`},
		{"error", &Response{ID: json.RawMessage("2"), Err: InternalError()}, `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}`},
		{"data that does not marshal is dropped", &Response{ID: json.RawMessage("1"), Err: &Error{Code: -32000, Message: "m", Data: func() {}}}, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.r.Encode()); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("pooled result is given back", func(t *testing.T) {
		buf := GetResultBuf()
		buf.Reset()
		buf.WriteString(`{"n":1}`)
		r := &Response{ID: json.RawMessage("3"), Result: buf.Bytes(), Pooled: buf}
		if got, want := string(r.Encode()), `{"jsonrpc":"2.0","id":3,"result":{"n":1}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if r.Pooled != nil || r.Result != nil {
			t.Errorf("after encoding, Pooled = %v and Result = %q, want both nil", r.Pooled, r.Result)
		}
	})
}

func TestEncodeAll(t *testing.T) {
	one := func(id string) *Response { return &Response{ID: json.RawMessage(id), Result: []byte(`{}`)} }
	for _, tc := range []struct {
		name  string
		dst   string
		batch bool
		out   []*Response
		want  string
	}{
		{"single", "", false, []*Response{one("1")}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"batch of one", "", true, []*Response{one("1")}, `[{"jsonrpc":"2.0","id":1,"result":{}}]`},
		{"batch of two", "", true, []*Response{one("1"), {ID: json.RawMessage(`"b"`), Err: MethodNotFound("x")}},
			`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}]`},
		{"appended to dst", "data: ", true, []*Response{one("1")}, `data: [{"jsonrpc":"2.0","id":1,"result":{}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(EncodeAll([]byte(tc.dst), tc.batch, tc.out)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
