package uploads_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/uploads"
	"github.com/ownsona/ownsona/kv/kvtest"
)

func mustService(tb testing.TB, base string) *uploads.Service {
	tb.Helper()
	db := kvtest.Open(tb, memory.Migrations...)
	mem, err := memory.Open(db, memory.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	svc := uploads.New(uploads.Config{Memories: mem, BaseURL: func() string { return base }})
	tb.Cleanup(func() { svc.Close(); mem.Close() })
	return svc
}

// TestService_Prepare: what Prepare refuses, each with a reason.
func TestService_Prepare(t *testing.T) {
	code := func(err error) string {
		var r *uploads.Refusal
		var ie *memory.InputError
		switch {
		case errors.As(err, &r):
			return r.Code
		case errors.As(err, &ie):
			return ie.Field
		}
		return ""
	}
	me := uploads.Owner{Key: "pat:1", Name: "pat:me"}
	if _, err := mustService(t, "").Prepare(me, "a.md", ""); code(err) != uploads.CodeNotServing {
		t.Errorf("without HTTP: %v", err)
	}
	svc := mustService(t, "https://mem.example.com")
	for _, tt := range []struct{ filename, format, want string }{
		{"a.md", "csv", "format"},
		{"two\nlines", "", "filename"},
		{"  ", "", "filename"},
	} {
		if _, err := svc.Prepare(me, tt.filename, tt.format); code(err) != tt.want {
			t.Errorf("Prepare(%q, %q) = %v; want a refusal of %s", tt.filename, tt.format, err, tt.want)
		}
	}
	for i := range 10 {
		tk, err := svc.Prepare(me, "a.md", "markdown")
		if err != nil || tk.URL != "https://mem.example.com/mcp/upload/"+tk.ID {
			t.Fatalf("ticket %d: %+v, %v", i, tk, err)
		}
	}
	if _, err := svc.Prepare(me, "a.md", ""); code(err) != uploads.CodeTooMany {
		t.Errorf("the 11th unused URL: %v", err)
	}
	if _, err := svc.Prepare(uploads.Owner{Key: "pat:2"}, "a.md", ""); err != nil {
		t.Errorf("another principal is not limited by the first: %v", err)
	}
	if n := len(svc.Jobs("pat:1")); n != 10 {
		t.Errorf("%d jobs of pat:1, want 10", n)
	}
}

// TestService_Receive_bounds (SECURITY.md UP-01): an upload's expansion follows the upload cap
// (ExpansionFactor × MaxBytes), and an import that runs past ImportTimeout fails; each job ends
// failed with an error that names the limit.
func TestService_Receive_bounds(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	me := uploads.Owner{Key: "pat:1", Name: "pat:me"}
	for _, tt := range []struct {
		name    string
		cfg     uploads.Config
		stepped bool // the store's clock moves a second each time it is read
		body    []byte
		want    string
	}{
		{"past 16 × the upload cap", uploads.Config{MaxBytes: 64 << 10}, false,
			gz([]byte(strings.Repeat("Likes tea.\n\n", 100_000))), // 1.1 MiB
			"the compressed input expands past 1 MiB, the most one import may read (max-upload-mb)"},
		{"past the time an import may take", uploads.Config{MaxBytes: 64 << 10, ImportTimeout: time.Minute}, true,
			[]byte(strings.Repeat("- Likes tea.\n", 2000)),
			"the import ran longer than 1m0s, the most one import may take"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var now atomic.Int64
				now.Store(time.Now().Unix())
				mcfg := memory.Config{}
				if tt.stepped {
					mcfg.Now = func() time.Time { return time.Unix(now.Add(1), 0) }
				}
				db := kvtest.Open(t, memory.Migrations...)
				mem, err := memory.Open(db, mcfg)
				if err != nil {
					t.Fatal(err)
				}
				cfg := tt.cfg
				cfg.Memories, cfg.BaseURL = mem, func() string { return "https://mem.example.com" }
				svc := uploads.New(cfg)
				defer func() { svc.Close(); mem.Close() }()
				if got := svc.MaxExpanded(); got != uploads.ExpansionFactor*cfg.MaxBytes {
					t.Errorf("MaxExpanded %d, want %d × %d", got, uploads.ExpansionFactor, cfg.MaxBytes)
				}
				tk, err := svc.Prepare(me, "notes.md", "")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := svc.Receive(tk.ID, tk.Token, [][]byte{tt.body}); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // the import has ended
				job, _ := svc.Job(me.Key, tk.ID)
				if job.State != memory.ImportFailed || !strings.Contains(job.Error, tt.want) {
					t.Errorf("job %+v, want failed with %q", job, tt.want)
				}
			})
		})
	}
	t.Run("the ceiling", func(t *testing.T) {
		svc := uploads.New(uploads.Config{MaxBytes: 16 << 30})
		if got := svc.MaxExpanded(); got != importers.MaxExpandedCeiling {
			t.Errorf("MaxExpanded %d, want the ceiling %d", got, importers.MaxExpandedCeiling)
		}
	})
}

// split cuts b into pieces of n bytes, as the HTTP side hands a file over.
func split(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// TestService_Receive_pieces: a file handed over in pieces imports as the whole file would,
// a zip too (its directory is read at the end); and while a transfer holds an upload URL,
// another is refused (SECURITY.md UP-02).
func TestService_Receive_pieces(t *testing.T) {
	notes := []byte("- Likes tea.\n- Lives in Lisbon.\n- Plays the cello on Sundays.\n")
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	fw, _ := zw.Create("notes.md")
	fw.Write(notes)
	zw.Close()
	me := uploads.Owner{Key: "pat:1", Name: "pat:me"}
	for _, tt := range []struct {
		name, file string
		body       []byte
	}{
		{"markdown in 7-byte pieces", "notes.md", notes},
		{"a zip in 7-byte pieces", "notes.zip", zipped.Bytes()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := kvtest.Open(t, memory.Migrations...)
				mem, err := memory.Open(db, memory.Config{})
				if err != nil {
					t.Fatal(err)
				}
				svc := uploads.New(uploads.Config{Memories: mem, BaseURL: func() string { return "https://mem.example.com" }})
				defer func() { svc.Close(); mem.Close() }()
				tk, err := svc.Prepare(me, tt.file, "")
				if err != nil {
					t.Fatal(err)
				}
				_, end, err := svc.Begin(tk.ID, tk.Token)
				if err != nil {
					t.Fatal(err)
				}
				var r *uploads.Refusal
				if _, _, err := svc.Begin(tk.ID, tk.Token); !errors.As(err, &r) || r.Code != uploads.CodeInProgress {
					t.Errorf("a second transfer while the first holds the URL: %v, want %s", err, uploads.CodeInProgress)
				}
				if _, err := svc.Receive(tk.ID, tk.Token, split(tt.body, 7)); err != nil {
					t.Fatal(err)
				}
				end()
				synctest.Wait() // the import has ended
				job, _ := svc.Job(me.Key, tk.ID)
				if job.State != memory.ImportDone || job.Imported != 3 || job.Bytes != int64(len(tt.body)) {
					t.Errorf("job %+v, want done with 3 imported from %d bytes", job, len(tt.body))
				}
				if _, _, err := svc.Begin(tk.ID, tk.Token); !errors.As(err, &r) || r.Code != uploads.CodeUsed {
					t.Errorf("a transfer after the file was taken: %v, want %s", err, uploads.CodeUsed)
				}
			})
		})
	}
}
