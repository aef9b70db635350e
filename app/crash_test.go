package app

import (
	"github.com/ownsona/ownsona/app/memory"

	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ownsona/ownsona/kv"
)

// TestCrash_KillNine writes memories through the real binary over stdio and kills it with
// SIGKILL after a random number of acknowledged writes, with more in flight, 20 times on one file: every write it acknowledged must be present
// byte for byte afterwards, and the file must open and pass the consistency check.
func TestCrash_KillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills the binary")
	}
	bin := ownsonaBinary(t)
	db := filepath.Join(t.TempDir(), "ownsona.db")
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[uint64]string{} // id → text the server acknowledged
	for round := range 20 {
		cmd := exec.Command(bin, "stdio", "--db", db, "--log-level", "error")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The writer keeps many requests in flight (batches and singles); the killer strikes
		// after a random delay, mid-write.
		go func() {
			for k := 1; ; k++ {
				texts := crashTexts(round, k)
				var line string
				if len(texts) == 2 {
					line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember_batch","arguments":{"items":[{"text":%q},{"text":%q}],"dedup_policy":"insert"}}}`, k, texts[0], texts[1])
				} else {
					line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":%q,"dedup_policy":"insert"}}}`, k, texts[0])
				}
				if _, err := io.WriteString(stdin, line+"\n"); err != nil {
					return
				}
			}
		}()
		// The kill follows a random number of acknowledgements, not a delay: on a busy machine a
		// delay could end a process that had not yet opened the file. The writer keeps sending,
		// so the kill still lands while writes are in flight.
		strikeAt, answered := 1+rng.IntN(40), 0
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			var resp struct {
				ID     int `json:"id"`
				Result struct {
					StructuredContent struct {
						OK       bool   `json:"ok"`
						MemoryID uint64 `json:"memory_id"`
						Results  []struct {
							OK       bool   `json:"ok"`
							MemoryID uint64 `json:"memory_id"`
						} `json:"results"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
				t.Fatalf("round %d: bad response %q: %v", round, sc.Text(), err)
			}
			p := resp.Result.StructuredContent
			if !p.OK {
				t.Fatalf("round %d: write failed: %s", round, sc.Text())
			}
			texts := crashTexts(round, resp.ID)
			if len(texts) == 1 {
				acked[p.MemoryID] = texts[0]
			}
			for i, r := range p.Results { // a batch: two texts, two results
				if !r.OK {
					t.Fatalf("round %d: batch item failed: %s", round, sc.Text())
				}
				acked[r.MemoryID] = texts[i]
			}
			if answered++; answered == strikeAt {
				cmd.Process.Kill()
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		verifyAcked(t, db, acked, round)
	}
	t.Logf("%d acknowledged writes over 20 SIGKILLs, all present", len(acked))
	if len(acked) < 20 {
		t.Errorf("only %d writes acknowledged over 20 rounds; the test did not exercise writes", len(acked))
	}
}

// crashTexts is what request k of a round writes: every third a batch of two.
func crashTexts(round, k int) []string {
	if k%3 == 0 {
		return []string{fmt.Sprintf("round %d batch %d item a", round, k), fmt.Sprintf("round %d batch %d item b", round, k)}
	}
	return []string{fmt.Sprintf("round %d fact %d", round, k)}
}

// verifyAcked opens the file after a crash: it must pass bbolt's check, and every acknowledged
// memory must be present with exactly the text it was written with.
func verifyAcked(t *testing.T, path string, acked map[uint64]string, round int) {
	t.Helper()
	db, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatalf("round %d: consistency check: %v", round, err)
	}
	store, err := memory.Open(db, memory.Config{})
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	defer store.Close()
	for id, text := range acked {
		m, err := store.Get(id)
		switch {
		case err != nil:
			t.Fatalf("round %d: acknowledged memory %d: %v", round, id, err)
		case m.Text != text:
			t.Fatalf("round %d: memory %d changed from %q to %q", round, id, text, m.Text)
		}
	}
}
