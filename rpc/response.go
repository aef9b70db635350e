package rpc

import (
	"bytes"
	"encoding/json"
	"slices"
)

// response is one JSON-RPC response; exactly one of result and err is set.
type response struct {
	id     json.RawMessage // as the request spelled it; nil for null
	result []byte
	err    *Error
	// pooled is the buffer of resultBufs that holds result, if one does: encode puts it back.
	pooled *bytes.Buffer
}

// appendTo appends the response's message to b. It is called once: a response whose result
// was in a pooled buffer gives it back and has no result left.
func (r *response) appendTo(b []byte) []byte {
	id := r.id
	if id == nil {
		id = json.RawMessage("null")
	}
	var body []byte
	key := `,"result":`
	if r.err != nil {
		e, err := marshal(r.err)
		if err != nil { // Data that does not marshal
			e, _ = marshal(&Error{Code: r.err.Code, Message: r.err.Message})
		}
		body, key = e, `,"error":`
	} else {
		body = r.result
	}
	const head = `{"jsonrpc":"2.0","id":`
	b = slices.Grow(b, len(head)+len(id)+len(key)+len(body)+2) // and stdio's newline
	b = append(append(append(append(append(b, head...), id...), key...), body...), '}')
	if r.pooled != nil {
		putResultBuf(r.pooled)
		r.pooled, r.result = nil, nil
	}
	return b
}

// encode returns the response's message in a slice of its own (see appendTo).
func (r *response) encode() []byte { return r.appendTo(nil) }

// encodeAll appends to dst the message of out: its one response, or the batch of them.
func encodeAll(dst []byte, batch bool, out []*response) []byte {
	if !batch {
		return out[0].appendTo(dst)
	}
	dst = append(dst, '[')
	for i, r := range out {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.appendTo(dst)
	}
	return append(dst, ']')
}
