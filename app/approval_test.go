package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/settings"
	ownmcp "github.com/ownsona/ownsona/mcp"
)

// These tests cover the approval gate (issue 14, seed 004): a call the policy names waits for
// the owner, who answers in the console (approval.Queue.Decide) or in the client
// (elicitation in the legacy era, an input_required round trip in 2026-07-28); denied or
// unanswered, it ends with APPROVAL_REJECTED or APPROVAL_TIMED_OUT and changes nothing.

// gateConfig is a testConfig with the approval gate at its default policy, hard-delete, which
// the settings may change (it is not fixed).
func gateConfig(tb testing.TB, clock *fakeClock) Config {
	cfg := testConfig(tb, clock)
	cfg.Approval = string(approval.HardDelete)
	return cfg
}

const colby = "My son Colby lives in Los Angeles"

// lastMessage is the JSON-RPC response of a POST's answer: the body, or the last event of an
// event stream.
func lastMessage(body []byte) []byte {
	if !bytes.HasPrefix(body, []byte("event:")) && !bytes.HasPrefix(body, []byte(":")) {
		return body
	}
	var last []byte
	for line := range bytes.Lines(body) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			last = bytes.TrimSpace(data)
		}
	}
	return last
}

// toolPayload decodes a tools/call response (JSON or an event stream) into its payload.
func toolPayload(tb testing.TB, rec *httptest.ResponseRecorder) (payload map[string]any, isError bool) {
	tb.Helper()
	res, rerr, _ := rpcResponse(tb, lastMessage(rec.Body.Bytes()))
	if rerr != nil {
		tb.Fatalf("tools/call answered an error: %+v", rerr)
	}
	var r toolResult
	if err := json.Unmarshal(res, &r); err != nil {
		tb.Fatalf("not a tool result: %s", res)
	}
	return r.StructuredContent, r.IsError
}

// errorCode is the code of an error payload, "" for a success.
func errorCode(p map[string]any) string {
	if e, ok := p["error"].(map[string]any); ok {
		code, _ := e["code"].(string)
		return code
	}
	return ""
}

// callAsync sends a legacy (2025-11-25) tools/call in the background, as a plain JSON-RPC caller
// that cannot be asked, and returns its answer on the channel.
func callAsync(a *App, name string, args any) <-chan *httptest.ResponseRecorder {
	argJSON, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, argJSON)
	tok := patCacheToken(a)
	ch := make(chan *httptest.ResponseRecorder, 1)
	go func() { ch <- mcpRequest(a.Handler(), "Bearer "+tok, body, "Accept", "application/json") }()
	return ch
}

// patCacheToken is patFor's token, which must exist already (patFor fails tests, so it is
// called on the test's goroutine first).
func patCacheToken(a *App) string {
	tok, _ := patCache.Load(a)
	return tok.(string)
}

// waitPending waits for n requests to be pending and returns them.
func waitPending(tb testing.TB, a *App, n int) []approval.Request {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p := a.Approvals().Pending()
		if len(p) == n {
			return p
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pending approvals: %+v, want %d", p, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestApproval_Console: a hard delete waits in the Approvals queue with a summary of what it
// would do, changes nothing meanwhile, and runs once the owner approves it in the console;
// denied, it ends with APPROVAL_REJECTED and the memory stays. The audit log records who
// decided.
func TestApproval_Console(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approve  bool
		wantCode string
	}{{"approve", true, ""}, {"deny", false, "APPROVAL_REJECTED"}} {
		t.Run(tc.name, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, newFakeClock()))
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			done := callAsync(a, "forget", map[string]any{"id": mid, "hard_delete": true})
			p := waitPending(t, a, 1)[0]
			wantSummary := fmt.Sprintf(`Forget memory %d %q permanently? A hard delete keeps no tombstone: it cannot be restored.`, mid, colby)
			if p.Tool != "forget" || p.Summary != wantSummary || p.Client != "pat:test" || p.Deadline.Sub(p.Created) != 2*time.Minute {
				t.Errorf("pending = %+v\nwant tool forget, summary %q, client pat:test, 2m", p, wantSummary)
			}
			mustOK(t, a, "get_memory", map[string]any{"id": mid}) // nothing changed before approval
			// The owner decides on the console's Approvals page, through the whole server.
			b := newConsoleBrowser(t, a.Auth().Endpoints().Issuer, handlerTransport{a.Handler()})
			b.signIn()
			if page := b.page("/console/approvals"); !strings.Contains(page, fmt.Sprintf("Forget memory %d", mid)) {
				t.Fatalf("the Approvals page does not show the waiting forget:\n%s", page)
			}
			decision := map[bool]string{true: "approve", false: "deny"}[tc.approve]
			b.submit("/console/approvals/decide", url.Values{"id": {p.ID}, "decision": {decision}})
			got, isErr := toolPayload(t, <-done)
			if errorCode(got) != tc.wantCode || isErr != (tc.wantCode != "") {
				t.Fatalf("forget = %v (isError %v), want code %q", got, isErr, tc.wantCode)
			}
			if tc.approve && got["message"] != "Hard deleted" {
				t.Errorf("approved forget = %v", got)
			}
			_, gone := callTool(t, a, "get_memory", map[string]any{"id": mid})
			if gone != tc.approve {
				t.Errorf("memory gone: %v, want %v", gone, tc.approve)
			}
			if !tc.approve && !strings.Contains(got["error"].(map[string]any)["message"].(string), "owner (console)") {
				t.Errorf("the refusal does not say who refused: %v", got)
			}
			want := approval.Approved
			if !tc.approve {
				want = approval.Rejected
			}
			entries, _, err := a.audit.Query(audit.Filter{Method: "approval"})
			if err != nil || len(entries) != 1 || entries[0].Client != "owner (console)" || entries[0].Tool != "forget" ||
				entries[0].Outcome != audit.Outcome(want) {
				t.Errorf("audit of the decision = %+v, %v; want one approval entry by owner (console), %s", entries, err, want)
			}
			if r := a.Approvals().Recent(); len(r) != 1 || r[0].Outcome != want || r[0].By != "owner (console)" {
				t.Errorf("Recent = %+v", r)
			}
		})
	}
}

// TestApproval_TimedOut: unanswered, a hard delete ends with APPROVAL_TIMED_OUT when its 2
// minutes are up, and the memory stays.
func TestApproval_TimedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, nil))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		start := time.Now()
		done := callAsync(a, "forget", map[string]any{"id": mid, "hard_delete": true})
		synctest.Wait()
		if n := len(a.Approvals().Pending()); n != 1 {
			t.Fatalf("%d pending approvals, want 1", n)
		}
		rec := <-done
		if waited := time.Since(start); waited != 2*time.Minute {
			t.Errorf("answered after %s, want 2m", waited)
		}
		got, isErr := toolPayload(t, rec)
		if errorCode(got) != "APPROVAL_TIMED_OUT" || !isErr || got["ok"] != false {
			t.Fatalf("forget = %v (isError %v), want APPROVAL_TIMED_OUT", got, isErr)
		}
		mustOK(t, a, "get_memory", map[string]any{"id": mid})
		if r := a.Approvals().Recent(); len(r) != 1 || r[0].Outcome != approval.TimedOut {
			t.Errorf("Recent = %+v", r)
		}
		a.Close() // inside the bubble: its goroutines end here
	})
}

// modernCall is a 2026-07-28 tools/call from a client that declares elicitation; extra is
// added to params (",\"inputResponses\":…").
func modernCall(tb testing.TB, a *App, id int, name string, args any, extra string) *httptest.ResponseRecorder {
	tb.Helper()
	argJSON, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s,`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-modern","version":"1"}}}}`, id, name, argJSON, extra)
	return mcpRequest(a.Handler(), "Bearer "+patFor(tb, a), body,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name)
}

// inputRequired reads an input_required result: the question's key and the requestState;
// ok false when the result is another.
func inputRequired(tb testing.TB, rec *httptest.ResponseRecorder) (key, state string, ok bool) {
	tb.Helper()
	res, rerr, _ := rpcResponse(tb, lastMessage(rec.Body.Bytes()))
	if rerr != nil {
		tb.Fatalf("error %+v", rerr)
	}
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	json.Unmarshal(res, &r)
	if r.ResultType != "input_required" {
		return "", "", false
	}
	for k := range r.InputRequests {
		key = k
	}
	return key, r.RequestState, len(r.InputRequests) == 1
}

func isInputRequired(tb testing.TB, rec *httptest.ResponseRecorder) bool {
	_, _, ok := inputRequired(tb, rec)
	return ok
}

// TestApproval_Policies: which calls wait under each policy, and that the policy changes at
// run time through the settings: a call that needs approval from a client that can answer
// gets an input_required result at once; any other runs.
func TestApproval_Policies(t *testing.T) {
	a := MustOpen(t, gateConfig(t, newFakeClock()))
	mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
	other := id(mustOK(t, a, "remember", map[string]any{"text": "Has a cat"}))
	third := id(mustOK(t, a, "remember", map[string]any{"text": "Has a dog"}))
	type call struct {
		name string
		args map[string]any
	}
	var (
		hard     = call{"forget", map[string]any{"id": mid, "hard_delete": true}}
		hardDry  = call{"forget", map[string]any{"id": mid, "hard_delete": true, "dry_run": true}}
		soft     = call{"forget", map[string]any{"id": mid, "dry_run": false}}
		batch    = call{"forget_batch", map[string]any{"ids": []uint64{mid}}}
		update   = call{"update_memory", map[string]any{"id": mid, "importance": 0.7}}
		remember = call{"remember", map[string]any{"text": "Plays the cello"}}
		recall   = call{"recall", map[string]any{"query": "Colby"}}
		// SECURITY.md AG-01: what takes a memory out of recall at once, or before an approval
		// could come (an expiry within the 2m timeout), asks under destructive as forget does.
		now          = newFakeClock().Now()
		soon         = now.Add(30 * time.Second).Format(time.RFC3339)
		later        = now.Add(3 * time.Minute).Format(time.RFC3339)
		past         = now.Add(-time.Minute).Format(time.RFC3339)
		supersede    = call{"remember", map[string]any{"text": "My son Colby lives in Boston", "supersedes": []uint64{mid}}}
		supersedeB   = call{"remember_batch", map[string]any{"items": []any{map[string]any{"text": "Plays the cello"}, map[string]any{"text": "Colby moved to Boston", "supersedes": []uint64{mid}}}}}
		updateSup    = call{"update_memory", map[string]any{"id": third, "supersedes": []uint64{mid}}}
		updateSupB   = call{"update_memory_batch", map[string]any{"items": []any{map[string]any{"id": third, "importance": 0.2}, map[string]any{"id": third, "supersedes": []uint64{mid}}}}}
		expireSoon   = call{"update_memory", map[string]any{"id": mid, "expires_at": soon}}
		expireSoonB  = call{"update_memory_batch", map[string]any{"items": []any{map[string]any{"id": mid, "expires_at": soon}}}}
		expireLater  = call{"update_memory", map[string]any{"id": mid, "expires_at": later}}
		expireClear  = call{"update_memory", map[string]any{"id": mid, "expires_at": nil}}
		expirePast   = call{"update_memory", map[string]any{"id": mid, "expires_at": past}} // refused by the store, unasked
		ownExpiry    = call{"remember", map[string]any{"text": "Is at the dentist", "expires_at": soon}}
		supersedeDry = call{"update_memory", map[string]any{"id": third, "supersedes": []uint64{mid}, "dry_run": true}}
	)
	for _, tc := range []struct {
		policy approval.Policy
		wait   []call
		run    []call
	}{
		{approval.Off, nil, []call{{"forget", map[string]any{"id": other, "hard_delete": true}}, hardDry, recall}},
		{approval.HardDelete, []call{hard}, []call{hardDry, recall, update, remember, expireSoon}},
		{approval.Destructive, []call{hard, soft, batch, supersede, supersedeB, updateSup, updateSupB, expireSoon, expireSoonB},
			[]call{hardDry, update, remember, recall, expireLater, expireClear, expirePast, ownExpiry, supersedeDry}},
		{approval.Writes, []call{hard, soft, batch, update, remember}, []call{hardDry, recall}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := a.Settings().Get()
			s.Approval = tc.policy
			if err := a.Settings().Set(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.wait {
				if rec := modernCall(t, a, i, c.name, c.args, ""); !isInputRequired(t, rec) {
					t.Errorf("%s %v ran without approval: %s", c.name, c.args, rec.Body)
				}
			}
			for i, c := range tc.run {
				if _, _, ok := inputRequired(t, modernCall(t, a, i, c.name, c.args, "")); ok {
					t.Errorf("%s %v waits for approval", c.name, c.args)
				}
			}
		})
	}
	mustOK(t, a, "get_memory", map[string]any{"id": mid})
}

// TestApproval_DestructiveSupersedes (SECURITY.md AG-01): under destructive, a remember that
// supersedes a memory waits like forget, saying which memory it would hide; the memory stays
// in recall meanwhile, and once the owner approves, the new one is stored and the old one is
// superseded.
func TestApproval_DestructiveSupersedes(t *testing.T) {
	a := MustOpen(t, gateConfig(t, newFakeClock()))
	s := a.Settings().Get()
	s.Approval = approval.Destructive
	if err := a.Settings().Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
	done := callAsync(a, "remember", map[string]any{"text": "My son Colby lives in Boston", "supersedes": []uint64{mid}})
	p := waitPending(t, a, 1)[0]
	want := fmt.Sprintf(`Remember "My son Colby lives in Boston"? It supersedes memory %d %q: out of recall and lists at once (get_memory still shows superseded memories).`, mid, colby)
	if p.Tool != "remember" || p.Summary != want {
		t.Errorf("pending %+v\nwant summary %q", p, want)
	}
	listed := func() int {
		return len(mustOK(t, a, "list_memories", map[string]any{})["memories"].([]any))
	}
	if n := listed(); n != 1 {
		t.Errorf("while waiting, list_memories shows %d memories, want the 1 not yet superseded", n)
	}
	if err := a.Approvals().Decide(p.ID, true, "owner (console)"); err != nil {
		t.Fatal(err)
	}
	got, isErr := toolPayload(t, <-done)
	if isErr || got["ok"] != true {
		t.Fatalf("approved remember = %v", got)
	}
	m := mustOK(t, a, "get_memory", map[string]any{"id": mid})["memory"].(map[string]any)
	if m["superseded_by"] == nil || listed() != 1 {
		t.Errorf("after approval: memory %d = %v, list_memories shows %d; want it superseded by the new one", mid, m, listed())
	}
}

var (
	approvalIDs = regexp.MustCompile(`approval-[A-Za-z0-9_-]{16}`)
	stateValue  = regexp.MustCompile(`"requestState":"[^"]+"`)
)

// normalize replaces the random parts of an input_required result.
func normalize(b []byte) string {
	s := approvalIDs.ReplaceAllString(string(b), "approval-ID")
	return stateValue.ReplaceAllString(s, `"requestState":"STATE"`)
}

// TestApproval_InputRequired_HTTP drives the 2026-07-28 round trip by hand: the first round
// is an input_required result asking the form (the exact body below), and the request waits
// in the console meanwhile; the retry carries the answer. The console's approval between the
// rounds wins over the client's later no; an answer counts once; a retry after the deadline
// is APPROVAL_TIMED_OUT.
func TestApproval_InputRequired_HTTP(t *testing.T) {
	t.Run("the question", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		rec := modernCall(t, a, 1, "forget", map[string]any{"id": mid, "hard_delete": true}, "")
		want := `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ownsona","title":"ownsona personal memory","version":"dev"}},` +
			`"resultType":"input_required","inputRequests":{"approval-ID":{"method":"elicitation/create","params":{` +
			`"message":"Forget memory 1 \"My son Colby lives in Los Angeles\" permanently? A hard delete keeps no tombstone: it cannot be restored.` +
			`\n\nownsona asks before such calls (approval policy hard-delete). The owner may answer in ownsona's console instead; until someone approves, nothing changes.",` +
			`"requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve","description":"Yes lets the assistant do this; no refuses it","default":false}},"required":["approve"]}}}},` +
			`"requestState":"STATE"}}`
		if got := normalize(rec.Body.Bytes()); rec.Code != 200 || got != want {
			t.Errorf("status %d\n got: %s\nwant: %s", rec.Code, got, want)
		}
		if p := a.Approvals().Pending(); len(p) != 1 || !strings.Contains(rec.Body.String(), "approval-"+p[0].ID) {
			t.Errorf("pending %+v: want the request the question names", p)
		}
	})

	t.Run("console approval between the rounds", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		args := map[string]any{"id": mid, "hard_delete": true}
		key, state, ok := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
		if !ok {
			t.Fatal("no input_required")
		}
		if err := a.Approvals().Decide(strings.TrimPrefix(key, "approval-"), true, "owner (console)"); err != nil {
			t.Fatal(err)
		}
		decline := fmt.Sprintf(`,"inputResponses":{%q:{"action":"decline"}},"requestState":%q`, key, state)
		rec := modernCall(t, a, 2, "forget", args, decline)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ownsona","title":"ownsona personal memory","version":"dev"}},`+
			`"content":[{"type":"text","text":"{\"ok\":true,\"memory_id\":%d,\"dry_run\":false,\"already_deleted\":false,\"message\":\"Hard deleted\"}"}],`+
			`"structuredContent":{"ok":true,"memory_id":%d,"dry_run":false,"already_deleted":false,"message":"Hard deleted"},"isError":false}}`, mid, mid)
		if got := rec.Body.String(); got != want {
			t.Errorf("the retry\n got: %s\nwant: %s", got, want)
		}
	})

	t.Run("the client's answer counts once", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		s := a.Settings().Get()
		s.Approval = approval.Writes
		if err := a.Settings().Set(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"id": mid}
		key, state, ok := inputRequired(t, modernCall(t, a, 1, "confirm", args, ""))
		if !ok {
			t.Fatal("no input_required")
		}
		accept := fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"approve":true}}},"requestState":%q`, key, state)
		got, isErr := toolPayload(t, modernCall(t, a, 2, "confirm", args, accept))
		if isErr || got["ok"] != true {
			t.Fatalf("accepted confirm = %v", got)
		}
		if r := a.Approvals().Recent(); len(r) != 1 || r[0].Outcome != approval.Approved || r[0].By != "user in raw-modern 1" {
			t.Errorf("Recent = %+v, want approved by the user in raw-modern 1", r)
		}
		if key2, _, ok := inputRequired(t, modernCall(t, a, 3, "confirm", args, accept)); !ok || key2 == key {
			t.Errorf("the same answer sent again: asked again %v (key %s, was %s); want a new question", ok, key2, key)
		}
	})

	t.Run("declined", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		args := map[string]any{"id": mid, "hard_delete": true}
		key, state, _ := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
		for _, answer := range []string{`{"action":"accept","content":{"approve":false}}`, `{"action":"cancel"}`} {
			got, isErr := toolPayload(t, modernCall(t, a, 2, "forget", args, fmt.Sprintf(`,"inputResponses":{%q:%s},"requestState":%q`, key, answer, state)))
			if errorCode(got) != "APPROVAL_REJECTED" || !isErr {
				t.Errorf("answer %s: %v, want APPROVAL_REJECTED", answer, got)
			}
			key, state, _ = inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
		}
		mustOK(t, a, "get_memory", map[string]any{"id": mid})
	})

	t.Run("after the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			args := map[string]any{"id": mid, "hard_delete": true}
			key, state, _ := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
			time.Sleep(2*time.Minute + time.Second)
			accept := fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"approve":true}}},"requestState":%q`, key, state)
			got, isErr := toolPayload(t, modernCall(t, a, 2, "forget", args, accept))
			if errorCode(got) != "APPROVAL_TIMED_OUT" || !isErr {
				t.Errorf("the answer after the deadline: %v, want APPROVAL_TIMED_OUT", got)
			}
			mustOK(t, a, "get_memory", map[string]any{"id": mid})
			if key2, _, ok := inputRequired(t, modernCall(t, a, 3, "forget", args, "")); !ok || key2 == key {
				t.Errorf("a new call after the timeout: asked %v with key %s (was %s); want a new question", ok, key2, key)
			}
			a.Close()
		})
	})
}

// elicitRecorder is a Go SDK ElicitationHandler that records the questions and answers as told.
type elicitRecorder struct {
	mu       sync.Mutex
	messages []string
	answer   func() *mcp.ElicitResult
}

func (e *elicitRecorder) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	e.mu.Unlock()
	return e.answer(), nil
}

func (e *elicitRecorder) asked() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

// TestApproval_Elicitation: a Go SDK client with an ElicitationHandler is asked in the client
// — elicitation/create on the call's stream in the legacy era, the input_required round trip
// that the SDK answers by itself in 2026-07-28 — and its user's answer decides: accept with
// approve true runs the hard delete, decline refuses it.
func TestApproval_Elicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cfg := gateConfig(t, nil)
			cfg.PublicURL = ""
			a := MustOpen(t, cfg)
			if err := a.Listen(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for _, tc := range []struct {
				name     string
				answer   *mcp.ElicitResult
				wantCode string
			}{
				{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, ""},
				{"accept without approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, "APPROVAL_REJECTED"},
				{"decline", &mcp.ElicitResult{Action: "decline"}, "APPROVAL_REJECTED"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					rec := &elicitRecorder{answer: func() *mcp.ElicitResult { return tc.answer }}
					s := sdkClient(t, ctx, "http://"+a.Addr()+"/mcp", testPAT(t, a), era.pin, &mcp.ClientOptions{ElicitationHandler: rec.handle})
					if v := s.InitializeResult().ProtocolVersion; v != era.want {
						t.Fatalf("the session speaks %s, want %s", v, era.want)
					}
					mid := sdkPayload(t, s, "remember", map[string]any{"text": colby})["memory_id"].(float64)
					got := sdkPayload(t, s, "forget", map[string]any{"id": mid, "hard_delete": true})
					if errorCode(got) != tc.wantCode {
						t.Errorf("forget = %v, want code %q", got, tc.wantCode)
					}
					asked := rec.asked()
					if len(asked) != 1 || !strings.HasPrefix(asked[0], fmt.Sprintf("Forget memory %d %q permanently?", int(mid), colby)) {
						t.Errorf("the user was asked %q", asked)
					}
					_, isErr := callTool(t, a, "get_memory", map[string]any{"id": mid})
					if isErr != (tc.wantCode == "") {
						t.Errorf("memory gone: %v, want %v", isErr, tc.wantCode == "")
					}
					if p := a.Approvals().Pending(); len(p) != 0 {
						t.Errorf("still pending: %+v", p)
					}
				})
			}
		})
	}
}

// TestApproval_ElicitationRace (legacy): the console's approval while the client's user still
// looks at the question wins; the user's later no changes nothing.
func TestApproval_ElicitationRace(t *testing.T) {
	cfg := gateConfig(t, nil)
	cfg.PublicURL = ""
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	handler := func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-release
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	s := sdkClient(t, ctx, "http://"+a.Addr()+"/mcp", testPAT(t, a), "2025-11-25", &mcp.ClientOptions{ElicitationHandler: handler})
	mid := sdkPayload(t, s, "remember", map[string]any{"text": colby})["memory_id"].(float64)
	go func() { // the console, once the question is out
		for ctx.Err() == nil {
			if p := a.Approvals().Pending(); len(p) == 1 {
				a.Approvals().Decide(p[0].ID, true, "owner (console)")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if got := sdkPayload(t, s, "forget", map[string]any{"id": mid, "hard_delete": true}); got["message"] != "Hard deleted" {
		t.Errorf("forget = %v, want the console's approval to win", got)
	}
}

// TestApproval_StdioWithoutConsole: ownsona stdio without a server has no console, so a call
// whose client cannot be asked is refused at once instead of waiting for nobody.
func TestApproval_StdioWithoutConsole(t *testing.T) {
	db := t.TempDir() + "/ownsona.db"
	// A refusal that waited would wait 15 minutes, past stdioSession's 2, and end as
	// APPROVAL_TIMED_OUT: no wall-clock bound needed.
	env := map[string]string{"OWNSONA_APPROVAL": "hard-delete", "OWNSONA_APPROVAL_TIMEOUT": "15m"}
	stdioSession(t, db, env, stdioInit, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"text":"`+colby+`"}}}`)
	resp := stdioSession(t, db, env, stdioInit,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forget","arguments":{"id":1,"hard_delete":true}}}`)
	resp["4"] = stdioSession(t, db, env, stdioInit, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_memory","arguments":{"id":1}}}`)["4"]
	var forget, get struct {
		Result toolResult `json:"result"`
	}
	json.Unmarshal(resp["3"], &forget)
	json.Unmarshal(resp["4"], &get)
	if errorCode(forget.Result.StructuredContent) != "APPROVAL_REJECTED" || !forget.Result.IsError {
		t.Errorf("forget over stdio = %s, want APPROVAL_REJECTED", resp["3"])
	}
	if get.Result.IsError {
		t.Errorf("the refused forget changed the memory: %s", resp["4"])
	}
}

// TestApproval_Settings: the policy and the timeout come from the flags and the environment
// (fixed) or from the settings (changed at run time).
func TestApproval_Settings(t *testing.T) {
	cfg, _, err := loadConfig("serve", []string{"--approval", "writes", "--db", t.TempDir() + "/ownsona.db"},
		func(k string) string { return map[string]string{"OWNSONA_APPROVAL_TIMEOUT": "30s"}[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Approval != "writes" || cfg.ApprovalTimeout != 30*time.Second {
		t.Fatalf("config: %q %s", cfg.Approval, cfg.ApprovalTimeout)
	}
	cfg.LoginPassword, cfg.LogLevel = testPassword, "error"
	a := MustOpen(t, cfg)
	if f := a.Settings().Fixed(); f[settings.Approval] != "flag --approval" || f[settings.ApprovalTimeout] != "OWNSONA_APPROVAL_TIMEOUT" {
		t.Errorf("Fixed = %v", f)
	}
	s := a.Settings().Get()
	s.Approval = approval.Off
	if err := a.Settings().Set(context.Background(), s); err == nil || !strings.Contains(err.Error(), "flag --approval") {
		t.Errorf("Set of the fixed policy: %v, want a refusal naming flag --approval", err)
	}
	for _, bad := range [][]string{{"--approval", "sometimes"}, {"--approval-timeout", "1s"}, {"--approval-timeout", "1h"}} {
		if _, _, err := loadConfig("serve", bad, func(string) string { return "" }, nil); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("%v: %v, want a usage error naming the setting", bad, err)
		}
	}
}

// TestApproval_OnePerCall (SECURITY.md AG-02): three identical calls made at the same time each
// wait for an approval of their own; approving one runs that one only, and the others keep
// waiting until they are decided themselves.
func TestApproval_OnePerCall(t *testing.T) {
	a := MustOpen(t, gateConfig(t, newFakeClock()))
	s := a.Settings().Get()
	s.Approval = approval.Writes
	if err := a.Settings().Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	tok := patFor(t, a)
	done := make(chan *httptest.ResponseRecorder, 3)
	for i := range 3 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Plays the cello","dedup_policy":"insert"}}}`, 10+i)
		go func() { done <- mcpRequest(a.Handler(), "Bearer "+tok, body, "Accept", "application/json") }()
	}
	p := waitPending(t, a, 3)
	if p[0].ID == p[1].ID || p[1].ID == p[2].ID || p[0].ID == p[2].ID {
		t.Fatalf("the calls share requests: %+v", p)
	}
	if err := a.Approvals().Decide(p[1].ID, true, "owner (console)"); err != nil {
		t.Fatal(err)
	}
	if got, isErr := toolPayload(t, <-done); isErr || got["ok"] != true {
		t.Fatalf("the approved call = %v", got)
	}
	left := waitPending(t, a, 2)
	if n := mustOK(t, a, "count_memories", map[string]any{})["count"]; n != float64(1) {
		t.Errorf("%v memories stored after one approval, want 1", n)
	}
	for _, r := range left {
		if err := a.Approvals().Decide(r.ID, false, "owner (console)"); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if got, _ := toolPayload(t, <-done); errorCode(got) != "APPROVAL_REJECTED" {
			t.Errorf("a call denied in the console = %v, want APPROVAL_REJECTED", got)
		}
	}
	if n := mustOK(t, a, "count_memories", map[string]any{})["count"]; n != float64(1) {
		t.Errorf("%v memories stored, want 1", n)
	}
}

// TestApproval_OwnerOnly (SECURITY.md AG-02): under approval.ByOwner the client is not asked
// and its answer does not count; only the console's decision does.
func TestApproval_OwnerOnly(t *testing.T) {
	t.Run("legacy: the client is not asked", func(t *testing.T) {
		cfg := gateConfig(t, nil)
		cfg.PublicURL = ""
		a := MustOpen(t, cfg)
		if err := a.Listen(); err != nil {
			t.Fatal(err)
		}
		a.tools.SetApprovers(approval.ByOwner)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rec := &elicitRecorder{answer: func() *mcp.ElicitResult {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}}
		s := sdkClient(t, ctx, "http://"+a.Addr()+"/mcp", testPAT(t, a), "2025-11-25", &mcp.ClientOptions{ElicitationHandler: rec.handle})
		mid := sdkPayload(t, s, "remember", map[string]any{"text": colby})["memory_id"].(float64)
		done := make(chan map[string]any, 1)
		go func() { done <- sdkPayload(t, s, "forget", map[string]any{"id": mid, "hard_delete": true}) }()
		p := waitPending(t, a, 1)[0]
		mustOK(t, a, "get_memory", map[string]any{"id": mid})
		if err := a.Approvals().Decide(p.ID, true, "owner (console)"); err != nil {
			t.Fatal(err)
		}
		if got := <-done; got["message"] != "Hard deleted" {
			t.Errorf("forget approved in the console = %v", got)
		}
		if asked := rec.asked(); len(asked) != 0 {
			t.Errorf("the client was asked %q; under owner only it must not be", asked)
		}
	})

	t.Run("2026-07-28: the client's answer does not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			defer a.Close() // inside the bubble: its goroutines end here
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			args := map[string]any{"id": mid, "hard_delete": true}
			a.tools.SetApprovers(approval.ByOwner)
			done := make(chan *httptest.ResponseRecorder, 1)
			go func() { done <- modernCall(t, a, 1, "forget", args, "") }()
			synctest.Wait()
			p := a.Approvals().Pending() // no input_required: the call waits for the console
			if len(p) != 1 {
				t.Fatalf("pending %+v, want the forget", p)
			}
			// An answer the client sends anyway, to the question it was never asked: the retry
			// finds the request, and waits with it.
			accept := fmt.Sprintf(`,"inputResponses":{"approval-%s":{"action":"accept","content":{"approve":true}}}`, p[0].ID)
			retry := make(chan *httptest.ResponseRecorder, 1)
			go func() { retry <- modernCall(t, a, 2, "forget", args, accept) }()
			synctest.Wait()
			if n := len(a.Approvals().Pending()); n != 1 || len(done) != 0 || len(retry) != 0 {
				t.Fatalf("after the client's answer: %d pending, answered %d and %d; want the one request still waiting", n, len(done), len(retry))
			}
			mustOK(t, a, "get_memory", map[string]any{"id": mid})
			if err := a.Approvals().Decide(p[0].ID, false, "owner (console)"); err != nil {
				t.Fatal(err)
			}
			for _, ch := range []chan *httptest.ResponseRecorder{done, retry} {
				if got, _ := toolPayload(t, <-ch); errorCode(got) != "APPROVAL_REJECTED" {
					t.Errorf("forget denied in the console = %v, want APPROVAL_REJECTED", got)
				}
			}
			mustOK(t, a, "get_memory", map[string]any{"id": mid})
			if r := a.Approvals().Recent(); len(r) != 1 || r[0].By != "owner (console)" {
				t.Errorf("Recent = %+v, want the console's decision only", r)
			}
		})
	})

	t.Run("2026-07-28: an answer to a question asked before does not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			defer a.Close()
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			args := map[string]any{"id": mid, "hard_delete": true}
			key, state, ok := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
			if !ok {
				t.Fatal("no input_required")
			}
			a.tools.SetApprovers(approval.ByOwner)
			accept := fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"approve":true}}},"requestState":%q`, key, state)
			done := make(chan *httptest.ResponseRecorder, 1)
			go func() { done <- modernCall(t, a, 2, "forget", args, accept) }()
			synctest.Wait()
			p := a.Approvals().Pending()
			if len(p) != 1 || "approval-"+p[0].ID != key || len(done) != 0 {
				t.Fatalf("pending %+v (answered: %d); want the first round's request %s still waiting", p, len(done), key)
			}
			if err := a.Approvals().Decide(p[0].ID, true, "owner (console)"); err != nil {
				t.Fatal(err)
			}
			if got, _ := toolPayload(t, <-done); got["message"] != "Hard deleted" {
				t.Errorf("forget approved in the console = %v", got)
			}
			if r := a.Approvals().Recent(); len(r) != 1 || r[0].By != "owner (console)" {
				t.Errorf("Recent = %+v, want the console's decision", r)
			}
		})
	})
}

// callWithContext is mcpRequest under ctx: a client that may go (cancel) before the answer.
func callWithContext(ctx context.Context, a *App, tok, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return rec
}

// lastAudit is the newest audit entry of a tools/call of tool.
func lastAudit(tb testing.TB, a *App, tool string) audit.Entry {
	tb.Helper()
	entries, _, err := a.audit.Query(audit.Filter{Method: "tools/call", Tool: tool, Limit: 1})
	if err != nil || len(entries) != 1 {
		tb.Fatalf("audit entries of %s: %+v, %v", tool, entries, err)
	}
	return entries[0]
}

// TestAudit_NotRunAsAsked (SECURITY.md AG-03; issue 30 item 5): the audit log tells how a
// call that did not run as asked ended, whatever its answer looked like: not approved
// (rejected), unanswered in time (timed_out), cancelled by its client (notifications/
// cancelled), abandoned by its client (gone before the answer: the hard delete nobody
// approved, whose client gave up, was logged "ok 200"), or a 2026-07-28 round that asked the
// client (input_required). Over legacy Streamable HTTP and 2026-07-28, through the whole
// handler.
func TestAudit_NotRunAsAsked(t *testing.T) {
	hardDelete := func(mid uint64, id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"forget","arguments":{"id":%d,"hard_delete":true}}}`, id, mid)
	}
	check := func(t *testing.T, a *App, mid uint64, want audit.Outcome, status int) {
		t.Helper()
		if e := lastAudit(t, a, "forget"); e.Outcome != want || e.Status != status {
			t.Errorf("audit of the forget: outcome %q status %d, want %q %d", e.Outcome, e.Status, want, status)
		}
		mustOK(t, a, "get_memory", map[string]any{"id": mid}) // nothing changed
	}

	t.Run("legacy rejected", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		done := callAsync(a, "forget", map[string]any{"id": mid, "hard_delete": true})
		p := waitPending(t, a, 1)[0]
		if err := a.Approvals().Decide(p.ID, false, "owner (console)"); err != nil {
			t.Fatal(err)
		}
		<-done
		check(t, a, mid, audit.OutcomeRejected, 200)
	})

	t.Run("legacy timed out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			defer a.Close()
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			<-callAsync(a, "forget", map[string]any{"id": mid, "hard_delete": true})
			check(t, a, mid, audit.OutcomeTimedOut, 200)
		})
	})

	t.Run("legacy cancelled", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		tok := patFor(t, a)
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() { done <- callWithContext(context.Background(), a, tok, hardDelete(mid, 41)) }()
		waitPending(t, a, 1)
		rec := callWithContext(context.Background(), a, tok, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41}}`)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: %d %s", rec.Code, rec.Body)
		}
		<-done
		check(t, a, mid, audit.OutcomeCancelled, 200)
		if p := a.Approvals().Pending(); len(p) != 0 {
			t.Errorf("the cancelled call still waits: %+v", p)
		}
	})

	t.Run("legacy abandoned", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		tok := patFor(t, a)
		ctx, giveUp := context.WithCancel(context.Background())
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() { done <- callWithContext(ctx, a, tok, hardDelete(mid, 42)) }()
		waitPending(t, a, 1)
		giveUp() // the client gives up waiting
		<-done
		check(t, a, mid, audit.OutcomeAbandoned, 200)
	})

	t.Run("2026-07-28 input_required then rejected", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		args := map[string]any{"id": mid, "hard_delete": true}
		key, state, ok := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
		if !ok {
			t.Fatal("no input_required")
		}
		check(t, a, mid, audit.OutcomeInputRequired, 200)
		decline := fmt.Sprintf(`,"inputResponses":{%q:{"action":"decline"}},"requestState":%q`, key, state)
		modernCall(t, a, 2, "forget", args, decline)
		check(t, a, mid, audit.OutcomeRejected, 200)
	})

	t.Run("2026-07-28 timed out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := MustOpen(t, gateConfig(t, nil))
			defer a.Close()
			mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
			args := map[string]any{"id": mid, "hard_delete": true}
			key, state, _ := inputRequired(t, modernCall(t, a, 1, "forget", args, ""))
			time.Sleep(2*time.Minute + time.Second)
			accept := fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"approve":true}}},"requestState":%q`, key, state)
			modernCall(t, a, 2, "forget", args, accept)
			check(t, a, mid, audit.OutcomeTimedOut, 200)
		})
	})

	t.Run("2026-07-28 abandoned", func(t *testing.T) {
		a := MustOpen(t, gateConfig(t, newFakeClock()))
		a.tools.SetApprovers(approval.ByOwner) // the call waits in its POST
		mid := id(mustOK(t, a, "remember", map[string]any{"text": colby}))
		tok := patFor(t, a)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forget","arguments":{"id":%d,"hard_delete":true},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
			`"io.modelcontextprotocol/clientInfo":{"name":"raw-modern","version":"1"}}}}`, mid)
		ctx, giveUp := context.WithCancel(context.Background())
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			done <- callWithContext(ctx, a, tok, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "forget")
		}()
		waitPending(t, a, 1)
		giveUp()
		<-done
		check(t, a, mid, audit.OutcomeAbandoned, 200)
	})
}

// TestAudit_OutcomeWords: the audit log's outcomes of calls that did not run as asked are the
// words mcp and approval give them, which app copies as they are.
func TestAudit_OutcomeWords(t *testing.T) {
	for _, w := range []struct {
		got  audit.Outcome
		want string
	}{
		{audit.OutcomeRejected, string(approval.Rejected)},
		{audit.OutcomeTimedOut, string(approval.TimedOut)},
		{audit.OutcomeWithdrawn, string(approval.Withdrawn)},
		{audit.OutcomeApproved, string(approval.Approved)},
		{audit.OutcomeCancelled, ownmcp.OutcomeCancelled},
		{audit.OutcomeAbandoned, ownmcp.OutcomeAbandoned},
		{audit.OutcomeInputRequired, ownmcp.OutcomeInputRequired},
	} {
		if string(w.got) != w.want {
			t.Errorf("audit outcome %q, want %q", w.got, w.want)
		}
	}
}

// TestApproval_ParkedOutsidePool (SECURITY.md LA-13): calls waiting for the owner's approval
// give their slot of the pool back, so the same client's other calls are still served while
// they wait. With --max-concurrent 4 one client holds at most 2 slots: two waiting calls would
// otherwise take both, and its next call would be refused.
func TestApproval_ParkedOutsidePool(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.MaxConcurrent = 4
	cfg.Approval = string(approval.HardDelete)
	a := MustOpen(t, cfg)
	var ids []float64
	for _, text := range []string{"kept one", "kept two"} {
		p, _ := callTool(t, a, "remember", map[string]any{"text": text})
		ids = append(ids, p["memory_id"].(float64))
	}
	done := make(chan int, len(ids))
	for _, id := range ids {
		go func() {
			code, _ := rpcPost(t, a, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forget","arguments":{"id":%d,"hard_delete":true}}}`, int64(id)))
			done <- code
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); len(a.Approvals().Pending()) < len(ids); {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting for approval, want %d", len(a.Approvals().Pending()), len(ids))
		}
		time.Sleep(5 * time.Millisecond)
	}
	code, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_memories","arguments":{}}}`)
	if code != http.StatusOK || !strings.Contains(string(body), `\"count\":2`) {
		t.Errorf("a call while two wait for approval: %d %s, want it served", code, body)
	}
	for _, r := range a.Approvals().Pending() {
		if err := a.Approvals().Decide(r.ID, false, "owner (test)"); err != nil {
			t.Fatal(err)
		}
	}
	for range ids {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a denied call answered %d, want 200 with APPROVAL_REJECTED", code)
		}
	}
}
