package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/console"
)

// TestConsole_Activity: the audit log, newest first, filtered by client, tool, outcome and
// time, 50 to a page.
func TestConsole_Activity(t *testing.T) {
	f := MustOpen(t)
	t0 := time.Now().UTC().Truncate(24 * time.Hour) // today: the log keeps 90 days
	day, next := t0.Format(time.DateOnly), t0.Add(24*time.Hour).Format(time.DateOnly)
	for i := range 60 {
		e := auditEntry("Claude", "recall")
		e.Time = t0.Add(time.Duration(i) * time.Minute)
		if i%10 == 0 {
			e.Client, e.Tool, e.Outcome = "pat:script", "remember", audit.OutcomeToolError
		}
		f.audit.Record(e)
	}
	b := f.signedIn(t)
	body := b.page(t, "/console/activity")
	if n := strings.Count(body, "<tr>") - 1; n != 50 {
		t.Errorf("first page: %d rows, want 50", n)
	}
	wantContains(t, "the first page", body, day+" 00:59:00", `href="/console/activity?page=1"`, "Next page")
	if i, j := strings.Index(body, "00:59:00"), strings.Index(body, "00:58:00"); i < 0 || j < i {
		t.Error("not newest first")
	}
	body = b.page(t, "/console/activity?page=1")
	if n := strings.Count(body, "<tr>") - 1; n != 10 || strings.Contains(body, "Next page") {
		t.Errorf("second page: %d rows, want the last 10 and no next page", n)
	}
	filtered := func(name, query string, want int) scenario {
		return scenario{Name: name, Method: http.MethodGet, URL: "/console/activity" + query, WantStatus: http.StatusOK,
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if n := max(strings.Count(rec.Body.String(), "<tr>")-1, 0); n != want {
					t.Errorf("%d rows, want %d", n, want)
				}
			}}
	}
	signedIn.RunOn(t, b, []scenario{
		filtered("tool", "?tool=remember", 6),
		filtered("client", "?client=pat:script", 6),
		filtered("outcome", "?outcome=tool_error", 6),
		filtered("outcome and tool", "?outcome=ok&tool=recall", 50),
		filtered("today", "?from="+day+"&to="+day, 50),
		filtered("from tomorrow", "?from="+next, 0),
	})
}

// TestConsole_NoAudit: without an audit log the page says so.
func TestConsole_NoAudit(t *testing.T) {
	f := MustOpen(t, func(o *options) { o.cfg = func(c *console.Config) { c.Audit = nil } })
	body := f.signedIn(t).page(t, "/console/activity")
	wantContains(t, "the activity page", body, "This server keeps no audit log.")
}
