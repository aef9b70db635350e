package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// MustNew returns a Server over a fresh store, closed at cleanup.
func MustNew(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	db := kvtest.Open(tb, memory.Migrations...)
	mem, err := memory.Open(db, memory.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	cfg.Memories = mem
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestNames: Names (then the compatibility modes' tools) and promptNames are the tools and
// prompts the server has, in list order.
func TestNames(t *testing.T) {
	s := MustNew(t, Config{})
	var tools, prompts []string
	for _, tl := range s.RPC.Tools {
		tools = append(tools, tl.Name)
	}
	for _, p := range s.RPC.Prompts {
		prompts = append(prompts, p.Name)
	}
	if !slices.Equal(tools, slices.Concat(Names(), compatCatalogue)) || !slices.Equal(prompts, promptNames) {
		t.Errorf("tools %v prompts %v; Names() %v promptNames %v", tools, prompts, Names(), promptNames)
	}
}

// TestServer_SetAllowlist: an unknown name changes nothing; a known list is in force at once.
func TestServer_SetAllowlist(t *testing.T) {
	s := MustNew(t, Config{Allowlist: []string{"recall"}})
	if err := s.SetAllowlist([]string{"recall", "frobnicate"}); err == nil || !strings.Contains(err.Error(), `"frobnicate"`) {
		t.Errorf("SetAllowlist with an unknown tool: %v", err)
	}
	if got := s.Allowlist(); !slices.Equal(got, []string{"recall"}) {
		t.Errorf("the refused change changed the allowlist to %v", got)
	}
	if err := s.SetAllowlist([]string{"remember"}); err != nil {
		t.Fatal(err)
	}
	if s.permit(context.Background(), "recall") == nil || s.permit(context.Background(), "remember") != nil {
		t.Error("permit does not follow the new allowlist")
	}
}

// TestApprovalKey: the key of a call does not depend on how its arguments are spelled, and
// tells principals, tools and arguments apart, 64-bit ids included.
func TestApprovalKey(t *testing.T) {
	k := approvalKey("pat:a", "forget", json.RawMessage(`{"id":9223372036854775807,"hard_delete":true}`))
	for _, same := range []string{`{"hard_delete":true,"id":9223372036854775807}`, ` { "id" : 9223372036854775807 , "hard_delete" : true } `} {
		if got := approvalKey("pat:a", "forget", json.RawMessage(same)); got != k {
			t.Errorf("%s has another key", same)
		}
	}
	for _, other := range []struct{ principal, tool, args string }{
		{"pat:b", "forget", `{"id":9223372036854775807,"hard_delete":true}`},
		{"pat:a", "forget_batch", `{"id":9223372036854775807,"hard_delete":true}`},
		{"pat:a", "forget", `{"id":9223372036854775806,"hard_delete":true}`},
	} {
		if approvalKey(other.principal, other.tool, json.RawMessage(other.args)) == k {
			t.Errorf("%+v shares the key", other)
		}
	}
}

// TestServer_needsApproval: the policies' rules, on the tools' annotations.
func TestServer_needsApproval(t *testing.T) {
	s := MustNew(t, Config{})
	for _, tc := range []struct {
		policy approval.Policy
		tool   string
		args   string
		want   bool
	}{
		{approval.Off, "forget", `{"id":1,"hard_delete":true}`, false},
		{approval.HardDelete, "forget", `{"id":1,"hard_delete":true}`, true},
		{approval.HardDelete, "forget", `{"id":1,"hard_delete":true,"dry_run":true}`, false},
		{approval.HardDelete, "forget", `{"id":1}`, false},
		{approval.HardDelete, "forget_batch", `{"ids":[1]}`, false},
		{approval.Destructive, "forget", `{"id":1}`, true},
		{approval.Destructive, "forget_batch", `{"ids":[1]}`, true},
		{approval.Destructive, "update_memory", `{"id":1,"text":"x"}`, false},
		{approval.Writes, "remember", `{"text":"x"}`, true},
		{approval.Writes, "confirm", `{"id":1}`, true},
		{approval.Writes, "update_memory", `{"id":1,"text":"x","dry_run":true}`, false},
		{approval.Writes, "recall", `{"query":"x"}`, false},
		{approval.Writes, "export_memories", `{}`, false},
	} {
		s.SetApproval(tc.policy, time.Minute)
		if got := s.needsApproval(s.byName[tc.tool], json.RawMessage(tc.args), nil); got != tc.want {
			t.Errorf("%s: %s %s needs approval %v, want %v", tc.policy, tc.tool, tc.args, got, tc.want)
		}
	}
}

// TestServer_approve_secret: under the writes policy, text shaped like a secret is refused
// before any question is asked, so that the console and the client never show it.
func TestServer_approve_secret(t *testing.T) {
	s := MustNew(t, Config{Approval: approval.Writes})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a question would wait
	defer cancel()
	out := s.RPC.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"my key is AKIAIOSFODNN7EXAMPLE"}}}`))
	if !strings.Contains(string(out), "SECRET_REJECTED") || len(s.Approvals().Pending()) != 0 {
		t.Errorf("remember of a secret under writes: %s; pending %v", out, s.Approvals().Pending())
	}
}

// TestServer_needsApproval_hides (SECURITY.md AG-01): under destructive, a write that takes an
// existing memory out of recall at once (supersedes) or before an approval could come (an
// expiry within the approval timeout) waits as forget does; a memory's own expiry, a later one,
// a cleared one and a dry run do not. Through the real mcp server, without a console
// (AskOnly), so that a call that waits is refused at once.
func TestServer_needsApproval_hides(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second) // the gate's clock stands still; the store's runs
	s := MustNew(t, Config{Approval: approval.Destructive, ApprovalTimeout: 2 * time.Minute, AskOnly: true, Now: func() time.Time { return now }})
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	for _, text := range []string{"Lives in Los Angeles", "Has a cat"} { // memories 1 and 2
		if out := s.RPC.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"`+text+`"}}}`)); !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("remember: %s", out)
		}
	}
	for _, tc := range []struct {
		name, tool, args string
		asks             bool
	}{
		{"remember supersedes", "remember", `{"text":"Lives in Boston","supersedes":[1]}`, true},
		{"remember_batch supersedes", "remember_batch", `{"items":[{"text":"a"},{"text":"b","supersedes":[1]}]}`, true},
		{"update supersedes", "update_memory", `{"id":2,"supersedes":[1]}`, true},
		{"update_batch supersedes", "update_memory_batch", `{"items":[{"id":2,"importance":0.1},{"id":2,"supersedes":[1]}]}`, true},
		{"update expiry in 30s", "update_memory", `{"id":1,"expires_at":"` + at(30*time.Second) + `"}`, true},
		{"update expiry at the timeout", "update_memory", `{"id":1,"expires_at":"` + at(2*time.Minute) + `"}`, true},
		{"update_batch expiry in 30s", "update_memory_batch", `{"items":[{"id":1,"expires_at":"` + at(30*time.Second) + `"}]}`, true},
		{"update expiry past the timeout", "update_memory", `{"id":1,"expires_at":"` + at(2*time.Minute+time.Second) + `"}`, false},
		{"update expiry cleared", "update_memory", `{"id":1,"expires_at":null}`, false},
		{"update expiry past", "update_memory", `{"id":1,"expires_at":"` + at(-time.Second) + `"}`, false},
		{"remember with its own expiry", "remember", `{"text":"At the dentist","expires_at":"` + at(30*time.Second) + `"}`, false},
		{"update supersedes, dry run", "update_memory", `{"id":2,"supersedes":[1],"dry_run":true}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.RPC.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":`+tc.args+`}}`))
			if asked := strings.Contains(string(out), "APPROVAL_REJECTED"); asked != tc.asks {
				t.Errorf("%s %s: %s\nwaited for approval %v, want %v", tc.tool, tc.args, out, asked, tc.asks)
			}
		})
	}
}

// TestServer_SetApprovers (SECURITY.md AG-02): without a console (AskOnly), a client that can
// be asked gets the question under approval.ByClient, and under ByOwner nobody can approve, so
// the call is refused at once, saying why.
func TestServer_SetApprovers(t *testing.T) {
	s := MustNew(t, Config{Approval: approval.Writes, AskOnly: true})
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Plays the cello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-modern","version":"1"}}}}`)
	if s.Approvers() != approval.ByClient {
		t.Errorf("Approvers() = %q by default, want client", s.Approvers())
	}
	if out := s.RPC.Handle(context.Background(), call); !strings.Contains(string(out), `"resultType":"input_required"`) {
		t.Errorf("under client: %s, want the question", out)
	}
	s.SetApprovers(approval.ByOwner)
	out := s.RPC.Handle(context.Background(), call)
	if !strings.Contains(string(out), "APPROVAL_REJECTED") || !strings.Contains(string(out), "only the owner approves") {
		t.Errorf("under owner without a console: %s, want APPROVAL_REJECTED saying only the owner approves", out)
	}
	if s.Approvers() != approval.ByOwner {
		t.Errorf("Approvers() = %q, want owner", s.Approvers())
	}
}
