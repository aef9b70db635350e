package vector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind says what a text is for: some models embed queries and documents differently.
type Kind int

const (
	Document Kind = iota // a memory being stored
	Query                // a question being searched
)

// Info identifies an embedder; it is stored with every vector, so a change of embedder is seen.
type Info struct {
	Name  string // e.g. "openai"
	Model string // e.g. "nomic-embed-text"
	Dim   int    // 0 until known
}

// String is the stored id, e.g. "openai:nomic-embed-text:768".
func (i Info) String() string { return fmt.Sprintf("%s:%s:%d", i.Name, i.Model, i.Dim) }

// Embedder turns texts into vectors. Implementations are safe for concurrent use.
type Embedder interface {
	Info() Info
	Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error)
}

// ErrUnavailable wraps failures to reach an embedding service.
var ErrUnavailable = errors.New("embedding service unavailable")

// OpenAIConfig configures an OpenAI-compatible embeddings client.
type OpenAIConfig struct {
	// URL is the API base (http://localhost:11434/v1 for Ollama, https://api.openai.com/v1);
	// a URL ending in /embeddings is used as it is.
	URL string
	// Model is the embedding model's name. Required.
	Model string
	// APIKey is sent as a bearer token when not empty. It never appears in errors or logs.
	APIKey string
	// Dim is the vectors' length; if zero, learned from the first response.
	Dim int
	// BatchSize caps the texts per request. If zero, 64.
	BatchSize int
	// Retries is how many times a request is retried after a network error, 429 or 5xx. If
	// zero, 2; negative means none.
	Retries int
	// Timeout bounds one request. If zero, 30s.
	Timeout time.Duration
	// HTTPClient is used for requests. If nil, a client with Timeout.
	HTTPClient *http.Client
	// Sleep waits between retries. If nil, a context-aware time.Sleep (tests shorten it).
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI embeds texts with POST {URL}/embeddings, the OpenAI wire format that Ollama,
// llama.cpp's server, vLLM and OpenAI speak.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	mu       sync.Mutex
	dim      int // guarded by mu
}

// NewOpenAI validates cfg and returns the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embedding URL %q is not an http or https URL", cfg.URL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("embedding model is empty")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	endpoint := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	return &OpenAI{cfg: cfg, endpoint: endpoint, dim: cfg.Dim}, nil
}

// Info reports the model and, once known, the dimension.
func (o *OpenAI) Info() Info {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Info{Name: "openai", Model: o.cfg.Model, Dim: o.dim}
}

// Embed returns one vector per text, in order, in batches of BatchSize.
func (o *OpenAI) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(texts))
		vecs, err := o.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// statusError is a non-2xx answer.
type statusError struct {
	status     int
	message    string
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("embedding request failed: HTTP %d", e.status)
	}
	return fmt.Sprintf("embedding request failed: HTTP %d: %s", e.status, e.message)
}

func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": o.cfg.Model, "input": texts})
	if err != nil {
		return nil, err
	}
	backoff := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		vecs, err := o.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		var se *statusError
		retryable := !errors.As(err, &se) || se.status == http.StatusTooManyRequests || se.status >= 500
		if !retryable || attempt >= o.cfg.Retries || ctx.Err() != nil {
			if errors.As(err, &se) && se.status < 500 && se.status != http.StatusTooManyRequests {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		wait := backoff
		if se != nil && se.retryAfter > 0 {
			wait = min(se.retryAfter, 30*time.Second)
		}
		if err := o.cfg.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		backoff *= 2
	}
}

// maxResponse caps an embeddings response body.
const maxResponse = 64 << 20

func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		// Errors from net/http name the URL, never headers, so the key stays out.
		return nil, fmt.Errorf("embedding request to %s: %w", o.endpoint, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("read embedding response: %w", err)
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("embedding response is larger than %d bytes", maxResponse)
	}
	if resp.StatusCode/100 != 2 {
		se := &statusError{status: resp.StatusCode}
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil {
			se.message = truncate(e.Error.Message, 300)
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			se.retryAfter = time.Duration(s) * time.Second
		}
		return nil, se
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode embedding response: %w", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embedding response has %d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding response has a bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding response has an empty vector at index %d", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dim == 0 {
		o.dim = len(out[0])
	}
	for i, v := range out {
		if len(v) != o.dim {
			return nil, fmt.Errorf("embedding %d has %d dimensions, want %d: %w", i, len(v), o.dim, ErrDimension)
		}
	}
	return out, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
