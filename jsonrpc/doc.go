// Package jsonrpc is ownsona's JSON-RPC 2.0 framing (jsonrpc.org/specification): a strict JSON
// checker, the envelope decoder, responses and batches, the five error codes of the
// specification with their messages, and the raw walkers and encoders the protocol code reads
// and writes messages with. It knows no method: package mcp dispatches what it decodes. It
// imports no package of ours.
//
// The simplest use:
//
//	msgs, batch, fail := jsonrpc.DecodeMessage(body) // fail: the message as a whole is refused
//	for _, m := range msgs {
//		// m.Invalid: answer with it and run nothing; m.ID == nil: a notification
//	}
//	out := jsonrpc.EncodeAll(nil, batch, []*jsonrpc.Response{{ID: msgs[0].ID, Result: []byte(`{}`)}})
//
// # Caveats
//
//   - CheckJSON runs over every message before anything is unmarshalled, and never repairs:
//     invalid UTF-8, lone or reversed \u surrogates, duplicate keys (after unescaping), nesting
//     deeper than MaxDepth and objects of more than MaxObjectKeys keys are parse errors. Later
//     stages may use encoding/json on the checked bytes, as long as they match keys exactly
//     (Members, never struct matching).
//   - A batch is counted before any element is decoded, and refused beyond MaxBatch; an id of
//     more than MaxID bytes of JSON is refused with a null id. Whether batches are allowed at
//     all is the protocol's choice, not this package's.
//   - The walkers (SkipValue, Elements, Fields, Unquote) assume input CheckJSON accepted and do
//     not check it again.
//   - A Response whose Result is in a pooled buffer (GetResultBuf) gives it back when encoded:
//     AppendTo is called once.
package jsonrpc
