package console

// The Settings page: the run-time settings kept in the file (app/settings): the tool allowlist,
// the approval policy and timeout, the rate limits, the compatibility modes. A flag or an environment variable wins over
// them; the page shows which, and leaves those fields alone.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/settings"
)

// Settings is what the console needs of the settings store (*settings.Store).
type Settings interface {
	Get() settings.Settings
	Fixed() map[string]string
	Set(ctx context.Context, s settings.Settings) error
}

var _ Settings = (*settings.Store)(nil)

// policyLabels say what each approval policy holds for the owner.
var policyLabels = map[approval.Policy]string{
	approval.Off:         "Never ask: every call runs at once.",
	approval.HardDelete:  "Ask before a memory is deleted for good (forgotten ones stay in the Trash).",
	approval.Destructive: "Ask before a memory leaves recall: every forget, a supersede, an expiry within the approval timeout.",
	approval.Writes:      "Ask before every change: remember, update, confirm and forget.",
}

// approverLabels say whose answer approves a call, and what each guards against.
var approverLabels = map[approval.Approvers]string{
	approval.ByClient: "You in the console, or the user in the assistant that asks (when it can ask): " +
		"guards against a model acting on its own.",
	approval.ByOwner: "Only you, in the console: guards against a stolen token too, since its holder " +
		"cannot answer its own question.",
}

// compatLabels say what each compatibility mode changes, and for whom.
var compatLabels = map[string]string{
	settings.CompatONCE: "ONCE's clients (seed 001): a token in the access_token argument, ONCE's server-card fields, " +
		"and prepare_local_file_upload as another name of prepare_import_upload.",
	settings.CompatKOmcp: "KOmcp's clients (seed 003): its scopes (mcp:tools:read, mcp:tools:execute, kura:notes:search), " +
		"the bare origin as the resource, the search_kura_notes tool and its error bodies.",
	settings.CompatSophon: "Sophon's own clients (seed 004): the memory.search tool, sophon://memory resources, and " +
		"approval outcomes as JSON-RPC errors -32001 and -32002. Claude refuses tool names with a dot: " +
		"switch this on only for Sophon's clients.",
}

type choice struct {
	Value, Label string
	On           bool
}

// settingsPage is the Settings page's data.
type settingsPage struct {
	Enabled   bool
	Tools     []choice
	Policies  []choice
	By        []choice
	Timeout   string
	RateLimit int
	RateBurst int
	Compat    []choice
	Fixed     map[string]string // setting → what fixes it
}

func (c *Console) getSettings(q *req) {
	data := settingsPage{Enabled: c.cfg.Settings != nil}
	if data.Enabled {
		s := c.cfg.Settings.Get()
		for _, name := range c.cfg.Tools {
			label := name
			if t := c.cfg.ToolTitles[name]; t != "" {
				label = t
			}
			data.Tools = append(data.Tools, choice{Value: name, Label: label, On: len(s.Tools) == 0 || slices.Contains(s.Tools, name)})
		}
		for _, p := range approval.Policies {
			data.Policies = append(data.Policies, choice{Value: string(p), Label: policyLabels[p], On: p == s.Approval})
		}
		for _, a := range approval.AllApprovers {
			data.By = append(data.By, choice{Value: string(a), Label: approverLabels[a],
				On: a == s.ApprovalBy || (s.ApprovalBy == "" && a == approval.ByClient)})
		}
		for _, mode := range settings.CompatModes {
			data.Compat = append(data.Compat, choice{Value: mode, Label: compatLabels[mode], On: s.HasCompat(mode)})
		}
		data.Timeout, data.RateLimit, data.RateBurst = s.ApprovalTimeout.String(), s.RateLimit, s.RateBurst
		data.Fixed = c.cfg.Settings.Fixed()
	}
	c.show(q, http.StatusOK, "settings", "Settings", "settings", data)
}

// postSettings saves the fields that no flag or environment variable fixes; the others keep
// their values (their inputs are disabled, so a browser sends nothing for them).
func (c *Console) postSettings(q *req) string {
	const back = Prefix + "/settings"
	if c.cfg.Settings == nil {
		c.bad(q, "Settings are not available on this server.")
		return back
	}
	s, fixed := c.cfg.Settings.Get(), c.cfg.Settings.Fixed()
	free := func(name string) bool { _, ok := fixed[name]; return !ok }
	if free(settings.Tools) {
		tools := q.form["tools"]
		switch {
		case len(tools) == 0:
			c.bad(q, "Nothing saved: choose at least one tool (all of them allows every tool).")
			return back
		case len(tools) >= len(c.cfg.Tools) && !slices.ContainsFunc(c.cfg.Tools, func(t string) bool { return !slices.Contains(tools, t) }):
			s.Tools = nil // every tool, also those a later version adds
		default:
			s.Tools = tools
		}
	}
	if free(settings.Approval) {
		s.Approval = approval.Policy(q.form.Get("approval"))
	}
	if free(settings.ApprovalBy) {
		if by := q.form.Get("approval_by"); by != "" {
			s.ApprovalBy = approval.Approvers(by)
		}
	}
	if free(settings.ApprovalTimeout) {
		d, err := time.ParseDuration(strings.TrimSpace(q.form.Get("approval_timeout")))
		if err != nil {
			c.bad(q, "Nothing saved: the approval timeout must be a duration such as 2m or 90s.")
			return back
		}
		s.ApprovalTimeout = d
	}
	for _, f := range []struct {
		name, field string
		dst         *int
	}{{settings.RateLimit, "rate_limit", &s.RateLimit}, {settings.RateBurst, "rate_burst", &s.RateBurst}} {
		if !free(f.name) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(q.form.Get(f.field)))
		if err != nil {
			c.bad(q, "Nothing saved: "+f.name+" must be a whole number.")
			return back
		}
		*f.dst = n
	}
	if free(settings.Compat) {
		s.Compat = q.form["compat"]
	}
	if why := lowers(c.cfg.Settings.Get(), s, c.cfg.Tools); why != "" && !c.recheck(q, "Nothing saved: "+why) {
		return back
	}
	err := c.cfg.Settings.Set(q.r.Context(), s)
	var invalid *settings.InvalidError
	var fixedErr *settings.FixedError
	switch {
	case errors.As(err, &invalid) || errors.As(err, &fixedErr):
		c.bad(q, "Nothing saved: "+err.Error()+".")
	case err != nil:
		c.log.Error().Err(err).Msg("console: save settings")
		c.bad(q, "Nothing saved (internal error).")
	default:
		c.ok(q, "Saved. Every setting applies at once; connected assistants are told the tool list changed.")
	}
	return back
}

// lowers says how next protects less than cur, or "" when it does not: a longer allowlist, an
// approval policy that asks less, a rate limit off or higher, a higher burst, a compatibility
// mode switched on (each accepts more: tokens in arguments, other scopes and resources, other
// tools). Such a save needs the password again (SECURITY.md CO-01), so that a stolen session
// cannot quietly undo the owner's protections.
func lowers(cur, next settings.Settings, tools []string) string {
	widened := func(cur, next []string, all []string) bool {
		if len(cur) == 0 { // every one already
			return false
		}
		if len(next) == 0 {
			return true
		}
		return slices.ContainsFunc(next, func(t string) bool { return !slices.Contains(cur, t) })
	}
	switch {
	case widened(cur.Tools, next.Tools, tools):
		return "this lets assistants use more tools"
	case slices.Index(approval.Policies, next.Approval) < slices.Index(approval.Policies, cur.Approval):
		return "this asks for approval less often"
	case cur.ApprovalBy == approval.ByOwner && next.ApprovalBy != approval.ByOwner:
		return "this lets clients approve their own calls"
	case cur.RateLimit != 0 && (next.RateLimit == 0 || next.RateLimit > cur.RateLimit):
		return "this raises the rate limit"
	case next.RateBurst > cur.RateBurst:
		return "this raises the burst"
	case slices.ContainsFunc(next.Compat, func(m string) bool { return !cur.HasCompat(m) }):
		return "this switches a compatibility mode on"
	}
	return ""
}
