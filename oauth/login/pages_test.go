package login

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// everyPage returns one response of each kind the package writes, made in a synctest bubble.
func everyPage(t *testing.T) map[string]*httptest.ResponseRecorder {
	t.Helper()
	pages := make(map[string]*httptest.ResponseRecorder)
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)

		pages["login"] = s.start(t, testRequest()).ResponseRecorder
		consent, c := s.mustLogIn(t, testRequest())
		pages["consent"] = consent.ResponseRecorder
		pages["consent from Start"] = s.start(t, testRequest(), c).ResponseRecorder
		pages["consent too soon"] = s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c).ResponseRecorder
		logout := s.get(t, PathLogout, c)
		pages["sign-out"] = logout.ResponseRecorder
		pages["sign-out 303"] = s.post(t, PathLogout, url.Values{"csrf": {logout.csrf}}, nil, c).ResponseRecorder
		pages["signed out"] = s.get(t, PathLogout, c).ResponseRecorder

		wrong := s.start(t, testRequest())
		res := s.login(t, wrong, "x", "y")
		pages["login 303"] = res.ResponseRecorder
		pages["login with message"] = s.get(t, res.Header().Get("Location")).ResponseRecorder
		for range 3 {
			s.login(t, wrong, "x", "y")
		}
		pages["login 429"] = s.login(t, wrong, "x", "y").ResponseRecorder

		pages["error 403"] = s.post(t, PathLogin, url.Values{"txn": {wrong.txn}}, nil).ResponseRecorder
		pages["error 400"] = s.post(t, PathLogin, url.Values{"bogus": {"1"}}, nil).ResponseRecorder
		pages["expired"] = s.get(t, continueURL("nope")).ResponseRecorder
		pages["405"] = s.get(t, PathConsent).ResponseRecorder
		pages["404"] = s.get(t, "/oauth/nothing").ResponseRecorder
		time.Sleep(time.Second)
		rec := httptest.NewRecorder()
		WriteError(rec, http.StatusBadRequest, "Unknown client.")
		pages["WriteError"] = rec
	})
	return pages
}

func TestPages_Headers(t *testing.T) {
	for name, rec := range everyPage(t) {
		t.Run(name, func(t *testing.T) {
			h := rec.Header()
			wantCSP := pageCSP
			if strings.HasPrefix(name, "consent") {
				wantCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://app.example; frame-ancestors 'none'"
			}
			for _, tt := range []struct{ header, want string }{
				{"Content-Security-Policy", wantCSP},
				{"X-Frame-Options", "DENY"},
				{"Cache-Control", "no-store"},
				{"Referrer-Policy", "no-referrer"},
				{"X-Content-Type-Options", "nosniff"},
			} {
				if got := h.Values(tt.header); len(got) != 1 || got[0] != tt.want {
					t.Errorf("%s = %q, want %q", tt.header, got, tt.want)
				}
			}
			if h.Get("Access-Control-Allow-Origin") != "" {
				t.Error("a page allows CORS")
			}
		})
	}
}

func TestPages_NoExternalResources(t *testing.T) {
	urlAttrs := map[string]bool{"src": true, "href": true, "action": true, "formaction": true,
		"srcset": true, "poster": true, "data": true, "background": true, "manifest": true, "ping": true}
	banned := map[string]bool{"script": true, "img": true, "link": true, "iframe": true, "object": true,
		"embed": true, "base": true, "frame": true, "video": true, "audio": true, "source": true}
	for name, rec := range everyPage(t) {
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			d := xml.NewDecoder(strings.NewReader(rec.Body.String()))
			d.Strict = false
			d.AutoClose = xml.HTMLAutoClose
			d.Entity = xml.HTMLEntity
			elements := 0
			for {
				tok, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("parse: %v\n%s", err, rec.Body)
				}
				switch tok := tok.(type) {
				case xml.StartElement:
					elements++
					if banned[strings.ToLower(tok.Name.Local)] {
						t.Errorf("<%s> element", tok.Name.Local)
					}
					for _, a := range tok.Attr {
						name := strings.ToLower(a.Name.Local)
						if name == "style" || strings.HasPrefix(name, "on") {
							t.Errorf("<%s %s=%q>: inline style or handler attribute", tok.Name.Local, a.Name.Local, a.Value)
						}
						if urlAttrs[name] && (!strings.HasPrefix(a.Value, "/") || strings.HasPrefix(a.Value, "//")) {
							t.Errorf("<%s %s=%q>: not a same-origin path", tok.Name.Local, a.Name.Local, a.Value)
						}
					}
				case xml.CharData:
					if strings.Contains(string(tok), "url(") || strings.Contains(string(tok), "@import") {
						t.Errorf("style loads something: %q", tok)
					}
				}
			}
			if elements < 5 {
				t.Errorf("parsed %d elements, want a page", elements)
			}
		})
	}
}

func TestConsentPage(t *testing.T) {
	// consent logs in to a server of its own, in a synctest bubble, and returns the consent
	// page for req.
	consent := func(t *testing.T, req Request) (body string) {
		t.Helper()
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			_, c := s.mustLogIn(t, testRequest())
			p := s.start(t, req, c)
			if p.Code != http.StatusOK {
				t.Fatalf("consent page = %d", p.Code)
			}
			body = p.Body.String()
		})
		return body
	}

	t.Run("script in the name", func(t *testing.T) {
		req := testRequest()
		req.ClientName = `<script>alert("x")</script>`
		body := consent(t, req)
		if strings.Contains(body, "<script") {
			t.Error("page contains <script")
		}
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
			t.Error("page lacks the escaped name")
		}
	})
	t.Run("RTL override in the name", func(t *testing.T) {
		req := testRequest()
		req.ClientName = "Claude\u202Eelcaro\u2066 \u200Bx"
		body := consent(t, req)
		for _, r := range []string{"\u202E", "\u2066", "\u200B"} {
			if strings.Contains(body, r) {
				t.Errorf("page contains %U", []rune(r)[0])
			}
		}
		if !strings.Contains(body, "Claude\uFFFDelcaro\uFFFD \uFFFDx") {
			t.Error("page lacks the name with the controls marked U+FFFD")
		}
	})
	t.Run("famous name, foreign host", func(t *testing.T) {
		req := testRequest()
		req.ClientName = "Claude"
		req.RedirectURI = "https://evil.example:8443/cb?x=1"
		body := consent(t, req)
		for _, want := range []string{`<p class="host">evil.example:8443</p>`, "cannot verify"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(body, `class="warn"`) {
			t.Error("an https redirect got the localhost warning")
		}
	})
	t.Run("long name", func(t *testing.T) {
		req := testRequest()
		req.ClientName = strings.Repeat("A", 500)
		body := consent(t, req)
		if strings.Contains(body, strings.Repeat("A", 81)) || !strings.Contains(body, strings.Repeat("A", 80)+"…") {
			t.Error("the name is not cut at 80 characters")
		}
	})
	t.Run("unnamed", func(t *testing.T) {
		req := testRequest()
		req.ClientName = " \u202E "
		if body := consent(t, req); !strings.Contains(body, "An unnamed app") && !strings.Contains(body, "\uFFFD") {
			t.Error("an empty name is shown empty")
		}
	})
	for _, tt := range []struct {
		name, redirect, host string
		warn                 string
	}{
		{"localhost", "http://localhost:33418/callback", "localhost:33418", "localhost"},
		{"127.0.0.1", "http://127.0.0.1:33418/callback", "127.0.0.1:33418", "localhost"},
		{"::1", "http://[::1]:33418/callback", "[::1]:33418", "localhost"},
		// Stored before registration refused these forms; browsers read them as loopback.
		{"https 127.1", "https://127.1/cb", "127.1", "localhost"},
		{"https 2130706433", "https://2130706433/cb", "2130706433", "localhost"},
		{"https localhost.", "https://localhost./cb", "localhost.", "localhost"},
		{"https app.localhost", "https://app.localhost/cb", "app.localhost", "localhost"},
		{"custom scheme", "cursor://anysphere.cursor-retrieval/oauth/callback", "cursor:", "an app installed"},
	} {
		t.Run("warning for "+tt.name, func(t *testing.T) {
			req := testRequest()
			req.RedirectURI = tt.redirect
			body := consent(t, req)
			if !strings.Contains(body, `<p class="host">`+tt.host+`</p>`) {
				t.Errorf("page lacks the host %q", tt.host)
			}
			if !strings.Contains(body, `class="warn"`) || !strings.Contains(body, tt.warn) {
				t.Errorf("page lacks the warning %q", tt.warn)
			}
		})
	}
	t.Run("metadata document host, scopes, buttons", func(t *testing.T) {
		req := testRequest()
		req.ClientID = "https://claude.ai/oauth/mcp-oauth-client-metadata"
		body := consent(t, req)
		for _, want := range []string{
			"published by <strong>claude.ai</strong>",
			"<code>memories:read</code>", "list, search and read your memories",
			"<code>memories:write</code>", "create, change and delete your memories",
			`<form method="post" action="/oauth/consent">`,
			`<button type="submit" name="action" value="deny">Deny</button>`,
			`<button type="submit" name="action" value="allow" class="primary delayed">Allow</button>`,
			`<a href="/oauth/logout">Sign out</a>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
	})
}

func TestConsentCSP(t *testing.T) {
	for _, tt := range []struct{ redirect, want string }{
		{"https://claude.ai/api/mcp/auth_callback", "https://claude.ai"},
		{"https://chatgpt.com/connector_platform_oauth_redirect", "https://chatgpt.com"},
		{"https://App.Example:8443/cb", "https://app.example:8443"},
		{"http://localhost:33418/callback", "http://localhost:33418"},
		{"http://127.0.0.1:33418/callback", "http://127.0.0.1:33418"},
		{"http://[::1]:33418/callback", "http:"},
		{"cursor://anysphere.cursor-retrieval/oauth/callback", "cursor:"},
		{"com.example.app:/callback", "com.example.app:"},
		{"https://a'b.example/cb", "https:"},
		{"https://a b.example/cb", ""},
		{"not a url", ""},
		{"", ""},
	} {
		t.Run(tt.redirect, func(t *testing.T) {
			if got := consentCSP(tt.redirect); got != tt.want {
				t.Errorf("consentCSP(%q) = %q, want %q", tt.redirect, got, tt.want)
			}
		})
	}
}

// TestPages_ConsoleDesign (issue 30, item 9): the sign-in and consent pages are drawn like the
// console's sign-in — every colour they name has the console's value, in light and in dark,
// and the text font is the console's — so that the two cannot drift into two products again.
func TestPages_ConsoleDesign(t *testing.T) {
	raw, err := os.ReadFile("../../app/console/static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	console := string(raw)
	pagesRaw, err := pageFS.ReadFile("pages.html")
	if err != nil {
		t.Fatal(err)
	}
	ours := string(pagesRaw)
	// vars reads the custom properties of css in light (before its dark block) and dark.
	vars := func(css string) (light, dark map[string]string) {
		re := regexp.MustCompile(`(--[a-z-]+):\s*([^;}\n]+)`)
		read := func(s string) map[string]string {
			m := map[string]string{}
			for _, g := range re.FindAllStringSubmatch(s, -1) {
				m[g[1]] = strings.TrimSpace(g[2])
			}
			return m
		}
		i := regexp.MustCompile(`prefers-color-scheme:\s*dark`).FindStringIndex(css)
		if i == nil {
			t.Fatal("no dark block")
		}
		return read(css[:i[0]]), read(css[i[0]:])
	}
	cLight, cDark := vars(console)
	oLight, oDark := vars(ours[:strings.Index(ours, "</style>")])
	for _, scheme := range []struct {
		name          string
		ours, console map[string]string
	}{{"light", oLight, cLight}, {"dark", oDark, cDark}} {
		if len(scheme.ours) < 8 {
			t.Errorf("%s: %d colours, want the console's palette", scheme.name, len(scheme.ours))
		}
		for k, v := range scheme.ours {
			if want, ok := scheme.console[k]; !ok || v != want {
				t.Errorf("%s %s = %s, console.css has %q", scheme.name, k, v, want)
			}
		}
	}
	font := regexp.MustCompile(`font:\s*(16px/1\.5 [^;]+);`)
	if c, o := font.FindStringSubmatch(console), font.FindStringSubmatch(ours); c == nil || o == nil || c[1] != o[1] {
		t.Errorf("body font %q, console's %q", o, c)
	}
	for _, want := range []string{`<header class="top"><div class="bar"><span class="brand">ownsona</span></div></header>`, `<div class="narrow">`} {
		if !strings.Contains(ours, want) {
			t.Errorf("pages.html lacks the console's %s", want)
		}
	}
}
