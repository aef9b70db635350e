package uploads_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/uploads"
	"github.com/ownsona/ownsona/kv"
)

func mustService(tb testing.TB, base string) *uploads.Service {
	tb.Helper()
	db, err := kv.Open(filepath.Join(tb.TempDir(), "ownsona.db"), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		tb.Fatal(err)
	}
	mem, err := memory.Open(db, memory.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	svc := uploads.New(uploads.Config{Memories: mem, BaseURL: func() string { return base }})
	tb.Cleanup(func() { svc.Close(); mem.Close(); db.Close() })
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
