package embedhttp

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
	"unicode/utf8"

	"github.com/ownsona/ownsona/vector"
)

// OpenAIConfig configures an OpenAI-compatible embeddings client.
type OpenAIConfig struct {
	// URL is the API base, e.g. http://localhost:11434/v1 (Ollama) or https://api.openai.com/v1;
	// requests go to {URL}/embeddings. A URL that already ends in /embeddings is used as it is.
	// Required; http or https.
	URL string
	// Model is the embedding model's name, sent with every request. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer …" when not empty. It never appears in an error.
	APIKey string
	// Dim is the vectors' length. If zero, it is learned from the first response; a response
	// of another length is an error wrapping ErrDimension.
	Dim int
	// BatchSize is the most texts sent in one request. If zero (or negative), 64.
	BatchSize int
	// Retries is how many times a request is repeated after a network error, a timeout, a 429
	// or a 5xx, waiting 0.5s, 1s, 2s, … or what Retry-After asks (at most 30s). Other 4xx
	// answers are not retried. If zero, 2; negative means no retries.
	Retries int
	// Timeout bounds each request (each attempt). If zero (or negative), 30s.
	Timeout time.Duration
	// HTTPClient sends the requests. If nil, a client of its own with Go's default transport.
	HTTPClient *http.Client
	// Sleep waits d between attempts, returning early with ctx's error when ctx ends. If nil, a
	// timer does. Tests set it to skip the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI is an Embedder speaking the OpenAI embeddings API (POST /embeddings with
// {"model","input":[…]}), as served by OpenAI, Ollama, llama.cpp's server, vLLM, LocalAI and
// others. The API has no notion of Kind: for model families trained with instruction prefixes
// (ModelPrefixes) the prefix of the kind is put in front of each text. Safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string // the POST URL
	shown    string // the POST URL as errors show it (userinfo redacted)
	// queryPrefix and docPrefix are the instructions the model family expects in front of
	// queries and documents (ModelPrefixes).
	queryPrefix, docPrefix string

	mu  sync.Mutex
	dim int
}

var _ vector.Embedder = (*OpenAI)(nil)

// Limits of the client.
const (
	maxResponseBytes = 64 << 20 // an embeddings response body
	maxRetryAfter    = 30 * time.Second
	firstBackoff     = 500 * time.Millisecond
	maxErrorText     = 300 // bytes of a server's error message kept in ours
)

// NewOpenAI checks cfg, fills in its defaults and returns the client. It makes no request.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("embedding URL must be an http or https URL")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("embedding model is empty")
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("embedding dimension %d is negative", cfg.Dim)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = 2
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if !strings.HasSuffix(u.Path, "/embeddings") {
		u.Path += "/embeddings"
	}
	u.Fragment = ""
	q, d := ModelPrefixes(cfg.Model)
	return &OpenAI{cfg: cfg, endpoint: u.String(), shown: u.Redacted(), dim: cfg.Dim, queryPrefix: q, docPrefix: d}, nil
}

// ModelPrefixes returns the prefixes that a model family was trained to expect in front of
// queries and documents, by the model's name (an Ollama tag or a Hugging Face id): nomic-embed
// ("search_query: ", "search_document: "), E5 ("query: ", "passage: "), and the BGE, mxbai and
// Arctic English models (an instruction in front of queries only). Other models get none.
func ModelPrefixes(model string) (query, document string) {
	m := strings.ToLower(model)
	const retrieval = "Represent this sentence for searching relevant passages: "
	switch {
	case strings.Contains(m, "nomic-embed"):
		return "search_query: ", "search_document: "
	case strings.Contains(m, "multilingual-e5") || strings.Contains(m, "e5-") && !strings.Contains(m, "instruct"):
		return "query: ", "passage: "
	case strings.Contains(m, "mxbai-embed-large"), strings.Contains(m, "bge-") && strings.Contains(m, "-en"),
		strings.Contains(m, "snowflake-arctic-embed"):
		return retrieval, ""
	}
	return "", ""
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Info reports the model and the dimension (0 until the first response when Dim was zero).
func (o *OpenAI) Info() vector.Info {
	o.mu.Lock()
	defer o.mu.Unlock()
	model := o.cfg.Model
	if o.queryPrefix != "" || o.docPrefix != "" {
		model += "+prefixes" // vectors made without the prefixes are re-embedded
	}
	return vector.Info{Name: "openai", Model: model, Dim: o.dim}
}

// Embed returns one vector per text, in the order of texts, sending them BatchSize at a time.
// Errors wrap ErrUnavailable when the service could not be used (after the retries), and
// ErrDimension when its vectors have the wrong length; they name the HTTP status and the
// server's error message, never the API key.
func (o *OpenAI) Embed(ctx context.Context, texts []string, kind vector.Kind) ([][]float32, error) {
	prefix := o.docPrefix
	if kind == vector.Query {
		prefix = o.queryPrefix
	}
	if prefix != "" {
		prefixed := make([]string, len(texts))
		for i, t := range texts {
			prefixed[i] = prefix + t
		}
		texts = prefixed
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		batch := texts[start:min(start+o.cfg.BatchSize, len(texts))]
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			if len(texts) > len(batch) {
				err = fmt.Errorf("embed texts %d–%d of %d: %w", start+1, start+len(batch), len(texts), err)
			}
			return nil, &redactedError{err: err, secret: o.cfg.APIKey}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one request, retrying what ErrUnavailable marks as transient.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{o.cfg.Model, texts})
	if err != nil {
		return nil, fmt.Errorf("encode embedding request: %w", err)
	}
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		vecs, retryAfter, err := o.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if !errors.Is(err, vector.ErrUnavailable) || attempt > o.cfg.Retries || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		wait := backoff
		if retryAfter > 0 {
			wait = min(retryAfter, maxRetryAfter)
		}
		if err := o.cfg.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w: waiting to retry: %w", vector.ErrUnavailable, err)
		}
		backoff *= 2
	}
}

// post makes one attempt. A transient failure wraps ErrUnavailable and may come with the wait
// that the server asked for.
func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embedding request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, which may hold userinfo
		}
		if ctx.Err() == nil && actx.Err() == context.DeadlineExceeded {
			return nil, 0, fmt.Errorf("%w: POST %s: no answer within %v: %w", vector.ErrUnavailable, o.shown, o.cfg.Timeout, err)
		}
		return nil, 0, fmt.Errorf("%w: POST %s: %w", vector.ErrUnavailable, o.shown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: read response from %s: %w", vector.ErrUnavailable, o.shown, err)
	}
	if len(data) > maxResponseBytes {
		return nil, 0, fmt.Errorf("embedding response is larger than %d MiB", maxResponseBytes>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		se := &statusError{status: resp.StatusCode, message: o.serverMessage(data)}
		return nil, retryAfter(resp.Header.Get("Retry-After")), se
	}
	vecs, err := decodeEmbeddings(data, n)
	if err != nil {
		return nil, 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dim == 0 {
		o.dim = len(vecs[0])
	}
	for i, v := range vecs {
		if len(v) != o.dim {
			return nil, 0, fmt.Errorf("embedding %d has %d dimensions, want %d: %w", i, len(v), o.dim, vector.ErrDimension)
		}
	}
	return vecs, 0, nil
}

// decodeEmbeddings reads an embeddings response, placing each vector by its index. A server
// that sends no index at all is taken to answer in order.
func decodeEmbeddings(data []byte, n int) ([][]float32, error) {
	var r struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode embedding response: %w", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embedding response has %d vectors for %d texts", len(r.Data), n)
	}
	positional := true
	for _, d := range r.Data {
		positional = positional && d.Index == nil
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		if !positional {
			if d.Index == nil || *d.Index < 0 || *d.Index >= n || out[*d.Index] != nil {
				return nil, errors.New("embedding response has a missing, out-of-range or repeated index")
			}
			i = *d.Index
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding response has an empty vector at index %d", i)
		}
		out[i] = d.Embedding
	}
	return out, nil
}

// statusError is a non-2xx answer. It wraps ErrUnavailable for 429 and 5xx.
type statusError struct {
	status  int
	message string // the server's, redacted and shortened; may be empty
}

func (e *statusError) Error() string {
	what := "embedding request refused"
	if e.transient() {
		what = vector.ErrUnavailable.Error()
	}
	s := fmt.Sprintf("%s: HTTP %d %s", what, e.status, http.StatusText(e.status))
	if e.message != "" {
		s += ": " + e.message
	}
	return s
}

func (e *statusError) transient() bool {
	return e.status == http.StatusTooManyRequests || e.status >= 500
}

func (e *statusError) Unwrap() error {
	if e.transient() {
		return vector.ErrUnavailable
	}
	return nil
}

// serverMessage extracts what a failed response says: OpenAI's {"error":{"message","type"}},
// the {"error":"…"} that some servers send, or else the start of the body as text. The API
// key is removed from it.
func (o *OpenAI) serverMessage(data []byte) string {
	var msg string
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct{ Message, Type string }
		var str string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
			if obj.Type != "" {
				msg += " (" + obj.Type + ")"
			}
		case json.Unmarshal(e.Error, &str) == nil:
			msg = str
		}
	}
	if msg == "" {
		msg = string(data)
	}
	msg = redact(msg, o.cfg.APIKey)
	msg = strings.Join(strings.Fields(strings.ToValidUTF8(msg, "")), " ")
	if len(msg) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date; 0 when absent or bad.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// redactedError keeps a secret out of an error's text while errors.Is and errors.As still see
// the error it wraps.
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string { return redact(e.err.Error(), e.secret) }
func (e *redactedError) Unwrap() error { return e.err }

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}
