package ops_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

func TestImport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db") // import creates the database
	file := filepath.Join(dir, "graph.jsonl")
	os.WriteFile(file, []byte(strings.Join([]string{
		`{"type":"entity","name":"Rio","entityType":"dog","observations":["Is afraid of thunder"]}`,
		`not json`,
		`{"type":"entity","name":"Leak","entityType":"secret","observations":["key AKIAIOSFODNN7EXAMPLE"]}`,
	}, "\n")), 0o600)

	t.Run("a file, with bad lines", func(t *testing.T) {
		out, errs, err := run(t, newEnv(db, ""), "import", file)
		if want := "imported 1 of 1 memory from " + file + " (0 already stored, 2 bad lines)\n"; out != want {
			t.Errorf("output %q, want %q", out, want)
		}
		if !strings.Contains(errs, "line 2: not JSON") || !strings.Contains(errs, "line 3: ") {
			t.Errorf("standard error does not list the bad lines:\n%s", errs)
		}
		if err == nil || err.Error() != "import: skipped 2 bad lines (listed above)" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("again, from standard input", func(t *testing.T) {
		in := `{"type":"entity","name":"Rio","entityType":"dog","observations":["Is afraid of thunder"]}`
		out := mustRun(t, newEnv(db, in), "import", "-")
		if want := "imported 0 of 1 memory from standard input (1 already stored, 0 bad lines)\n"; out != want {
			t.Errorf("output %q, want %q", out, want)
		}
	})
	t.Run("with the store app opens", func(t *testing.T) {
		env := newEnv(db, `{"type":"entity","name":"Rio","entityType":"dog","observations":["Sleeps on the sofa"]}`)
		opened := 0
		env.OpenMemories = func(db *kv.DB) (*memory.Store, error) {
			opened++
			return memory.Open(db, memory.Config{})
		}
		mustRun(t, env, "import", "-")
		if opened != 1 {
			t.Errorf("OpenMemories called %d times, want 1", opened)
		}
	})
	t.Run("markdown, by its content and by --format", func(t *testing.T) {
		notes := "# Garden\n\n- Tomatoes go in after the last frost\n- Basil likes the south window\n"
		out := mustRun(t, newEnv(db, notes), "import", "-")
		if want := "imported 2 of 2 memories from standard input (0 already stored, 0 bad lines)\n"; out != want {
			t.Errorf("output %q, want %q", out, want)
		}
		// The same JSON line read as text is one paragraph.
		line := `{"text":"Keeps bees"}`
		out = mustRun(t, newEnv(db, line), "import", "--format", "text", "-")
		if want := "imported 1 of 1 memory from standard input (0 already stored, 0 bad lines)\n"; out != want {
			t.Errorf("output %q, want %q", out, want)
		}
	})
	t.Run("a supersedes cycle is skipped and counted (SECURITY.md ST-18)", func(t *testing.T) {
		in := `{"format":"ownsona-export","version":1}
{"id":1,"text":"The flat is on Rue du Bac","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","last_confirmed_at":"2026-01-02T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[2],"superseded_by":2}
{"id":2,"text":"The flat is on Rue Oberkampf","created_at":"2026-01-03T03:04:05Z","updated_at":"2026-01-03T03:04:05Z","last_confirmed_at":"2026-01-03T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[1],"superseded_by":1}
`
		out := mustRun(t, newEnv(db, in), "import", "-")
		if want := "skipped 1 supersedes link the rules refuse (a cycle, or a memory with another current successor)\n"; !strings.HasSuffix(out, want) {
			t.Errorf("output %q, want it to end in %q", out, want)
		}
	})
	t.Run("an unknown format", func(t *testing.T) {
		_, _, err := run(t, newEnv(db, ""), "import", "--format", "csv", "-")
		if err == nil || !strings.Contains(err.Error(), `"csv" is not one of ownsona, server-memory`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		_, _, err := run(t, newEnv(db, ""), "import", filepath.Join(dir, "none.jsonl"))
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("err = %v", err)
		}
	})
}
