// Package httpscenario is the one table type of HTTP tests, as PocketBase's tests.ApiScenario:
// a request (method, URL, headers, body) and what its answer must hold (status, body and header
// checks), run through an http.Handler in-process.
//
//	httpscenario.Runner[web.Config, *fixture]{Open: MustOpenServer, Handler: handler}.Run(t, []scenario{
//		{Name: "health", Method: "GET", URL: "/health", WantStatus: 200, WantBody: []string{`"healthy"`}},
//	})
//
// C is the configuration a scenario may change before its fixture opens, F the fixture each
// package's MustOpen… returns. It is for tests only; nothing in the binary imports it.
package httpscenario

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
)

// Scenario is one HTTP request and what its answer must hold.
type Scenario[C, F any] struct {
	Name   string
	Config func(*C) // changes to the fixture's configuration (Runner.Run only)
	Before func(F)  // run once the fixture is open, before the requests

	Method  string
	URL     string             // a path (on Runner.Base), or an absolute URL
	Headers map[string]string  // "Host" sets the request's host; an empty value removes a header
	Body    string             // sent as application/json unless Headers name a Content-Type
	BodyFor func(F) string     // the body, when it needs the fixture
	Form    url.Values         // a form body, sent as application/x-www-form-urlencoded
	FormFor func(F) url.Values // the form, when it needs the fixture (a token it holds)
	Request func(F, *http.Request)
	Repeat  int // requests sent (and not checked) before the one that is

	WantStatus    int
	WantBody      []string          // substrings of the body
	WantNoBody    []string          // substrings the body must not have
	WantHeaders   map[string]string // exact values
	WantNoHeaders []string
	Check         func(t *testing.T, rec *httptest.ResponseRecorder) // anything else
	// After checks the fixture once the answer is verified: what the request changed, or must
	// not have (the page a redirect leads to, a session still live, a callback not called).
	After func(t *testing.T, f F, rec *httptest.ResponseRecorder)
}

// Runner serves scenarios through a fixture's handler.
type Runner[C, F any] struct {
	// Open opens a fresh fixture for each scenario of Run, with the scenario's Config.
	Open func(testing.TB, ...func(*C)) F
	// Handler is the handler under test of a fixture.
	Handler func(F) http.Handler
	// Base is the scheme and host of a URL given as a path; "" is httptest's http://example.com.
	Base string
	// Bubble runs each scenario of Run in a testing/synctest bubble: in-process, on the bubble's
	// clock.
	Bubble bool
}

// Run runs each scenario as a subtest on a fixture of its own.
func (r Runner[C, F]) Run(t *testing.T, scenarios []Scenario[C, F]) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if r.Bubble {
				synctest.Test(t, func(t *testing.T) { r.runOne(t, sc) })
				return
			}
			r.runOne(t, sc)
		})
	}
}

func (r Runner[C, F]) runOne(t *testing.T, sc Scenario[C, F]) {
	var opts []func(*C)
	if sc.Config != nil {
		opts = append(opts, sc.Config)
	}
	r.serve(t, r.Open(t, opts...), sc)
}

// RunOn runs each scenario as a subtest on the fixture f, which they share with the test around
// them (a client it registered, a token it holds), in order.
func (r Runner[C, F]) RunOn(t *testing.T, f F, scenarios []Scenario[C, F]) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) { r.Test(t, f, sc) })
	}
}

// Test serves sc on the fixture f, which it shares with the test around it, checks the answer and
// returns it. sc.Config must be nil: f is already open.
func (r Runner[C, F]) Test(t *testing.T, f F, sc Scenario[C, F]) *httptest.ResponseRecorder {
	t.Helper()
	if sc.Config != nil {
		t.Fatalf("scenario %q changes the configuration of a fixture already open", sc.Name)
	}
	return r.serve(t, f, sc)
}

func (r Runner[C, F]) serve(t *testing.T, f F, sc Scenario[C, F]) *httptest.ResponseRecorder {
	t.Helper()
	if sc.Before != nil {
		sc.Before(f)
	}
	h := r.Handler(f)
	var rec *httptest.ResponseRecorder
	for range sc.Repeat + 1 {
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, r.NewRequest(f, sc))
	}
	sc.Verify(t, rec)
	if sc.After != nil {
		sc.After(t, f, rec)
	}
	return rec
}

// NewRequest is sc's request to the fixture f.
func (r Runner[C, F]) NewRequest(f F, sc Scenario[C, F]) *http.Request {
	target := sc.URL
	if r.Base != "" && strings.HasPrefix(target, "/") {
		target = r.Base + target
	}
	text, ctype := sc.Body, "application/json"
	if sc.BodyFor != nil {
		text = sc.BodyFor(f)
	}
	form := sc.Form
	if sc.FormFor != nil {
		form = sc.FormFor(f)
	}
	if form != nil {
		text, ctype = form.Encode(), "application/x-www-form-urlencoded"
	}
	var body io.Reader
	if text != "" {
		body = strings.NewReader(text)
	}
	req := httptest.NewRequest(sc.Method, target, body)
	if text != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range sc.Headers {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	if sc.Request != nil {
		sc.Request(f, req)
	}
	return req
}

// Verify checks rec against what sc wants.
func (sc Scenario[C, F]) Verify(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != sc.WantStatus {
		t.Errorf("status = %d, want %d; body %s", rec.Code, sc.WantStatus, rec.Body)
	}
	for _, want := range sc.WantBody {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("body lacks %s:\n%s", want, rec.Body)
		}
	}
	for _, bad := range sc.WantNoBody {
		if strings.Contains(rec.Body.String(), bad) {
			t.Errorf("body has %s:\n%s", bad, rec.Body)
		}
	}
	for k, want := range sc.WantHeaders {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	for _, k := range sc.WantNoHeaders {
		if got := rec.Header().Values(k); len(got) > 0 {
			t.Errorf("header %s = %q, want none", k, got)
		}
	}
	if sc.Check != nil {
		sc.Check(t, rec)
	}
}
