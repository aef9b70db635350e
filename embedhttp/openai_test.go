package embedhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/vector"
)

const testKey = "sk-test-5ecret-key"

// embeddingRequest is the wire request, decoded strictly.
type embeddingRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embeddingServer speaks the OpenAI embeddings API. Each vector is [len(text), call, 1], so
// tests can see which text and which request it came from. Data items are sent in reverse
// index order, as servers may. fail, when set, may answer a call instead.
type embeddingServer struct {
	*httptest.Server
	fail func(call int, w http.ResponseWriter) bool

	mu       sync.Mutex
	requests []embeddingRequest
	auth     []string
}

func (s *embeddingServer) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// seen returns the decoded requests and their Authorization headers so far.
func (s *embeddingServer) seen() ([]embeddingRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests), slices.Clone(s.auth)
}

func (s *embeddingServer) batchSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, r := range s.requests {
		out = append(out, len(r.Input))
	}
	return out
}

// MustNewEmbeddingServer starts an embeddingServer, closed at the end of the test.
func MustNewEmbeddingServer(tb testing.TB, fail func(call int, w http.ResponseWriter) bool) *embeddingServer {
	tb.Helper()
	s := &embeddingServer{fail: fail}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Content-Type") != "application/json" {
			writeAPIError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path), "invalid_request_error")
			return
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		var req embeddingRequest
		if err := dec.Decode(&req); err != nil || req.Model == "" || req.Input == nil {
			writeAPIError(w, http.StatusBadRequest, fmt.Sprintf("bad request body: %v", err), "invalid_request_error")
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		call := len(s.requests)
		s.mu.Unlock()
		if s.fail != nil && s.fail(call, w) {
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := []item{}
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, []float32{float32(len(req.Input[i])), float32(call), 1}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"object": "list",
			"data":   data,
			"model":  req.Model,
			"usage":  map[string]int{"prompt_tokens": 7, "total_tokens": 7},
		})
	}))
	tb.Cleanup(s.Close)
	return s
}

func writeAPIError(w http.ResponseWriter, status int, message, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}})
}

// MustNewOpenAI returns a client of url with testKey, whose retry waits are recorded instead
// of slept.
func MustNewOpenAI(tb testing.TB, url string, mod func(*OpenAIConfig)) (*OpenAI, *[]time.Duration) {
	tb.Helper()
	var mu sync.Mutex
	waits := &[]time.Duration{}
	cfg := OpenAIConfig{URL: url, Model: "all-minilm", APIKey: testKey, Timeout: 5 * time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			*waits = append(*waits, d)
			return ctx.Err()
		}}
	if mod != nil {
		mod(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		tb.Fatalf("NewOpenAI: %v", err)
	}
	return o, waits
}

// checkNoKey fails when err's text holds the API key.
func checkNoKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Errorf("error text holds the API key: %v", err)
	}
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

func TestOpenAI_Embed(t *testing.T) {
	ctx := context.Background()
	t.Run("wire format, auth and order by index", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		o, _ := MustNewOpenAI(t, s.URL+"/v1", nil)
		in := []string{"I prefer dark roast coffee", "Colby lives in LA", "ünïcode ✓"}
		vecs, err := o.Embed(ctx, in, vector.Document)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vecs {
			if got, want := v[0], float32(len(in[i])); got != want {
				t.Errorf("vector %d came from a text of length %v, want %v", i, got, want)
			}
		}
		reqs, auth := s.seen()
		if got, want := reqs, []embeddingRequest{{"all-minilm", in}}; !slices.EqualFunc(got, want, func(a, b embeddingRequest) bool {
			return a.Model == b.Model && slices.Equal(a.Input, b.Input)
		}) {
			t.Errorf("requests = %+v, want %+v", got, want)
		}
		if got, want := auth[0], "Bearer "+testKey; got != want {
			t.Errorf("Authorization = %q, want %q", got, want)
		}
		if got, want := o.Info(), (vector.Info{Name: "openai", Model: "all-minilm", Dim: 3}); got != want {
			t.Errorf("Info = %+v, want %+v", got, want)
		}
		if got, want := o.Info().String(), "openai:all-minilm:3"; got != want {
			t.Errorf("Info.String = %q, want %q", got, want)
		}
	})
	t.Run("batches", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.BatchSize = 64 })
		vecs, err := o.Embed(ctx, texts(150), vector.Document)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.batchSizes(), []int{64, 64, 22}; !slices.Equal(got, want) {
			t.Errorf("batch sizes = %v, want %v", got, want)
		}
		if len(vecs) != 150 {
			t.Fatalf("got %d vectors, want 150", len(vecs))
		}
		for i, v := range vecs {
			if v[0] != float32(i+1) || v[1] != float32(i/64+1) {
				t.Fatalf("vector %d = %v: from text %v of request %v", i, v, v[0], v[1])
			}
		}
	})
	t.Run("no texts, no request", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		o, _ := MustNewOpenAI(t, s.URL+"/v1", nil)
		if vecs, err := o.Embed(ctx, nil, vector.Query); err != nil || len(vecs) != 0 || s.calls() != 0 {
			t.Errorf("Embed(nil) = %v, %v after %d calls", vecs, err, s.calls())
		}
	})
	t.Run("no key, no Authorization header", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.APIKey = "" })
		if _, err := o.Embed(ctx, []string{"a"}, vector.Query); err != nil {
			t.Fatal(err)
		}
		if _, auth := s.seen(); auth[0] != "" {
			t.Errorf("Authorization = %q, want none", auth[0])
		}
	})
	t.Run("URL forms", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		for _, u := range []string{s.URL + "/v1", s.URL + "/v1/", s.URL + "/v1/embeddings", s.URL + "/v1?x=1"} {
			o, _ := MustNewOpenAI(t, u, nil)
			if _, err := o.Embed(ctx, []string{"a"}, vector.Query); err != nil {
				t.Errorf("URL %q: %v", u, err)
			}
		}
	})
}

func TestOpenAI_EmbedRetry(t *testing.T) {
	ctx := context.Background()
	t.Run("500 then success", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			if call == 1 {
				writeAPIError(w, 500, "model is loading", "server_error")
				return true
			}
			return false
		})
		o, waits := MustNewOpenAI(t, s.URL+"/v1", nil)
		vecs, err := o.Embed(ctx, []string{"abc"}, vector.Document)
		if err != nil {
			t.Fatal(err)
		}
		if vecs[0][1] != 2 || s.calls() != 2 {
			t.Errorf("answered by request %v after %d calls, want 2", vecs[0][1], s.calls())
		}
		if got, want := *waits, []time.Duration{500 * time.Millisecond}; !slices.Equal(got, want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	})
	t.Run("429 honours Retry-After, capped", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			switch call {
			case 1:
				w.Header().Set("Retry-After", "3")
			case 2:
				w.Header().Set("Retry-After", "3600")
			default:
				return false
			}
			writeAPIError(w, http.StatusTooManyRequests, "Rate limit reached", "rate_limit_exceeded")
			return true
		})
		o, waits := MustNewOpenAI(t, s.URL+"/v1", nil)
		if _, err := o.Embed(ctx, []string{"abc"}, vector.Document); err != nil {
			t.Fatal(err)
		}
		if got, want := *waits, []time.Duration{3 * time.Second, 30 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	})
	t.Run("gives up after the retries, unavailable", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			writeAPIError(w, http.StatusServiceUnavailable, "overloaded", "server_error")
			return true
		})
		o, waits := MustNewOpenAI(t, s.URL+"/v1", nil)
		_, err := o.Embed(ctx, []string{"abc"}, vector.Document)
		if !errors.Is(err, vector.ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
		if !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "overloaded (server_error)") {
			t.Errorf("err = %v, want the status and the server's message", err)
		}
		if got, want := s.calls(), 3; got != want {
			t.Errorf("calls = %d, want %d (1 + 2 retries)", got, want)
		}
		if got, want := *waits, []time.Duration{500 * time.Millisecond, time.Second}; !slices.Equal(got, want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	})
	t.Run("400 is not retried", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			writeAPIError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens", "invalid_request_error")
			return true
		})
		o, _ := MustNewOpenAI(t, s.URL+"/v1", nil)
		_, err := o.Embed(ctx, []string{"abc"}, vector.Document)
		if err == nil || errors.Is(err, vector.ErrUnavailable) {
			t.Fatalf("err = %v, want a refusal that is not ErrUnavailable", err)
		}
		if got, want := err.Error(), "embedding request refused: HTTP 400 Bad Request: This model's maximum context length is 8192 tokens (invalid_request_error)"; got != want {
			t.Errorf("err = %q, want %q", got, want)
		}
		if got := s.calls(); got != 1 {
			t.Errorf("calls = %d, want 1", got)
		}
	})
	t.Run("Retries negative means one attempt", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		})
		o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.Retries = -1 })
		if _, err := o.Embed(ctx, []string{"abc"}, vector.Document); !errors.Is(err, vector.ErrUnavailable) || s.calls() != 1 {
			t.Errorf("err = %v after %d calls", err, s.calls())
		}
	})
	t.Run("a server that hangs past the timeout", func(t *testing.T) {
		release := make(chan struct{})
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			<-release
			return true
		})
		t.Cleanup(func() { close(release) }) // runs before the server's Close
		o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.Timeout = 20 * time.Millisecond; c.Retries = 1 })
		_, err := o.Embed(ctx, []string{"abc"}, vector.Document)
		if !errors.Is(err, vector.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrUnavailable and DeadlineExceeded", err)
		}
		if !strings.Contains(err.Error(), "no answer within 20ms") {
			t.Errorf("err = %v, want it to name the timeout", err)
		}
		if got := s.calls(); got != 2 {
			t.Errorf("calls = %d, want 2 (timeouts are retried)", got)
		}
	})
	t.Run("caller cancels while waiting to retry", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, func(call int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		})
		cctx, cancel := context.WithCancel(ctx)
		o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) {
			c.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
		})
		_, err := o.Embed(cctx, []string{"abc"}, vector.Document)
		if !errors.Is(err, context.Canceled) || s.calls() != 1 {
			t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, s.calls())
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, nil)
		s.Close()
		o, waits := MustNewOpenAI(t, s.URL+"/v1", nil)
		_, err := o.Embed(ctx, []string{"abc"}, vector.Document)
		if !errors.Is(err, vector.ErrUnavailable) || len(*waits) != 2 {
			t.Errorf("err = %v after %d waits, want ErrUnavailable after 2", err, len(*waits))
		}
		checkNoKey(t, err)
	})
}

func TestOpenAI_EmbedErrors(t *testing.T) {
	ctx := context.Background()
	respond := func(status int, body string) func(int, http.ResponseWriter) bool {
		return func(call int, w http.ResponseWriter) bool {
			w.WriteHeader(status)
			io.WriteString(w, body)
			return true
		}
	}
	tests := []struct {
		name   string
		answer func(int, http.ResponseWriter) bool
		dim    int
		want   string // in the error text
		is     error
	}{
		{"key echoed in the error message", respond(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`","type":"invalid_request_error"}}`),
			0, "HTTP 401 Unauthorized: Incorrect API key provided: [redacted]", nil},
		{"key echoed in a plain body", respond(403, "forbidden for "+testKey+"\n"), 0, "HTTP 403 Forbidden: forbidden for [redacted]", nil},
		{"string error", respond(404, `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`), 0, `model "nomic-embed-text" not found`, nil},
		{"not JSON", respond(200, "<html>"), 0, "decode embedding response", nil},
		{"too few vectors", respond(200, `{"object":"list","data":[]}`), 0, "0 vectors for 1 texts", nil},
		{"bad index", respond(200, `{"data":[{"index":3,"embedding":[1]}]}`), 0, "out-of-range", nil},
		{"empty vector", respond(200, `{"data":[{"index":0,"embedding":[]}]}`), 0, "empty vector", nil},
		{"wrong dimension", nil, 5, "3 dimensions, want 5", vector.ErrDimension},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustNewEmbeddingServer(t, tt.answer)
			o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.Dim = tt.dim })
			_, err := o.Embed(ctx, []string{"abc"}, vector.Document)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			if errors.Is(err, vector.ErrUnavailable) || s.calls() != 1 {
				t.Errorf("err = %v after %d calls: a refusal or a bad answer is not retried", err, s.calls())
			}
			checkNoKey(t, err)
		})
	}
	t.Run("vectors without index are taken in order", func(t *testing.T) {
		s := MustNewEmbeddingServer(t, respond(200, `{"data":[{"embedding":[1,0]},{"embedding":[0,1]}]}`))
		o, _ := MustNewOpenAI(t, s.URL+"/v1", nil)
		vecs, err := o.Embed(ctx, []string{"a", "b"}, vector.Document)
		if err != nil || fmt.Sprint(vecs) != "[[1 0] [0 1]]" {
			t.Errorf("Embed = %v, %v", vecs, err)
		}
	})
}

func TestOpenAI_EmbedConcurrent(t *testing.T) {
	s := MustNewEmbeddingServer(t, nil)
	o, _ := MustNewOpenAI(t, s.URL+"/v1", func(c *OpenAIConfig) { c.BatchSize = 3 })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			vecs, err := o.Embed(context.Background(), texts(7), vector.Query)
			if err != nil || len(vecs) != 7 {
				t.Errorf("Embed = %d vectors, %v", len(vecs), err)
			}
			o.Info()
		})
	}
	wg.Wait()
	if got, want := s.calls(), 8*3; got != want {
		t.Errorf("calls = %d, want %d", got, want)
	}
}

func TestNewOpenAI(t *testing.T) {
	for _, cfg := range []OpenAIConfig{
		{URL: "ftp://example.com/v1", Model: "m"},
		{URL: "localhost:11434/v1", Model: "m"},
		{URL: "http://", Model: "m"},
		{URL: "http://example.com/v1", Model: " "},
		{URL: "http://example.com/v1", Model: "m", Dim: -1},
	} {
		if _, err := NewOpenAI(cfg); err == nil {
			t.Errorf("NewOpenAI(%+v) accepted", cfg)
		}
	}
	t.Run("error hides URL credentials", func(t *testing.T) {
		o, err := NewOpenAI(OpenAIConfig{URL: "http://user:pa55word@127.0.0.1:1/v1", Model: "m", Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.Embed(context.Background(), []string{"a"}, vector.Query)
		if err == nil || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		o, err := NewOpenAI(OpenAIConfig{URL: "https://api.openai.com/v1/", Model: "text-embedding-3-small", Dim: 1536})
		if err != nil {
			t.Fatal(err)
		}
		if o.cfg.BatchSize != 64 || o.cfg.Retries != 2 || o.cfg.Timeout != 30*time.Second || o.endpoint != "https://api.openai.com/v1/embeddings" {
			t.Errorf("cfg = %+v, endpoint %q", o.cfg, o.endpoint)
		}
		if got, want := o.Info().String(), "openai:text-embedding-3-small:1536"; got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
	})
}
