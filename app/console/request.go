package console

// How a request of a signed-in browser is served: pages (GET) and actions (POST, the only way
// to change anything), each behind the session; actions also behind the origin check and the
// session's CSRF token, and recorded in the audit log.

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/app/audit"
)

// maxForm bounds a POSTed form: a memory's text of 16,000 characters, percent-encoded, fits.
const maxForm = 512 << 10

// req is one request of a signed-in browser.
type req struct {
	w      http.ResponseWriter
	r      *http.Request
	sess   *session
	form   url.Values // the POSTed form of an action; nil for a page
	failed bool       // the action reported an error to the owner
}

// page wraps a GET handler: a browser without a live session is sent to sign in, and back here
// afterwards.
func (c *Console) page(fn func(q *req)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, had := c.session(r)
		if sess == nil {
			to := Prefix + "/signin?next=" + url.QueryEscape(r.URL.RequestURI())
			if had {
				to += "&ended=1"
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		fn(&req{w: w, r: r, sess: sess})
	}
}

// action wraps a POST handler. The request must be same-origin (http.CrossOriginProtection:
// Sec-Fetch-Site, else Origin), come from a live session, and carry a form
// (application/x-www-form-urlencoded, at most maxForm bytes) holding the session's CSRF token;
// otherwise it is refused with 403 (400 for a form that cannot be read) and nothing changes.
// fn returns where to send the browser with 303, or "" when it wrote the response itself. Each
// action that ran is recorded in the audit log as method "console/<name>".
func (c *Console) action(name string, fn func(q *req) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := c.cop.Check(r); err != nil {
			c.log.Warn().Str("action", name).Msg("console: cross-origin form refused")
			c.fail(w, http.StatusForbidden, "This form was not sent from this console, so nothing was done.")
			return
		}
		sess, _ := c.session(r)
		if sess == nil {
			c.log.Info().Str("action", name).Msg("console: form without a live session refused")
			c.render(w, http.StatusForbidden, "error", &view{Title: "Signed out", Page: "Your session has ended, so nothing was done. Sign in again, then retry."})
			return
		}
		form, err := readForm(w, r)
		if err != nil {
			c.fail(w, http.StatusBadRequest, "The form was not understood.")
			return
		}
		if !checkCSRF(sess, form.Get("csrf")) {
			c.log.Warn().Str("action", name).Msg("console: form with a bad csrf token refused")
			c.fail(w, http.StatusForbidden, "This form has expired or was not sent from this console, so nothing was done. Reload the page and retry.")
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		q := &req{w: sw, r: r, sess: sess, form: form}
		to := fn(q)
		status := http.StatusSeeOther
		if to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
		} else {
			status = sw.status
		}
		c.record(name, q, status)
	}
}

// statusWriter remembers the status an action wrote itself, for the audit log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// record writes an action to the audit log: who (the console), what, and whether it went well;
// never what was written.
func (c *Console) record(name string, q *req, status int) {
	if c.cfg.Audit == nil || name == "signout" {
		return
	}
	outcome := audit.OutcomeOK
	if q.failed {
		outcome = audit.OutcomeError
	}
	c.cfg.Audit.Record(audit.Entry{Time: c.now(), Client: "console", Transport: "console", Method: "console/" + name,
		Outcome: outcome, Status: status})
}

// readForm reads a urlencoded form body of at most maxForm bytes. Values in the query string
// are not read: an action takes its arguments from the body only.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, errors.New("not a urlencoded form")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxForm))
	if err != nil {
		return nil, err
	}
	return url.ParseQuery(string(body))
}

// show renders a page of the signed-in console with the session's messages.
func (c *Console) show(q *req, status int, name, title, section string, data any) {
	fl := c.sessions.takeFlash(q.sess)
	v := &view{Title: title, Section: section, CSRF: q.sess.csrf, User: c.cfg.Auth().Username(), Flash: fl, Page: data}
	if c.cfg.Approvals != nil {
		v.Waiting = len(c.cfg.Approvals.Pending())
	}
	c.render(q.w, status, name, v)
}

// ok keeps a message for the next page.
func (c *Console) ok(q *req, format string) {
	c.sessions.addFlash(q.sess, flash{Text: format})
}

// bad keeps an error message for the next page and marks the action failed.
func (c *Console) bad(q *req, text string) {
	q.failed = true
	c.sessions.addFlash(q.sess, flash{Error: true, Text: text})
}

// safeBack returns s when it is a path of the console to send the browser back to, else def:
// never another site, never a scheme-relative or backslashed path.
func safeBack(s, def string) string {
	if s == "" || strings.ContainsAny(s, "\\\x00\r\n\t") || strings.Contains(s, "//") {
		return def
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return def
	}
	if u.Path != Prefix && !strings.HasPrefix(u.Path, Prefix+"/") {
		return def
	}
	return s
}

// pathID reads the {id} of a memory path; 0 when it is not an id.
func pathID(r *http.Request) uint64 {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
