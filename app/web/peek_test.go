package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/app/web"
)

// zeros is a JSON array of n zeros: 2n+1 bytes, n batch elements.
func zeros(n int) []byte {
	b := bytes.Repeat([]byte("0,"), n)
	b[len(b)-1] = ']'
	return append([]byte{'['}, b...)
}

// TestServer_HugeBatch (SECURITY.md LA-11; issue 28, item 1): a 4 MiB body of 2M zeros, with a
// read token and, with argument tokens on, without any token, is refused at the batch limit
// before its elements are decoded: the request allocates less than 100 MiB in all. Before, the
// peek of the body decoded every element, and then the mcp server did: 1,909 MiB allocated for
// the request with a token, 1,389 MiB without one (9.6 and 9.5 MiB after, the body's buffer).
// A single message whose method is such an array, carrying an argument token, is walked to its
// token without building the array.
func TestServer_HugeBatch(t *testing.T) {
	const maxAlloc = 100 << 20
	batch := zeros(2<<20 - 1)
	// 4 MiB less the envelope: a method that is an array of ~2M zeros.
	huge := zeros(2<<20 - 128)
	method := func(tok string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":7,"params":{"name":"echo","arguments":{"text":"x","access_token":%q}},"method":%s}`, tok, huge)
	}
	for _, tc := range []struct {
		name       string
		bearer     bool
		body       func(f *fixture) []byte
		wantStatus int
		want       string
	}{
		{"batch, read token", true, func(*fixture) []byte { return batch }, http.StatusBadRequest, "the limit is 20"},
		{"batch, argument tokens on, no token", false, func(*fixture) []byte { return batch }, http.StatusBadRequest, "the limit is 20"},
		// Not a tools/call, so its token does not count, but it is walked to.
		{"array method, argument token", false, func(f *fixture) []byte { return method(f.read) }, http.StatusUnauthorized, `"id":7`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustOpenServer(t, func(c *web.Config) { c.AllowArgumentTokens = true })
			h := f.Handler()
			body := tc.body(f)
			if len(body) > 4<<20 {
				t.Fatalf("the body is %d bytes, more than the 4 MiB the server reads", len(body))
			}
			r := httptest.NewRequest(http.MethodPost, testPublicURL+"/mcp", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			if tc.bearer {
				r.Header.Set("Authorization", "Bearer "+f.read)
			}
			rec := httptest.NewRecorder()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			h.ServeHTTP(rec, r)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %.1f MiB for the request", float64(alloc)/(1<<20))
			if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("answer %d %.300s, want %d with %s", rec.Code, rec.Body, tc.wantStatus, tc.want)
			}
			if alloc >= maxAlloc {
				t.Errorf("the request allocated %d MiB, want < %d MiB", alloc>>20, maxAlloc>>20)
			}
		})
	}
}

// TestServer_AnonymousRateLimitFirst (SECURITY.md LA-11): a request without a valid token is
// refused by its address's rate limit before its body is read at all.
func TestServer_AnonymousRateLimitFirst(t *testing.T) {
	for _, argTokens := range []bool{false, true} {
		t.Run(map[bool]string{false: "argument tokens off", true: "argument tokens on"}[argTokens], func(t *testing.T) {
			f := MustOpenServer(t, func(c *web.Config) {
				c.AllowArgumentTokens = argTokens
				c.Limiter = limit.New(limit.Config{PerMinute: 1, Burst: 1, Now: c.Now})
			})
			h := f.Handler()
			send := func() (*httptest.ResponseRecorder, *countingReader) {
				body := &countingReader{r: strings.NewReader(callEcho)}
				r := httptest.NewRequest(http.MethodPost, testPublicURL+"/mcp", body)
				r.ContentLength = int64(len(callEcho))
				r.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return rec, body
			}
			if rec, _ := send(); rec.Code != http.StatusUnauthorized {
				t.Fatalf("first request without a token: %d, want 401", rec.Code)
			}
			rec, body := send()
			if rec.Code != http.StatusTooManyRequests {
				t.Errorf("second request without a token: %d, want 429; %s", rec.Code, rec.Body)
			}
			if body.n != 0 {
				t.Errorf("the refused request's body was read (%d bytes), want none", body.n)
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
