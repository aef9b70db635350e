package app

import (
	"github.com/ownsona/ownsona/app/memory"

	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// modelServer is an OpenAI-compatible embeddings endpoint for any model name, whose vectors
// depend on the model (so a model change really changes them), and which can hold batches
// back: while gate is set, a request of more than one text (a batch of the re-embedding, not a
// query) waits for a token from it; batches counts those served through it.
type modelServer struct {
	gate    atomic.Pointer[chan struct{}]
	batches atomic.Int64
}

// hold makes batches wait for tokens, given with allow.
func (m *modelServer) hold() {
	ch := make(chan struct{}, 64)
	m.gate.Store(&ch)
}

// allow lets n more batches through.
func (m *modelServer) allow(n int) {
	for range n {
		*m.gate.Load() <- struct{}{}
	}
}

// release lets every batch through, now and from now on.
func (m *modelServer) release() {
	if ch := m.gate.Swap(nil); ch != nil {
		close(*ch)
	}
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if ch := m.gate.Load(); ch != nil && len(req.Input) > 1 {
		select {
		case <-*ch:
			m.batches.Add(1)
		case <-r.Context().Done(): // the process was killed
			return
		}
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, text := range req.Input {
		v := make([]float32, 8)
		for _, word := range strings.Fields(text) {
			h := fnv.New32a()
			h.Write([]byte(req.Model + "/" + word))
			v[h.Sum32()%8]++
		}
		var n float64
		for _, f := range v {
			n += float64(f * f)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n) + 1e-9)
		}
		data = append(data, item{i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// stdioProc is the binary serving stdio with one request at a time.
type stdioProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	calls int
}

func startStdio(t *testing.T, db, embedURL, model string) *stdioProc {
	t.Helper()
	cmd := exec.Command(ownsonaBinary(t), "stdio", "--db", db, "--log-level", "error")
	cmd.Env = append(os.Environ(), "OWNSONA_EMBEDDER=openai", "OWNSONA_EMBED_URL="+embedURL, "OWNSONA_EMBED_MODEL="+model)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &stdioProc{cmd: cmd, in: in, out: sc}
}

// call runs one tool and returns its structured content.
func (p *stdioProc) call(t *testing.T, tool string, args any) map[string]any {
	t.Helper()
	p.calls++
	a, _ := json.Marshal(args)
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", p.calls, tool, a)
	if !p.out.Scan() {
		t.Fatalf("%s: no answer: %v", tool, p.out.Err())
	}
	var resp struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &resp); err != nil || resp.Result.StructuredContent["ok"] != true {
		t.Fatalf("%s: %s", tool, p.out.Text())
	}
	return resp.Result.StructuredContent
}

// waitEmbedded polls memory_stats until no memory waits for a vector of the current model.
func (p *stdioProc) waitEmbedded(t *testing.T, model string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // against a hang only: a condition
	for {
		st := p.call(t, "memory_stats", map[string]any{})
		emb := st["embedder"].(map[string]any)
		prog := emb["reembed_progress"].(map[string]any)
		if emb["model"] == model && prog["pending"] == 0.0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("still embedding after 3 minutes: %v", emb)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReembed_KillNine changes the embedding model of a store of 600 memories and kills the
// server with SIGKILL three times while it re-embeds in the background: the next start resumes,
// and at the end every memory is there with a vector of the new model, none lost or left
// without one (issue 4).
func TestReembed_KillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	emb := &modelServer{}
	srv := httptest.NewServer(emb)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "ownsona.db")
	const n = 600

	p := startStdio(t, db, srv.URL+"/v1", "model-a")
	for b := range n / 200 {
		items := make([]map[string]any, 200)
		for i := range items {
			items[i] = map[string]any{"text": fmt.Sprintf("memory %d of batch %d about topic %d", i, b, (i*7+b)%31)}
		}
		p.call(t, "remember_batch", map[string]any{"items": items, "dedup_policy": "insert"})
	}
	p.waitEmbedded(t, "model-a")
	p.in.Close()
	p.cmd.Wait()

	// 600 memories are about 19 batches of 32: each start lets 3 through and is killed while
	// the 4th waits, mid-way whatever the machine's load.
	emb.hold()
	var progress []float64
	for range 3 {
		p := startStdio(t, db, srv.URL+"/v1", "model-b")
		st := p.call(t, "memory_stats", map[string]any{})
		done := st["embedder"].(map[string]any)["reembed_progress"].(map[string]any)["done"].(float64)
		progress = append(progress, done)
		if r := p.call(t, "recall", map[string]any{"query": "topic 3"}); len(r["matches"].([]any)) == 0 {
			t.Errorf("recall found nothing while re-embedding: %v", r)
		}
		want := emb.batches.Load() + 3
		emb.allow(3)
		for deadline := time.Now().Add(2 * time.Minute); emb.batches.Load() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) { // against a hang only
				t.Fatalf("%d of 3 batches served in 2 minutes", 3-(want-emb.batches.Load()))
			}
		}
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	t.Logf("re-embedding progress at each restart: %v", progress)
	if last := progress[len(progress)-1]; last == 0 || last >= n {
		t.Errorf("re-embedding progress at each restart: %v; want the last start to resume mid-way", progress)
	}

	emb.release()
	p = startStdio(t, db, srv.URL+"/v1", "model-b")
	st := p.waitEmbedded(t, "model-b")
	if st["total"] != float64(n) || st["active"] != float64(n) {
		t.Errorf("after the kills: total %v active %v, want %d", st["total"], st["active"], n)
	}
	p.in.Close()
	p.cmd.Wait()

	file, err := kv.Open(db, kv.Options{ReadOnly: true, Migrations: memory.Migrations})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	c, err := memory.Check(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) > 0 {
		t.Errorf("check: %v", c.Problems)
	}
	memories, vectors := c.Memories, 0
	for embedder, k := range c.Embedders {
		if !strings.HasPrefix(embedder, "openai:model-b:") {
			t.Errorf("%d vectors of %s, want only model-b's", k, embedder)
			continue
		}
		vectors += k
	}
	if c.Dims[8] != vectors {
		t.Errorf("vector lengths %v, want 8 dimensions", c.Dims)
	}
	if memories != n || vectors != n {
		t.Errorf("%d memories, %d vectors of the new model; want %d of each", memories, vectors, n)
	}
	t.Logf("re-embedded memories found at each restart: %v of %d", progress, n)
}
