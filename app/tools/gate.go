package tools

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/mcp"
)

// The approval gate (OWNSONA_APPROVAL, app/approval): a call that the policy names waits for
// the owner's approval before its tool runs. It asks the client when the client can
// (elicitation/create on the request's stream in the legacy era, an input_required result in
// 2026-07-28), unless only the owner may approve (approval.ByOwner), and waits in the approval
// queue, which the console shows, at the same time; the first answer wins. Denied, it ends as APPROVAL_REJECTED; unanswered by its deadline, as
// APPROVAL_TIMED_OUT; either way nothing has changed.

// Payload codes of the gate.
const (
	codeApprovalRejected = "APPROVAL_REJECTED"
	codeApprovalTimedOut = "APPROVAL_TIMED_OUT"
)

// The gate's outcomes as Sophon's JSON-RPC errors (seed 004), in the sophon mode.
const (
	codeSophonRejected = -32001 // Approval rejected
	codeSophonTimedOut = -32002 // Approval timed out
)

// approvalKeepAlive is how often a waiting call tells its client it is still alive (an SSE
// comment, and progress when the client asked for it).
const approvalKeepAlive = 15 * time.Second

// gate is the policy in force.
type gate struct {
	policy  approval.Policy
	timeout time.Duration
}

// SetApproval makes p the approval policy (empty: off) and timeout (zero: 2m) of the calls
// that begin from now on; calls already waiting keep their deadline.
func (s *Server) SetApproval(p approval.Policy, timeout time.Duration) {
	if p == "" {
		p = approval.Off
	}
	if timeout <= 0 {
		timeout = approval.DefaultTimeout
	}
	s.gate.Store(&gate{p, timeout})
}

// SetApprovers says whose answer approves the calls that begin from now on (empty:
// approval.ByClient); a 2026-07-28 retry follows the setting in force when it comes.
func (s *Server) SetApprovers(a approval.Approvers) {
	s.ownerOnly.Store(a == approval.ByOwner)
}

// Approvers returns whose answer approves a call.
func (s *Server) Approvers() approval.Approvers {
	if s.ownerOnly.Load() {
		return approval.ByOwner
	}
	return approval.ByClient
}

// Approval returns the approval policy and timeout in force.
func (s *Server) Approval() (approval.Policy, time.Duration) {
	g := s.gate.Load()
	return g.policy, g.timeout
}

// Approvals is the queue where calls wait for approval.
func (s *Server) Approvals() *approval.Queue { return s.approvals }

// expiryWindow is when an expiry hides a memory before an approval could come: after now (an
// expiry before is refused anyway) and no later than the approval timeout from now.
type expiryWindow struct{ now, horizon time.Time }

// soon reports whether the RFC 3339 time s falls in the window; an unreadable one is left to
// the tool, which refuses it.
func (w expiryWindow) soon(s string) bool {
	t, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && t.After(w.now) && !t.After(w.horizon)
}

// needsApproval reports whether a call of t with these arguments waits for approval under the
// policy in force. hides, when not nil, reports whether the call would take an existing memory
// out of recall at once or within w (def.hides): the destructive policy asks for such calls as
// for forget. Dry runs change nothing, so they never wait.
func (s *Server) needsApproval(t *mcp.Tool, raw json.RawMessage, hides func(w expiryWindow) bool) bool {
	var flags struct {
		DryRun     bool `json:"dry_run"`
		HardDelete bool `json:"hard_delete"`
	}
	_ = json.Unmarshal(raw, &flags) // the schema has been checked: these are booleans or absent
	if flags.DryRun {
		return false
	}
	a := t.Annotations
	g := s.gate.Load()
	switch g.policy {
	case approval.HardDelete:
		return flags.HardDelete
	case approval.Destructive:
		if a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
			return true
		}
		now := s.now()
		return hides != nil && hides(expiryWindow{now, now.Add(g.timeout)})
	case approval.Writes:
		return a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint
	}
	return false
}

// supersededIn is the ids that batch items name in supersedes, each once, in order; an item
// that does not decode names none (it fails on its own).
func supersededIn(items []json.RawMessage) []uint64 {
	var ids []uint64
	for _, raw := range items {
		var it struct {
			Supersedes []uint64 `json:"supersedes"`
		}
		if json.Unmarshal(raw, &it) == nil {
			for _, id := range it.Supersedes {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// supersedesNote tells a person asked about a write which memories it would supersede, which
// leave recall and lists at once; "" for none.
func (s *Server) supersedesNote(ids []uint64, text bool) string {
	if len(ids) == 0 {
		return ""
	}
	return " It supersedes " + s.memoryList(ids, text) + ": out of recall and lists at once (get_memory still shows superseded memories)."
}

// approve holds a call until it is approved (nil, nil), and otherwise returns its result: an
// isError APPROVAL_REJECTED or APPROVAL_TIMED_OUT payload, or, for a 2026-07-28 client that
// can answer, the error that ends this round with an input_required result. summary says what
// the call would do, for the console; question asks it of the client's user.
//
// Each call asks a request of its own (SECURITY.md AG-02). A 2026-07-28 retry finds the
// request of its first round among those under the call's key by the question it answers
// (approval-<request ID>), whatever the request's state: a console decision or a timeout
// between the rounds holds. Under approval.ByOwner the client is not asked, and its answer
// does not count: the call waits for the console.
func (s *Server) approve(ctx context.Context, tool string, raw json.RawMessage, summary, question string) (*mcp.ToolResult, error) {
	g := s.gate.Load()
	ownerOnly := s.Approvers() == approval.ByOwner
	key := approvalKey(owner(ctx), tool, raw)
	client, agent := who(ctx)
	by := "user in " + cmp.Or(agent, client)
	modern := slices.Contains(mcp.ModernProtocolVersions, mcp.ProtocolVersionFrom(ctx))
	form := elicitForm(question, g.policy)

	var t *approval.Ticket
	if modern {
		for _, c := range s.approvals.Lookup(key) {
			ans, err := mcp.Elicit(ctx, elicitKey(c), form)
			if cannotAsk(err) {
				break // no answer can be carried: this is a new call
			}
			if err != nil {
				continue // the answer to another call's question, or to none
			}
			t = c
			if !ownerOnly {
				t.Decide(approves(ans), by) // unless decided already: the first decision wins
			}
			break
		}
	}
	if t == nil {
		t = s.approvals.Ask(key, approval.Request{Tool: tool, Summary: summary, Client: client, Agent: agent}, g.timeout)
	}
	if out, _ := t.Outcome(); out != "" { // decided, or timed out, before this round
		t.Consume()
		return s.approvalResult(ctx, t)
	}
	asked := make(chan error, 1) // why the client cannot be asked
	switch {
	case ownerOnly:
		asked <- errOwnerOnly
	case modern:
		ans, err := mcp.Elicit(ctx, elicitKey(t), form)
		switch {
		case err == nil: // the round carries the answer already
			t.Decide(approves(ans), by)
			t.Consume()
			return s.approvalResult(ctx, t)
		case !cannotAsk(err): // input_required: the client asks its user and comes back
			t.Park()
			return nil, err
		}
		asked <- err
	}
	ctx2, stop := context.WithCancel(ctx)
	defer stop()
	if !modern && !ownerOnly {
		go func() {
			ans, err := mcp.Elicit(ctx2, elicitKey(t), form)
			if err == nil {
				t.Decide(approves(ans), by)
				return
			}
			asked <- err
		}()
	}
	if s.askOnly {
		// No console: the client's answer is the only one that can come.
		go func() {
			select {
			case err := <-asked:
				why := "nobody: no console runs and the client cannot be asked"
				if errors.Is(err, errOwnerOnly) {
					why = "nobody: only the owner approves, in the console, and no console runs"
				}
				t.Decide(false, why)
			case <-ctx2.Done():
			}
		}()
	}
	start := time.Now()
	tick := func() {
		mcp.KeepAlive(ctx)
		mcp.Progress(ctx, time.Since(start).Seconds(), g.timeout.Seconds(), "waiting for the owner's approval")
	}
	tick() // starts the event stream, which lifts the connection's write deadline
	// While it waits for a person, the call gives its slot of the pool back (LA-13), so that
	// waiting calls never crowd out the others; it takes one again before it runs.
	resume := s.park(ctx)
	if _, err := t.Wait(ctx, approvalKeepAlive, tick); err != nil {
		return nil, err // the client went: no one reads an answer
	}
	if err := resume(); err != nil {
		return nil, err
	}
	t.Consume()
	return s.approvalResult(ctx, t)
}

// errOwnerOnly: under approval.ByOwner the client is never asked.
var errOwnerOnly = errors.New("only the owner approves")

// approvalResult is the result of an ended request: nil when approved (the tool runs). The
// call's outcome (mcp.SetOutcome, the audit log's) is the request's: rejected, timed_out or
// withdrawn.
func (s *Server) approvalResult(ctx context.Context, t *approval.Ticket) (*mcp.ToolResult, error) {
	out, by := t.Outcome()
	r := t.Request()
	if out != approval.Approved {
		mcp.SetOutcome(ctx, string(out))
	}
	var te *toolError
	switch out {
	case approval.Approved:
		return nil, nil
	case approval.TimedOut:
		te = &toolError{Code: codeApprovalTimedOut, Message: fmt.Sprintf(
			"Nobody approved this call within %s; nothing was changed. The owner approves such calls in ownsona's console or when the client asks.",
			r.Deadline.Sub(r.Created).Round(time.Second))}
	case approval.Rejected:
		te = &toolError{Code: codeApprovalRejected, Message: fmt.Sprintf(
			"The call was not approved (by %s); nothing was changed. Do not retry unless the user asks for it.", cmp.Or(by, "the owner"))}
	default: // withdrawn: the server is closing
		te = &toolError{Code: codeApprovalRejected, Message: "The server stopped before the call was approved; nothing was changed."}
	}
	if s.Compat().Sophon {
		e := &jsonrpc.Error{Code: codeSophonRejected, Message: "Approval rejected",
			Data: map[string]string{"tool": r.Tool, "code": te.Code, "reason": te.Message}}
		if te.Code == codeApprovalTimedOut {
			e.Code, e.Message = codeSophonTimedOut, "Approval timed out"
		}
		return nil, e
	}
	return &mcp.ToolResult{Structured: errorPayload{Error: te}, IsError: true}, nil
}

// approvalKey files a call's request in the queue, the same in every round of a 2026-07-28
// call: a digest of the principal, the tool and the arguments, whatever the order of their
// members. Identical calls share it; each has a request of its own under it.
func approvalKey(principal, tool string, raw json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(principal))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	h.Write([]byte{0})
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber() // 64-bit ids stay exact
	var v any
	if dec.Decode(&v) == nil {
		canon, _ := json.Marshal(v) // maps marshal with sorted keys
		h.Write(canon)
	} else {
		h.Write(raw)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// elicitKey is the key of the question in inputRequests: one per request, so that an answer
// to an earlier request (replayed, or given after its request was consumed) answers nothing.
func elicitKey(t *approval.Ticket) string { return "approval-" + t.Request().ID }

type elicitParams struct {
	Message         string       `json:"message"`
	RequestedSchema elicitSchema `json:"requestedSchema"`
}

type elicitSchema struct {
	Type       string `json:"type"`
	Properties struct {
		Approve struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Default     bool   `json:"default"`
		} `json:"approve"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// elicitForm is the question put to the client's user: approve, a boolean.
func elicitForm(question string, p approval.Policy) elicitParams {
	f := elicitParams{Message: question + "\n\nownsona asks before such calls (approval policy " + string(p) +
		"). The owner may answer in ownsona's console instead; until someone approves, nothing changes."}
	f.RequestedSchema.Type = "object"
	a := &f.RequestedSchema.Properties.Approve
	a.Type, a.Title, a.Description = "boolean", "Approve", "Yes lets the assistant do this; no refuses it"
	f.RequestedSchema.Required = []string{"approve"}
	return f
}

// approves reads an elicitation's answer: approved only when accepted with approve true;
// declined, cancelled or anything else refuses.
func approves(ans json.RawMessage) bool {
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Approve bool `json:"approve"`
		} `json:"content"`
	}
	return json.Unmarshal(ans, &r) == nil && r.Action == "accept" && r.Content.Approve
}

// cannotAsk reports whether Elicit's error means the client cannot be asked: it did not
// declare elicitation, or its transport cannot carry the question.
func cannotAsk(err error) bool {
	var re *jsonrpc.Error
	return errors.Is(err, mcp.ErrNoStream) || errors.As(err, &re) && re.Code == mcp.CodeMissingCapability
}

// who names the caller for the queue: the principal (as origin does) and the MCP client
// software, if it named itself.
func who(ctx context.Context) (client, agent string) {
	client = origin(ctx, "").Client
	if info, ok := mcp.ClientInfoFrom(ctx); ok {
		agent = strings.TrimSpace(info.Name + " " + info.Version)
	}
	return client, agent
}

// excerpt quotes the start of a memory's text for a question: at most 60 characters.
func excerpt(text string) string {
	const n = 60
	if utf8.RuneCountInString(text) <= n {
		return fmt.Sprintf("%q", text)
	}
	r := []rune(text)
	return fmt.Sprintf("%q", strings.TrimSpace(string(r[:n]))+"…")
}

// memoryRef names a memory in a question: `memory 12 "My son Colby lives in…"`, or `memory
// 12` without text.
func memoryRef(m *memory.Memory, text bool) string {
	if !text {
		return fmt.Sprintf("memory %d", m.ID)
	}
	return fmt.Sprintf("memory %d %s", m.ID, excerpt(m.Text))
}

// memoryList names memories by id in a question (quoting the first few with text): "memory
// 12 …" for one, "3 memories: 12 "…", 13 "…", 14 "…"" for more, the unknown ones by id only.
func (s *Server) memoryList(ids []uint64, text bool) string {
	if len(ids) == 1 {
		if m, err := s.mem.Get(ids[0]); err == nil {
			return memoryRef(m, text)
		}
		return fmt.Sprintf("memory %d", ids[0])
	}
	const shown = 5
	parts := make([]string, 0, shown+1)
	for i, id := range ids {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-shown))
			break
		}
		part := fmt.Sprint(id)
		if m, err := s.mem.Get(id); err == nil && text {
			part += " " + excerpt(m.Text)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%d memories: %s", len(ids), strings.Join(parts, ", "))
}

// describeCall says what a call would do: summary for the console, question for the client's
// user, who sees memory text only when the allowlist lets the client read memories. A tool
// without its own describe is described by its title and arguments. An error means the call
// would change nothing (an unknown memory, conflicting arguments): it is the call's answer.
func describeCall[In, Out any](ctx context.Context, s *Server, d def[In, Out], in In, raw json.RawMessage) (summary, question string, err error) {
	if d.describe == nil {
		args := string(raw)
		if utf8.RuneCountInString(args) > 300 {
			args = string([]rune(args)[:300]) + "…"
		}
		q := fmt.Sprintf("%s (%s) with %s?", d.title, d.name, args)
		return q, q, nil
	}
	if summary, err = d.describe(ctx, in, true); err != nil {
		return "", "", err
	}
	question = summary
	if !s.allowed("get_memory") {
		question, err = d.describe(ctx, in, false)
	}
	return summary, question, err
}
