package console

// The Approvals page: calls that wait for the owner (app/approval's queue: OWNSONA_APPROVAL
// names which), each approved or denied here, and the recent decisions.

import (
	"errors"
	"net/http"

	"github.com/ownsona/ownsona/app/approval"
)

// Approvals is what the console needs of the approval queue (*approval.Queue).
type Approvals interface {
	Pending() []approval.Request
	Decide(id string, approve bool, by string) error
	Recent() []approval.Record
}

var _ Approvals = (*approval.Queue)(nil)

// decidedBy names the owner deciding in the console, in the audit log and the queue's history.
const decidedBy = "owner (console)"

// approvalsPage is the Approvals page's data.
type approvalsPage struct {
	Enabled bool
	Pending []approval.Request
	Recent  []approval.Record
}

func (c *Console) getApprovals(q *req) {
	data := approvalsPage{Enabled: c.cfg.Approvals != nil}
	if data.Enabled {
		data.Pending, data.Recent = c.cfg.Approvals.Pending(), c.cfg.Approvals.Recent()
	}
	c.show(q, http.StatusOK, "approvals", "Approvals", "approvals", data)
}

// postDecide approves or denies one waiting call. The first answer wins: the client's user may
// have answered, or the call timed out or went away, in which case nothing is decided here.
func (c *Console) postDecide(q *req) string {
	const back = Prefix + "/approvals"
	if c.cfg.Approvals == nil {
		c.bad(q, "Approvals are not available on this server.")
		return back
	}
	approve := q.form.Get("decision") == "approve"
	err := c.cfg.Approvals.Decide(q.form.Get("id"), approve, decidedBy)
	switch {
	case errors.Is(err, approval.ErrNotFound) || errors.Is(err, approval.ErrDecided):
		c.bad(q, "Nothing decided: that call was already answered, timed out or went away.")
	case err != nil:
		c.log.Error().Err(err).Msg("console: decide approval")
		c.bad(q, "Nothing decided (internal error).")
	case approve:
		c.ok(q, "Approved: the call goes ahead.")
	default:
		c.ok(q, "Denied: the call ends without changing anything.")
	}
	return back
}
