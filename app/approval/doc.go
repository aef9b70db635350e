// Package approval is the owner's say over what an assistant wants to do (OWNSONA_APPROVAL):
// which calls wait for approval (Policy), and the in-memory queue where they wait until the
// owner approves or denies them, in the console or in the client that asked, or until their
// deadline passes. It knows nothing of MCP, tools or HTTP: app/tools asks, the console
// decides.
//
// The console's side:
//
//	for _, r := range q.Pending() { … r.ID, r.Tool, r.Summary, r.Client, r.Deadline … }
//	err := q.Decide(id, true, "owner (console)") // ErrNotFound, ErrDecided
//	ch, stop := q.Subscribe()                     // a signal on every change; stop() when done
//	for _, rec := range q.Recent() { … rec.Outcome, rec.By … }
//
// The asking side (app/tools), for one call:
//
//	t := q.Ask(key, approval.Request{Tool: "forget", Summary: "Forget memory 12 …?"}, 2*time.Minute)
//	// under ByClient, ask the client too, if it can be asked; its answer: t.Decide(ok, "user in claude-code")
//	out, err := t.Wait(ctx, 15*time.Second, keepAlive) // Approved, Rejected, TimedOut
//	t.Consume()                                        // an approval is good for one call
//
// # One request per call, found again by its key
//
// Every call asks a request of its own (SECURITY.md AG-02): identical calls made at the same
// time each wait for their own approval, and approving one runs that one. Ask files the request
// under a key that names the call's shape (app/tools: a digest of the principal, the tool and
// its arguments), beside any other request under it, and Lookup returns them all. A 2026-07-28
// call ends its first round with an input_required result and comes back as a new request
// carrying the client's answer; app/tools finds its own request among those under the key by
// the question it answers, whose key holds the request's ID (approval-<ID>), so that a console
// decision given between the rounds counts and the deadline set in the first round holds. The
// first decision wins: a later Decide (from the console or from the client) changes nothing
// and reports the one that won. A decided or timed-out request stays under its key until
// Consume, or for Config.Retain after its deadline or decision.
//
// # Who may approve
//
// Approvers says whose answer counts: ByClient (the default), the owner in the console or the
// user in the client that made the call, whichever answers first; ByOwner, the owner in the
// console only. Under ByClient a token holder answers its own question: it guards against a
// model acting on its own, whose client shows the question to its user; ByOwner guards against
// a stolen token too, as only someone signed in to the console can approve.
//
// A request nobody waits for any more — its caller went (Wait's ctx ended) and no client holds
// a question about it (Park) — is withdrawn: it leaves Pending and nothing can approve it.
//
// # Caveats
//
// The queue is in memory: a restart forgets every request, and its callers' connections end
// with it. Decisions are recorded in Recent (the newest Config.History) and reported to
// Config.OnDecision, which app uses for its log and audit log. A Queue is safe for concurrent
// use; Close stops its timers.
package approval
