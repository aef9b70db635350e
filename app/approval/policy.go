package approval

import (
	"fmt"
	"slices"
	"time"
)

// Policy is which calls wait for the owner's approval.
type Policy string

// Policies, from none to most.
const (
	// Off: no call waits.
	Off Policy = "off"
	// HardDelete: calls that erase for good (forget with hard_delete); soft forgets stay
	// recoverable from the trash. The default.
	HardDelete Policy = "hard-delete"
	// Destructive: every call that takes a memory out of recall and lists at once, recoverable
	// or not: every call of a tool annotated destructiveHint (forget, forget_batch), and a
	// remember, remember_batch, update_memory or update_memory_batch that names supersedes, or
	// an update that sets an expiry within the approval timeout (sooner than an approval could
	// come). A memory's own expiry given to remember hides nothing that exists, and a text
	// change keeps the text it replaces (SECURITY.md AG-01): neither asks.
	Destructive Policy = "destructive"
	// Writes: every call of a tool that is not read-only.
	Writes Policy = "writes"
)

// Policies are the policies, from none to most.
var Policies = []Policy{Off, HardDelete, Destructive, Writes}

// Bounds of a request's timeout. The upper bound is the life of a 2026-07-28 requestState
// (15 minutes): a client's answer after it would not be accepted anyway.
const (
	DefaultTimeout = 2 * time.Minute
	MinTimeout     = 10 * time.Second
	MaxTimeout     = 15 * time.Minute
)

// ParsePolicy returns the policy called s, or an error listing the policies.
func ParsePolicy(s string) (Policy, error) {
	if p := Policy(s); slices.Contains(Policies, p) {
		return p, nil
	}
	return "", fmt.Errorf("%q is not one of off, hard-delete, destructive, writes", s)
}

// Approvers is whose answer approves a call.
type Approvers string

// Approvers, from most to fewest.
const (
	// ByClient: the owner in the console, or the user in the client that made the call when
	// it can ask (elicitation), whichever answers first. It guards against a model acting on
	// its own; a token holder can answer its own question. The default.
	ByClient Approvers = "client"
	// ByOwner: only the owner, in the console. The client is not asked, and an answer it sends
	// anyway does not count: a stolen token cannot approve its own call.
	ByOwner Approvers = "owner"
)

// AllApprovers are the Approvers values, from most to fewest.
var AllApprovers = []Approvers{ByClient, ByOwner}

// ParseApprovers returns the Approvers called s, or an error listing them.
func ParseApprovers(s string) (Approvers, error) {
	if a := Approvers(s); slices.Contains(AllApprovers, a) {
		return a, nil
	}
	return "", fmt.Errorf("%q is not one of client, owner", s)
}
