package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/web"
)

// refusal is a coded refusal of fakeUploads, as app/uploads gives.
type refusal struct{ code string }

func (r *refusal) Error() string       { return "refused: " + r.code }
func (r *refusal) RefusalCode() string { return r.code }

// fakeUploads is an UploadReceiver whose upload ids are any name and whose tokens are "osu_"
// and the id; it records the transfers in progress and the files received.
type fakeUploads struct {
	mu       sync.Mutex
	begun    int
	active   map[string]bool
	received map[string]int // bytes per id
}

func newFakeUploads() *fakeUploads {
	return &fakeUploads{active: map[string]bool{}, received: map[string]int{}}
}

const fakeMaxBytes = 64 << 20

func (u *fakeUploads) Begin(id, token string) (int64, func(), error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.begun++
	switch {
	case token != "osu_"+id:
		return 0, nil, &refusal{"invalid_upload_token"}
	case u.received[id] > 0:
		return 0, nil, &refusal{"upload_token_used"}
	case u.active[id]:
		return 0, nil, &refusal{"upload_in_progress"}
	}
	u.active[id] = true
	return fakeMaxBytes, func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		delete(u.active, id)
	}, nil
}

func (u *fakeUploads) Receive(id, token string, body [][]byte) (any, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, b := range body {
		u.received[id] += len(b)
	}
	return map[string]any{"id": id}, nil
}

// state returns how many transfers began (refused or not) and which are in progress.
func (u *fakeUploads) state() (begun int, active []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id := range u.active {
		active = append(active, id)
	}
	return u.begun, active
}

// waitUntil polls cond until it holds; the deadline only stops a hang.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("still not %s after 30 s", what)
		}
	}
}

// stalledUpload opens a connection that sends the headers of an upload of size bytes to
// upload id, from the address from (X-Forwarded-For), then sent of its body, then nothing. It
// is closed at cleanup.
func stalledUpload(tb testing.TB, addr, id, from string, size int, sent string) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s%s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: %s\r\nAuthorization: Bearer osu_%s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s",
		web.UploadPath, id, addr, from, id, size, sent)
	return c
}

// answer reads the response on c, waiting at most 30 s (a bound against a hang, never a
// condition): its status and its JSON body's error code.
func answer(tb testing.TB, c net.Conn) (int, string) {
	tb.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		tb.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Error string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error
}

// heapInUse is the heap's live objects and its unused spans: what the process holds of it.
func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64())
}

// TestServer_StalledUploads (SECURITY.md UP-02; issue 28, item 3): 16 connections that send the
// headers of 64 MiB uploads, each to its own upload URL, and stop take only the uploads' own
// pool (two; the others get 503 uploads_busy at once) and 32 KiB each; meanwhile the OAuth
// endpoints and the console's sign-in answer everyone else. Before, each of them held a slot
// of the pool those share, for ten minutes, with 64 MiB allocated before a byte arrived:
// 1 GiB, and /oauth/token and /console/signin answered 503.
func TestServer_StalledUploads(t *testing.T) {
	up := newFakeUploads()
	_, base := MustListen(t, withConsole, func(c *web.Config) { c.MaxConcurrent = 64; c.Uploads = up }) // the shared pool: 16
	addr := strings.TrimPrefix(base, "http://")

	runtime.GC()
	before := heapInUse()
	var conns []net.Conn
	for i := range 16 {
		conns = append(conns, stalledUpload(t, addr, fmt.Sprintf("u%d", i), fmt.Sprintf("198.51.100.%d", i+1), 64<<20, ""))
	}
	waitUntil(t, "16 transfers begun", func() bool { begun, _ := up.state(); return begun == 16 })

	for i := range 40 {
		from := fmt.Sprintf("203.0.113.%d", i+1)
		for _, path := range []string{"/oauth/token", "/console/signin"} {
			req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader("grant_type=refresh_token&refresh_token=nope"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", from)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("POST %s %d while 16 uploads stall: %d, want it served", path, i, resp.StatusCode)
			}
		}
	}
	runtime.GC()
	if grew := heapInUse() - before; grew > 100<<20 {
		t.Errorf("16 stalled uploads hold %d MiB, want < 100 MiB", grew>>20)
	} else {
		t.Logf("16 stalled uploads hold %+.1f MiB of heap", float64(grew)/(1<<20))
	}

	waitUntil(t, "at most 2 transfers in progress", func() bool { _, active := up.state(); return len(active) <= web.MaxUploads })
	_, active := up.state()
	for i, c := range conns {
		if id := fmt.Sprintf("u%d", i); !slices.Contains(active, id) {
			if status, code := answer(t, c); status != http.StatusServiceUnavailable || code != "uploads_busy" {
				t.Errorf("upload %s beyond the uploads' pool: %d %s, want 503 uploads_busy", id, status, code)
			}
		}
	}
}

// TestServer_UploadOneTransfer (SECURITY.md UP-02): while a transfer to an upload URL is in
// progress, another to the same URL is refused with 409 upload_in_progress; once the first
// ends (here its client goes away), the URL takes the file.
func TestServer_UploadOneTransfer(t *testing.T) {
	up := newFakeUploads()
	_, base := MustListen(t, func(c *web.Config) { c.Uploads = up })
	addr := strings.TrimPrefix(base, "http://")

	first := stalledUpload(t, addr, "one", "198.51.100.1", 1000, "x")
	waitUntil(t, "the first transfer in progress", func() bool { _, active := up.state(); return len(active) == 1 })
	second := stalledUpload(t, addr, "one", "198.51.100.2", 1000, "x")
	if status, code := answer(t, second); status != http.StatusConflict || code != "upload_in_progress" {
		t.Errorf("a second transfer to the same URL: %d %s, want 409 upload_in_progress", status, code)
	}

	first.Close()
	waitUntil(t, "the first transfer ended", func() bool { _, active := up.state(); return len(active) == 0 })
	req, _ := http.NewRequest(http.MethodPost, base+web.UploadPath+"one", strings.NewReader("Likes tea.\n"))
	req.Header.Set("Authorization", "Bearer osu_one")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("the file after the first transfer ended: %d, want 202", resp.StatusCode)
	}
}

// TestServer_UploadMinimumRate (SECURITY.md UP-02): a body that arrives slower than the
// minimum rate is cut with 408 upload_too_slow, and its slot and its URL are free again. The
// rate is shortened (64 KiB per 200 ms window, no grace) so that the test takes a fraction of
// a second; TestRateBody_Read pins the real one on a simulated clock.
func TestServer_UploadMinimumRate(t *testing.T) {
	up := newFakeUploads()
	f, base := MustListen(t, func(c *web.Config) { c.Uploads = up })
	web.SetUploadRate(f.Server, 64<<10, 200*time.Millisecond, 0)
	addr := strings.TrimPrefix(base, "http://")

	c := stalledUpload(t, addr, "slow", "198.51.100.1", 1<<20, strings.Repeat("x", 1<<10))
	if status, code := answer(t, c); status != http.StatusRequestTimeout || code != "upload_too_slow" {
		t.Errorf("a body below the minimum rate: %d %s, want 408 upload_too_slow", status, code)
	}
	waitUntil(t, "the cut transfer ended", func() bool { _, active := up.state(); return len(active) == 0 })
	for i := range web.MaxUploads + 1 { // the cut one's slot came back: every one of these is served
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s%sf%d", base, web.UploadPath, i), strings.NewReader("Likes tea.\n"))
		req.Header.Set("Authorization", fmt.Sprintf("Bearer osu_f%d", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("upload %d after the slow one was cut: %d, want 202", i, resp.StatusCode)
		}
	}
}
