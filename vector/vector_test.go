package vector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTokenize(t *testing.T) {
	for in, want := range map[string]string{
		"Colby's new job, in L.A.!": "[colby new job in l a]",
		"Café au lait — 2 cups":     "[café au lait 2 cups]",
		"don't STOP":                "[don t stop]",
		"the dogs' bowls":           "[the dogs bowls]",
		"":                          "[]",
	} {
		if got := fmt.Sprint(Tokenize(in)); got != want {
			t.Errorf("Tokenize(%q) = %s, want %s", in, got, want)
		}
	}
	if got := fmt.Sprint(terms("The puppies are running and jumped over the boxes")); got != "[puppy runn jump box]" {
		t.Errorf("terms = %s", got)
	}
}

func TestBM25_Search(t *testing.T) {
	b := NewBM25()
	b.Add(1, "I prefer dark roast coffee")
	b.Add(2, "My son Colby lives in Los Angeles")
	b.Add(3, "Coffee with oat milk, never dairy; coffee is life")
	b.Add(4, "The dentist appointment is in March")
	t.Run("ranks by term evidence", func(t *testing.T) {
		got := b.Search("coffee", 10, nil)
		if len(got) != 2 || got[0].ID != 3 || got[1].ID != 1 {
			t.Errorf("coffee = %v, want [3 1]", got)
		}
		if got := b.Search("Colby's whereabouts", 10, nil); len(got) != 1 || got[0].ID != 2 {
			t.Errorf("possessive query = %v", got)
		}
		if got := b.Search("the and of", 10, nil); len(got) != 0 {
			t.Errorf("stopword query = %v", got)
		}
	})
	t.Run("filter applies before the cut", func(t *testing.T) {
		got := b.Search("coffee", 1, func(id uint64) bool { return id == 1 })
		if len(got) != 1 || got[0].ID != 1 {
			t.Errorf("filtered = %v, want [1]", got)
		}
	})
	t.Run("replace and remove", func(t *testing.T) {
		b.Add(1, "I prefer green tea")
		if got := b.Search("coffee", 10, nil); len(got) != 1 || got[0].ID != 3 {
			t.Errorf("after replace = %v", got)
		}
		b.Remove(3)
		b.Remove(42)
		if got := b.Search("coffee", 10, nil); len(got) != 0 {
			t.Errorf("after remove = %v", got)
		}
		if b.Len() != 3 {
			t.Errorf("Len = %d, want 3", b.Len())
		}
	})
}

// TestBM25_FilterNeverStarves: many strong matches fail the filter; the weak ones that pass
// must still fill k.
func TestBM25_FilterNeverStarves(t *testing.T) {
	b := NewBM25()
	for i := uint64(1); i <= 500; i++ {
		text := "garden tomato garden tomato"
		if i%100 == 0 {
			text = "a tomato recipe with many other words in it to lower the score"
		}
		b.Add(i, text)
	}
	got := b.Search("garden tomato", 5, func(id uint64) bool { return id%100 == 0 })
	if len(got) != 5 {
		t.Fatalf("got %d results, want 5: %v", len(got), got)
	}
	for _, s := range got {
		if s.ID%100 != 0 {
			t.Errorf("result %d does not pass the filter", s.ID)
		}
	}
}

func TestBM25_Concurrent(t *testing.T) {
	b := NewBM25()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := uint64(w*1000 + i)
				b.Add(id, fmt.Sprintf("note %d about coffee and tea", i))
				b.Search("coffee", 5, nil)
				if i%3 == 0 {
					b.Remove(id)
				}
			}
		}()
	}
	wg.Wait()
	if got, want := b.Len(), 4*(200-67); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestExact_SearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dim, n = 32, 500
	e := NewExact(dim)
	vecs := map[uint64][]float32{}
	for i := uint64(1); i <= n; i++ {
		v := randVec(r, dim)
		vecs[i] = v
		if err := e.Add(i, v); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(1); i <= n; i += 7 {
		e.Remove(i)
		delete(vecs, i)
	}
	if e.Len() != len(vecs) {
		t.Fatalf("Len = %d, want %d", e.Len(), len(vecs))
	}
	even := func(id uint64) bool { return id%2 == 0 }
	for q := range 20 {
		qv := randVec(r, dim)
		var want []Scored
		for id, v := range vecs {
			if even(id) {
				want = append(want, Scored{id, Cosine(qv, v)})
			}
		}
		slices.SortFunc(want, func(a, b Scored) int {
			if a.Score > b.Score {
				return -1
			}
			return 1
		})
		got := e.Search(qv, 10, even)
		for i := range got {
			if got[i].ID != want[i].ID || abs(got[i].Score-want[i].Score) > 1e-4 {
				t.Fatalf("query %d rank %d: got %v, want %v", q, i, got[i], want[i])
			}
		}
	}
	if err := e.Add(9999, []float32{1}); !errors.Is(err, ErrDimension) {
		t.Errorf("wrong dimension: err = %v", err)
	}
	if v, ok := e.Get(2); !ok || abs(Cosine(v, vecs[2])-1) > 1e-5 {
		t.Errorf("Get(2) = %v, %v", v, ok)
	}
}

func abs(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

func TestFuse(t *testing.T) {
	lex := []Scored{{1, 8}, {2, 4}}
	dense := []Scored{{2, 0.9}, {3, 0.45}, {4, -0.2}}
	got := Fuse(lex, dense, 0.5, 0.5, 10)
	want := []Scored{{2, 0.75}, {1, 0.5}, {3, 0.25}}
	if len(got) != len(want) {
		t.Fatalf("Fuse = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Errorf("Fuse[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := Fuse(lex, nil, 1, 0, 1); len(got) != 1 || got[0].ID != 1 || got[0].Score != 1 {
		t.Errorf("lexical only, k=1: %v", got)
	}
}

func TestLexicalSimilarity(t *testing.T) {
	if s := LexicalSimilarity("I prefer dark roast coffee", "i PREFER dark roast coffee!"); abs(s-1) > 1e-6 {
		t.Errorf("same words: %v", s)
	}
	if s := LexicalSimilarity("I prefer dark roast coffee", "My son lives in LA"); s != 0 {
		t.Errorf("disjoint: %v", s)
	}
	if s := LexicalSimilarity("", "x"); s != 0 {
		t.Errorf("empty: %v", s)
	}
}

// embeddingServer speaks the OpenAI embeddings wire format; fail decides a status per call.
type embeddingServer struct {
	calls   atomic.Int64
	batches []int
	mu      sync.Mutex
	fail    func(call int64) (status int, body string, header map[string]string)
	block   chan struct{} // when set, requests wait until it is closed
}

func (s *embeddingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := s.calls.Add(1)
	if s.block != nil {
		select {
		case <-s.block:
		case <-r.Context().Done():
		}
		return
	}
	if s.fail != nil {
		if status, body, hdr := s.fail(call); status != 0 {
			for k, v := range hdr {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
			return
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer sekrit-key" {
		http.Error(w, `{"error":{"message":"unauthorized"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.batches = append(s.batches, len(req.Input))
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- { // out of order on purpose
		data = append(data, item{"embedding", i, []float32{float32(len(req.Input[i])), 1, 0}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
}

func newClient(t *testing.T, srv *httptest.Server, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{URL: srv.URL + "/v1", Model: "m", APIKey: "sekrit-key", Timeout: 2 * time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error { return nil }}
	if mod != nil {
		mod(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOpenAI_Embed(t *testing.T) {
	t.Run("batches and orders by index", func(t *testing.T) {
		es := &embeddingServer{}
		srv := httptest.NewServer(es)
		defer srv.Close()
		o := newClient(t, srv, nil)
		texts := make([]string, 150)
		for i := range texts {
			texts[i] = strings.Repeat("x", i+1)
		}
		vecs, err := o.Embed(context.Background(), texts, Document)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vecs {
			if v[0] != float32(i+1) {
				t.Fatalf("vector %d belongs to text %v", i, v[0])
			}
		}
		if fmt.Sprint(es.batches) != "[64 64 22]" {
			t.Errorf("batches = %v, want [64 64 22]", es.batches)
		}
		if info := o.Info(); info.Dim != 3 || info.String() != "openai:m:3" {
			t.Errorf("Info = %+v", info)
		}
	})
	t.Run("retries 500 and 429 then succeeds", func(t *testing.T) {
		es := &embeddingServer{fail: func(c int64) (int, string, map[string]string) {
			switch c {
			case 1:
				return 500, `{"error":{"message":"boom"}}`, nil
			case 2:
				return 429, `{"error":{"message":"slow down"}}`, map[string]string{"Retry-After": "1"}
			}
			return 0, "", nil
		}}
		srv := httptest.NewServer(es)
		defer srv.Close()
		var waits []time.Duration
		o := newClient(t, srv, func(c *OpenAIConfig) {
			c.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
		})
		if _, err := o.Embed(context.Background(), []string{"a"}, Query); err != nil {
			t.Fatal(err)
		}
		if es.calls.Load() != 3 || len(waits) != 2 || waits[1] != time.Second {
			t.Errorf("calls = %d, waits = %v", es.calls.Load(), waits)
		}
	})
	t.Run("400 is not retried and names the server's message", func(t *testing.T) {
		es := &embeddingServer{fail: func(c int64) (int, string, map[string]string) {
			return 400, `{"error":{"message":"input too long","type":"invalid_request_error"}}`, nil
		}}
		srv := httptest.NewServer(es)
		defer srv.Close()
		_, err := newClient(t, srv, nil).Embed(context.Background(), []string{"a"}, Document)
		if err == nil || !strings.Contains(err.Error(), "input too long") || es.calls.Load() != 1 || errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v after %d calls", err, es.calls.Load())
		}
	})
	t.Run("gives up after retries as unavailable, without the key", func(t *testing.T) {
		es := &embeddingServer{fail: func(c int64) (int, string, map[string]string) { return 503, "sekrit-key", nil }}
		srv := httptest.NewServer(es)
		defer srv.Close()
		_, err := newClient(t, srv, nil).Embed(context.Background(), []string{"a"}, Document)
		if !errors.Is(err, ErrUnavailable) || es.calls.Load() != 3 || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("err = %v after %d calls", err, es.calls.Load())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		es := &embeddingServer{block: make(chan struct{})}
		srv := httptest.NewServer(es)
		defer srv.Close()
		defer close(es.block)
		o := newClient(t, srv, func(c *OpenAIConfig) { c.Timeout = 50 * time.Millisecond; c.Retries = -1 })
		_, err := o.Embed(context.Background(), []string{"a"}, Document)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := newClient(t, srv, nil).Embed(context.Background(), []string{"a"}, Document)
		if !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("config validation", func(t *testing.T) {
		for _, cfg := range []OpenAIConfig{{URL: "ftp://x", Model: "m"}, {URL: "http://x"}, {URL: "::", Model: "m"}} {
			if _, err := NewOpenAI(cfg); err == nil {
				t.Errorf("NewOpenAI(%+v) accepted", cfg)
			}
		}
	})
}

func benchBM25(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	words := strings.Fields("coffee tea garden sister brother mother father son daughter birthday meeting project deadline allergy doctor holiday flight hotel car bike running piano guitar book movie recipe pasta dog cat school office salary rent house kitchen winter summer beach lisbon berlin tokyo")
	idx := NewBM25()
	for i := range n {
		var sb strings.Builder
		for range 8 + r.IntN(8) {
			sb.WriteString(words[r.IntN(len(words))] + " ")
		}
		idx.Add(uint64(i+1), sb.String())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idx.Search(words[i%len(words)]+" "+words[(i*7)%len(words)], 8, nil)
	}
}

func BenchmarkBM25_Search10k(b *testing.B)  { benchBM25(b, 10_000) }
func BenchmarkBM25_Search100k(b *testing.B) { benchBM25(b, 100_000) }

func BenchmarkExact_Search10kx256(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	e := NewExact(256)
	for i := range 10_000 {
		e.Add(uint64(i+1), randVec(r, 256))
	}
	q := randVec(r, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Search(q, 10, nil)
	}
}
