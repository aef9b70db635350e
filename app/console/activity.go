package console

// The Activity page: the audit log, filtered and paged, newest first.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/audit"
)

const activityPageSize = 50

// activityPage is the Activity page's data.
type activityPage struct {
	Enabled                         bool
	Client, Tool, Outcome, From, To string
	Outcomes                        []audit.Outcome
	Rows                            []audit.Entry
	Corrupt                         int
	Notes                           []string
	Prev, Next                      string
	Filtered                        bool
}

var outcomes = []audit.Outcome{audit.OutcomeOK, audit.OutcomeError, audit.OutcomeToolError, audit.OutcomeUnauthorized,
	audit.OutcomeDenied, audit.OutcomeRateLimited, audit.OutcomeBusy, audit.OutcomeRejected, audit.OutcomeTimedOut,
	audit.OutcomeWithdrawn, audit.OutcomeCancelled, audit.OutcomeAbandoned, audit.OutcomeInputRequired, audit.OutcomeApproved}

func (c *Console) getActivity(q *req) {
	v := q.r.URL.Query()
	data := activityPage{Enabled: c.cfg.Audit != nil, Client: strings.TrimSpace(v.Get("client")), Tool: strings.TrimSpace(v.Get("tool")),
		Outcome: v.Get("outcome"), From: v.Get("from"), To: v.Get("to"), Outcomes: outcomes}
	data.Filtered = data.Client != "" || data.Tool != "" || data.Outcome != "" || data.From != "" || data.To != ""
	page, _ := strconv.Atoi(v.Get("page"))
	page = max(page, 0)
	if !data.Enabled {
		c.show(q, http.StatusOK, "activity", "Activity", "activity", data)
		return
	}
	f := audit.Filter{Client: data.Client, Tool: data.Tool, Outcome: audit.Outcome(data.Outcome), Limit: (page+1)*activityPageSize + 1}
	if data.From != "" {
		if t, err := time.ParseInLocation(time.DateOnly, data.From, time.UTC); err == nil {
			f.Since = t
		} else {
			data.Notes = append(data.Notes, "The start date was ignored: use a date such as 2026-01-31.")
		}
	}
	if data.To != "" {
		if t, err := time.ParseInLocation(time.DateOnly, data.To, time.UTC); err == nil {
			f.Until = t.Add(24 * time.Hour)
		} else {
			data.Notes = append(data.Notes, "The end date was ignored: use a date such as 2026-01-31.")
		}
	}
	rows, corrupt, err := c.cfg.Audit.Query(f)
	if err != nil {
		c.log.Error().Err(err).Msg("console: query audit log")
		data.Notes = append(data.Notes, "The audit log could not be read (internal error).")
	}
	data.Corrupt = corrupt
	more := len(rows) > (page+1)*activityPageSize
	if lo := page * activityPageSize; lo < len(rows) {
		data.Rows = rows[lo:min(len(rows), lo+activityPageSize)]
	}
	link := func(p int) string {
		u := url.Values{}
		for k, s := range map[string]string{"client": data.Client, "tool": data.Tool, "outcome": data.Outcome, "from": data.From, "to": data.To} {
			if s != "" {
				u.Set(k, s)
			}
		}
		if p > 0 {
			u.Set("page", strconv.Itoa(p))
		}
		if len(u) == 0 {
			return Prefix + "/activity"
		}
		return Prefix + "/activity?" + u.Encode()
	}
	if page > 0 {
		data.Prev = link(page - 1)
	}
	if more {
		data.Next = link(page + 1)
	}
	c.show(q, http.StatusOK, "activity", "Activity", "activity", data)
}
