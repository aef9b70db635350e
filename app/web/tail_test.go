package web

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAuditWriter_tail: whatever the sizes of the writes, the audit keeps the last auditTail
// bytes of the answer (all of a shorter one) in the array it was given (auditTails'), and the
// client gets every byte.
func TestAuditWriter_tail(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{0, 1, 100, auditTail - 1, auditTail, auditTail + 1, 3 * auditTail, 15 << 10}
	for round := range 300 {
		rec := httptest.NewRecorder()
		var array [auditTail]byte
		w := &auditWriter{ResponseWriter: rec, tail: array[:0]}
		var all []byte
		for range 1 + r.IntN(6) {
			n := sizes[r.IntN(len(sizes))]
			if round%2 == 1 {
				n = r.IntN(2 * auditTail)
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			w.Write(b)
			all = append(all, b...)
		}
		want := all[max(0, len(all)-auditTail):]
		if !bytes.Equal(w.tail, want) {
			t.Fatalf("round %d: the tail is %d bytes, not the answer's last %d", round, len(w.tail), len(want))
		}
		if cap(w.tail) != auditTail || &w.tail[:1][0] != &array[0] {
			t.Fatalf("round %d: the tail left the array it was given", round)
		}
		if !bytes.Equal(rec.Body.Bytes(), all) || w.size != int64(len(all)) {
			t.Fatalf("round %d: the client got %d bytes (size %d) of %d", round, rec.Body.Len(), w.size, len(all))
		}
	}
}

// BenchmarkAuditWriter writes one answer of a recall's size, its tail in an array of
// auditTails as auditMCP does.
func BenchmarkAuditWriter(b *testing.B) {
	answer := bytes.Repeat([]byte("x"), 15<<10)
	b.ReportAllocs()
	for b.Loop() {
		tail := auditTails.Get().(*[auditTail]byte)
		w := &auditWriter{ResponseWriter: discard{}, tail: tail[:0]}
		w.Write(answer)
		auditTails.Put(tail)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
