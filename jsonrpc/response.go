package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Response is one JSON-RPC response; exactly one of Result and Err is set.
type Response struct {
	ID     json.RawMessage // as the request spelled it; nil for null
	Result []byte
	Err    *Error
	// Pooled is the buffer of GetResultBuf that holds Result, if one does: AppendTo puts it
	// back.
	Pooled *bytes.Buffer
}

// AppendTo appends the response's message to b. It is called once: a response whose result
// was in a pooled buffer gives it back and has no result left.
func (r *Response) AppendTo(b []byte) []byte {
	id := r.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	var body []byte
	key := `,"result":`
	if r.Err != nil {
		e, err := Marshal(r.Err)
		if err != nil { // Data that does not marshal
			e, _ = Marshal(&Error{Code: r.Err.Code, Message: r.Err.Message})
		}
		body, key = e, `,"error":`
	} else {
		body = r.Result
	}
	const head = `{"jsonrpc":"2.0","id":`
	b = slices.Grow(b, len(head)+len(id)+len(key)+len(body)+2) // and stdio's newline
	b = append(append(append(append(append(b, head...), id...), key...), body...), '}')
	if r.Pooled != nil {
		PutResultBuf(r.Pooled)
		r.Pooled, r.Result = nil, nil
	}
	return b
}

// Encode returns the response's message in a slice of its own (see AppendTo).
func (r *Response) Encode() []byte { return r.AppendTo(nil) }

// EncodeAll appends to dst the message of out: its one response, or the batch of them.
func EncodeAll(dst []byte, batch bool, out []*Response) []byte {
	if !batch {
		return out[0].AppendTo(dst)
	}
	dst = append(dst, '[')
	for i, r := range out {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.AppendTo(dst)
	}
	return append(dst, ']')
}
