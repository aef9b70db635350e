package web

// A scanner that looks at a JSON-RPC body without building anything from it (SECURITY.md
// LA-11): whether a batch is over the limit, and the id of a single message. A 4 MiB array of
// 2M zeros decoded element by element costs hundreds of MiB; counting its commas costs nothing.
// It is lenient — it matches strings and brackets, and checks neither numbers nor literals nor
// which bracket closes which — because the mcp server's strict decoder (jsonrpc's) judges every body that
// gets past the check; the scanner only has to see what that decoder will see in a body it
// accepts.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
)

// maxBatch is the most messages in a batch: the mcp server's limit (jsonrpc.MaxBatch), refused
// here too, before the elements are decoded to read them ahead.
const maxBatch = 20

// errBatchTooLarge is the refusal of a batch over maxBatch, in the mcp server's words.
var errBatchTooLarge = fmt.Sprintf("batch of more than %d messages; the limit is %d", maxBatch, maxBatch)

// scanner walks a JSON text from i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && strings.IndexByte(" \t\r\n", s.b[s.i]) >= 0 {
		s.i++
	}
}

// skip passes over one value; false when the text ends inside it or no value starts at i.
func (s *scanner) skip() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case ',', ':', '}', ']':
		return false
	}
	start := s.i // a number or a literal
	for s.i < len(s.b) && strings.IndexByte(" \t\r\n,:]}[{\"", s.b[s.i]) < 0 {
		s.i++
	}
	return s.i > start
}

// str passes over the string that starts at i.
func (s *scanner) str() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}

// batchOver reports whether body is a JSON array of more than limit elements. It stops
// scanning at the element after the limit, and decodes none.
func batchOver(body []byte, limit int) bool {
	s := scanner{b: body}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	for n := 0; ; {
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' || !s.skip() {
			return false
		}
		if n++; n > limit {
			return true
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ',' {
			return false
		}
		s.i++
	}
}

// memberOf returns the raw value of the member key of body when body is one JSON object that
// has it, as a slice of body; nil otherwise. Only the exact spelling of key matches (so does
// the mcp server's decoder), and nothing is decoded.
func memberOf(body []byte, key string) []byte {
	s := scanner{b: body}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil
	}
	s.i++
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil
		}
		start := s.i
		if !s.str() {
			return nil
		}
		name := s.b[start+1 : s.i-1]
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil
		}
		s.i++
		s.space()
		vstart := s.i
		if !s.skip() {
			return nil
		}
		if string(name) == key {
			return s.b[vstart:s.i]
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ',' {
			return nil
		}
		s.i++
	}
}

// writeBatchTooLarge answers a batch over maxBatch as the mcp server answers one: 400 with
// JSON-RPC error -32600 and the reason in its data.
func writeBatchTooLarge(w http.ResponseWriter) {
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", json.RawMessage("null"), jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: jsonrpc.MessageInvalidRequest,
		Data: map[string]string{"reason": errBatchTooLarge}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(body, '\n'))
}
