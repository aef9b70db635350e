package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/audit"
)

// stdioConn serves one stdio connection of a in-process (mcp's ServeStdio, as ownsona stdio
// and the admin socket do) and returns a writer of request lines and the answers' lines.
func stdioConn(t *testing.T, a *App) (send func(string), answers <-chan string) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		a.mcp.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { inW.Close(); cancel(); <-served })
	send = func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Errorf("write %s: %v", line, err)
		}
	}
	send(stdioInit)
	<-lines
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, lines
}

// lastStdioAudit is the newest audit entry of a tools/call of tool over stdio.
func lastStdioAudit(tb testing.TB, a *App, tool string) audit.Entry {
	tb.Helper()
	e := lastAudit(tb, a, tool)
	if e.Transport != audit.TransportStdio {
		tb.Fatalf("the newest entry of %s came over %s, want stdio", tool, e.Transport)
	}
	return e
}

// TestAudit_NotRunAsAsked_Stdio (SECURITY.md AG-03; issue 30 item 5): over stdio too, the audit log says a call
// was rejected, timed out, cancelled (notifications/cancelled) or asked the client
// (input_required, a 2026-07-28 request); abandoned does not apply, as a stdio connection's
// calls are answered after its input ends.
func TestAudit_NotRunAsAsked_Stdio(t *testing.T) {
	forget := func(id int, mid uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"forget","arguments":{"id":%d,"hard_delete":true}}}`, id, mid)
	}
	check := func(t *testing.T, a *App, mid uint64, want audit.Outcome) {
		t.Helper()
		if e := lastStdioAudit(t, a, "forget"); e.Outcome != want {
			t.Errorf("audit of the forget over stdio: %q, want %q", e.Outcome, want)
		}
		mustOK(t, a, "get_memory", map[string]any{"id": mid}) // nothing changed
	}

	t.Run("rejected", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		send, answers := stdioConn(t, a)
		send(forget(2, mid))
		p := waitPending(t, a, 1)[0]
		if err := a.Approvals().Decide(p.ID, false, "owner (console)"); err != nil {
			t.Fatal(err)
		}
		<-answers
		check(t, a, mid, audit.OutcomeRejected)
	})

	t.Run("timed out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			defer a.Close()
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			send, answers := stdioConn(t, a)
			send(forget(2, mid))
			<-answers
			check(t, a, mid, audit.OutcomeTimedOut)
		})
	})

	t.Run("cancelled", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		send, _ := stdioConn(t, a)
		send(forget(2, mid))
		waitPending(t, a, 1)
		send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
		waitPending(t, a, 0) // withdrawn: its caller went
		deadline := time.Now().Add(10 * time.Second)
		for {
			entries, _, err := a.audit.Query(audit.Filter{Method: "tools/call", Tool: "forget"})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no audit entry of the cancelled forget: %+v", entries)
			}
			time.Sleep(5 * time.Millisecond)
		}
		check(t, a, mid, audit.OutcomeCancelled)
	})

	t.Run("2026-07-28 input_required", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		send, answers := stdioConn(t, a)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forget","arguments":{"id":%d,"hard_delete":true},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},`+
			`"io.modelcontextprotocol/clientInfo":{"name":"raw-modern","version":"1"}}}}`, mid))
		<-answers
		check(t, a, mid, audit.OutcomeInputRequired)
	})
}
