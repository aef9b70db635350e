package app

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// conceptEmbedder is an OpenAI-compatible /v1/embeddings server whose vectors put words of one
// concept on one axis, so that meaning-without-shared-words is visible in tests.
type conceptEmbedder struct {
	down  atomic.Bool
	calls atomic.Int64
}

var concepts = map[string]int{"coffee": 0, "espresso": 0, "latte": 0, "son": 1, "colby": 1, "boy": 1, "dog": 2, "puppy": 2}

func (c *conceptEmbedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.calls.Add(1)
	if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer test-key" {
		http.Error(w, `{"error":{"message":"bad path or key"}}`, http.StatusUnauthorized)
		return
	}
	if c.down.Load() {
		http.Error(w, `{"error":{"message":"model is loading"}}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "concepts" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, text := range req.Input {
		v := make([]float32, 16)
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if k, ok := concepts[w]; ok {
				v[k] += 3
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[3+h.Sum32()%13]++
		}
		var n float64
		for _, f := range v {
			n += float64(f * f)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n) + 1e-9)
		}
		resp.Data = append(resp.Data, item{"embedding", i, v})
	}
	// Answer out of order, as the API allows: clients must place by index.
	for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
		resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func embedConfig(t *testing.T, srv *httptest.Server) Config {
	cfg := testConfig(t, nil)
	cfg.Embedder, cfg.EmbedURL, cfg.EmbedModel, cfg.EmbedAPIKey = "openai", srv.URL+"/v1", "concepts", "test-key"
	cfg.EmbedTimeout = 5 * time.Second
	return cfg
}

func TestEmbedder_OpenAIRecallByMeaning(t *testing.T) {
	emb := &conceptEmbedder{}
	srv := httptest.NewServer(emb)
	defer srv.Close()
	a := MustOpen(t, embedConfig(t, srv))
	mustOK(t, a, "remember", map[string]any{"text": "I drink an espresso every morning"})
	mustOK(t, a, "remember", map[string]any{"text": "The neighbours have a new puppy"})
	p := mustOK(t, a, "recall", map[string]any{"query": "coffee"})
	m := p["matches"].([]any)
	if len(m) == 0 || !strings.Contains(m[0].(map[string]any)["text"].(string), "espresso") {
		t.Fatalf("recall by meaning = %v", p)
	}
	if w, ok := p["warning"]; ok {
		t.Errorf("unexpected warning %v", w)
	}
	st := mustOK(t, a, "memory_stats", map[string]any{})["embedder"].(map[string]any)
	if st["name"] != "openai" || st["model"] != "concepts" || st["dimensions"] != 16.0 {
		t.Errorf("embedder stats = %v", st)
	}
}

func TestEmbedder_UnreachableNeverLosesAWrite(t *testing.T) {
	emb := &conceptEmbedder{}
	emb.down.Store(true)
	srv := httptest.NewServer(emb)
	defer srv.Close()
	a := MustOpen(t, embedConfig(t, srv))

	p := mustOK(t, a, "remember", map[string]any{"text": "My son Colby lives in Los Angeles"})
	if w, _ := p["warning"].(string); !strings.Contains(w, "embedder") {
		t.Errorf("remember warning = %q", w)
	}
	r := mustOK(t, a, "recall", map[string]any{"query": "Colby"})
	if w, _ := r["warning"].(string); !strings.Contains(w, "lexical") {
		t.Errorf("recall warning = %q", w)
	}
	if m := r["matches"].([]any); len(m) != 1 {
		t.Errorf("lexical fallback matches = %v", m)
	}
	// The endpoint recovers: the background worker fills in the vector, and recall by meaning works.
	emb.down.Store(false)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pending := mustOK(t, a, "memory_stats", map[string]any{})["embedder"].(map[string]any)["reembed_progress"].(map[string]any)["pending"]
		if pending == 0.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vector never filled in: pending %v", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r = mustOK(t, a, "recall", map[string]any{"query": "where does my boy live"})
	if m := r["matches"].([]any); len(m) != 1 || r["warning"] != nil {
		t.Errorf("after recovery recall = %v", r)
	}
}

func TestEmbedder_ChangeReembedsFromText(t *testing.T) {
	emb := &conceptEmbedder{}
	srv := httptest.NewServer(emb)
	defer srv.Close()
	cfg := testConfig(t, nil)
	a := MustOpen(t, cfg)
	mustOK(t, a, "remember", map[string]any{"text": "I drink an espresso every morning"})
	a.Close()

	ecfg := embedConfig(t, srv)
	ecfg.DB = cfg.DB
	b := MustOpen(t, ecfg)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		m := mustOK(t, b, "recall", map[string]any{"query": "latte"})["matches"].([]any)
		if len(m) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("memories stored without an embedder were never embedded")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
