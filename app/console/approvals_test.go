package console_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/console"
)

// TestConsole_Approvals: waiting calls are listed with what they would do (as text) and who
// asks, the navigation counts them, Approve and Deny decide them for the asking side, a second
// answer decides nothing, and the decisions are listed.
func TestConsole_Approvals(t *testing.T) {
	q := approval.New(approval.Config{})
	t.Cleanup(q.Close)
	f := MustOpen(t, func(o *options) { o.cfg = func(c *console.Config) { c.Approvals = q } })
	forget := q.Ask("k1", approval.Request{Tool: "forget", Summary: `Forget memory 7 "<b>the spare key</b>" permanently?`, Client: "Claude"}, time.Minute)
	other := q.Ask("k2", approval.Request{Tool: "forget_batch", Summary: "Forget 3 memories permanently?", Client: "pat:script"}, time.Minute)

	b := f.signedIn(t)
	page := b.page(t, "/console/approvals")
	wantContains(t, "approvals page", page, "&lt;b&gt;the spare key&lt;/b&gt;", "Claude", "pat:script", `aria-label="2 waiting"`)
	wantNotContains(t, "approvals page", page, "<b>the spare key</b>")

	next := b.mustPost(t, "/console/approvals/decide", url.Values{"id": {forget.Request().ID}, "decision": {"approve"}})
	wantContains(t, "after approving", next, "Approved", `aria-label="1 waiting"`)
	if o, by := forget.Outcome(); o != approval.Approved || by != "owner (console)" {
		t.Errorf("the approved call's outcome = %s by %q, want approved by the owner", o, by)
	}
	b.mustPost(t, "/console/approvals/decide", url.Values{"id": {other.Request().ID}, "decision": {"deny"}})
	if o, _ := other.Outcome(); o != approval.Rejected {
		t.Errorf("the denied call's outcome = %s, want rejected", o)
	}
	again := b.mustPost(t, "/console/approvals/decide", url.Values{"id": {other.Request().ID}, "decision": {"approve"}})
	wantContains(t, "a second answer", again, "Nothing decided")
	if o, _ := other.Outcome(); o != approval.Rejected {
		t.Errorf("a second answer changed the outcome to %s", o)
	}
	wantContains(t, "recent decisions", b.page(t, "/console/approvals"), "No call is waiting", "approved", "rejected", "owner (console)")
}

// TestConsole_ApprovalsUnavailable: without a queue the page says so and a decision is refused.
func TestConsole_ApprovalsUnavailable(t *testing.T) {
	f := MustOpen(t)
	b := f.signedIn(t)
	wantContains(t, "approvals page", b.page(t, "/console/approvals"), "not available")
	wantContains(t, "a decision", b.mustPost(t, "/console/approvals/decide", url.Values{"id": {"x"}, "decision": {"approve"}}), "not available")
}
