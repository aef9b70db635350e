package embedhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/vector"
)

// TestOpenAI_Prefixes: model families trained with instruction prefixes get them, by kind; the
// embedder id changes with them so that vectors made without are rebuilt; other models get the
// text as it is.
func TestOpenAI_Prefixes(t *testing.T) {
	var mu sync.Mutex
	var inputs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		inputs = append(inputs, req.Input...)
		mu.Unlock()
		var data []map[string]any
		for i := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float32{1, 0}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	for _, tc := range []struct {
		model, wantModel string
		doc, query       string
	}{
		{"nomic-embed-text", "nomic-embed-text+prefixes", "search_document: I like tea", "search_query: what do I drink?"},
		{"nomic-ai/nomic-embed-text-v1.5", "nomic-ai/nomic-embed-text-v1.5+prefixes", "search_document: I like tea", "search_query: what do I drink?"},
		{"intfloat/e5-small-v2", "intfloat/e5-small-v2+prefixes", "passage: I like tea", "query: what do I drink?"},
		{"mxbai-embed-large", "mxbai-embed-large+prefixes", "I like tea", "Represent this sentence for searching relevant passages: what do I drink?"},
		{"text-embedding-3-small", "text-embedding-3-small", "I like tea", "what do I drink?"},
		{"all-minilm", "all-minilm", "I like tea", "what do I drink?"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			mu.Lock()
			inputs = nil
			mu.Unlock()
			e, err := NewOpenAI(OpenAIConfig{URL: srv.URL + "/v1", Model: tc.model})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Embed(context.Background(), []string{"I like tea"}, vector.Document); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Embed(context.Background(), []string{"what do I drink?"}, vector.Query); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := slices.Clone(inputs)
			mu.Unlock()
			if want := []string{tc.doc, tc.query}; !slices.Equal(got, want) {
				t.Errorf("sent %q, want %q", got, want)
			}
			if m := e.Info().Model; m != tc.wantModel {
				t.Errorf("Info().Model = %q, want %q", m, tc.wantModel)
			}
		})
	}
}
