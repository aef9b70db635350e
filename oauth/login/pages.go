package login

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/ownsona/ownsona/oauth/policy"
)

//go:embed pages.html
var pageFS embed.FS

var pages = template.Must(template.ParseFS(pageFS, "pages.html"))

// pageCSP is the Content-Security-Policy of every page: nothing loads,
// inline styles only, forms post to this origin, and no framing.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"

// setPageHeaders sets the headers every page response carries (SECURITY.md
// AS-21, AS-22). formAction, when not empty, is one more CSP source the
// page's forms may end up at (see consentCSP).
func setPageHeaders(h http.Header, formAction string) {
	csp := pageCSP
	if formAction != "" {
		csp = strings.Replace(csp, "form-action 'self'", "form-action 'self' "+formAction, 1)
	}
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
}

// render executes the named page into a buffer and writes it with status
// and the page headers; a template error becomes a plain 500.
func render(w http.ResponseWriter, status int, name, formAction string, data any) {
	var buf bytes.Buffer
	err := pages.ExecuteTemplate(&buf, name, data)
	setPageHeaders(w.Header(), formAction)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// WriteError writes the error page with status and message, with the same
// headers as every page. The authorization server uses it for requests that
// must not be redirected to the client (an unknown client or redirect URI,
// SECURITY.md AS-18). message is shown escaped.
func WriteError(w http.ResponseWriter, status int, message string) {
	render(w, status, "error", "", errorView{Title: http.StatusText(status), Message: message})
}

type errorView struct {
	Title, Message string
}

type loginView struct {
	Client  string
	Message string
	Action  string
	Txn     string
	CSRF    string
}

type consentView struct {
	Client     string
	ClientHost string // the host of a client ID metadata document URL, else ""
	Redirect   redirectView
	Scopes     []scopeView
	Message    string
	Action     string
	Txn        string
	CSRF       string
	Logout     string // the sign-out page
}

type logoutView struct {
	SignedIn bool
	Action   string
	CSRF     string
}

type redirectView struct {
	Host  string // scheme-less host[:port], or "scheme:" for an app's custom scheme
	Local bool   // a loopback host: a program on the owner's computer
	App   bool   // a custom scheme: an app installed on the device
}

type scopeView struct {
	Name, Desc string
}

func newLoginView(req wireReq, tok, csrf, msg string) loginView {
	return loginView{Client: displayName(req.ClientName), Message: msg, Action: PathLogin, Txn: tok, CSRF: csrf}
}

func newConsentView(req wireReq, tok, csrf, msg string) consentView {
	v := consentView{
		Client:   displayName(req.ClientName),
		Redirect: describeRedirect(req.RedirectURI),
		Message:  msg,
		Action:   PathConsent,
		Txn:      tok,
		CSRF:     csrf,
		Logout:   PathLogout,
	}
	if u, err := url.Parse(req.ClientID); err == nil && u.Scheme == "https" && u.Host != "" {
		v.ClientHost = policy.Displayable(u.Host, 253)
	}
	for _, s := range req.Scope {
		v.Scopes = append(v.Scopes, scopeView{Name: policy.Displayable(s, 64), Desc: scopeText[s]})
	}
	return v
}

var scopeText = map[string]string{
	policy.ScopeRead:  "list, search and read your memories",
	policy.ScopeWrite: "create, change and delete your memories",
	// Every grant stays until the owner revokes it; the line says so when the client asks.
	policy.ScopeOfflineAccess: "stay connected until you revoke its access (refresh tokens)",
}

// describeRedirect says where the browser goes after the decision.
func describeRedirect(raw string) redirectView {
	u, err := url.Parse(raw)
	if err != nil {
		return redirectView{Host: policy.Displayable(raw, 253)}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return redirectView{Host: policy.Displayable(u.Host, 253), Local: isLoopback(u.Hostname())}
	default:
		return redirectView{Host: policy.Displayable(u.Scheme, 64) + ":", App: true}
	}
}

// isLoopback reports whether a browser sent to host (a URL's Hostname)
// reaches the owner's computer, read the way browsers read it: 127.1,
// 2130706433, localhost. and app.localhost count too (policy.IsLoopbackHost).
func isLoopback(host string) bool {
	return policy.IsLoopbackHost(host)
}

// displayName is a client's self-declared name as shown: cleaned, at most
// 80 characters, "An unnamed app" if empty.
func displayName(s string) string {
	if s = policy.Displayable(s, 80); s == "" {
		return "An unnamed app"
	}
	return s
}

// consentCSP returns the extra form-action source for a consent page whose
// form ends in a 303 to redirectURI. Chrome and Safari check form-action
// against the redirects that follow a form submission too
// (w3c/webappsec-csp#8), so 'self' alone would block the way back to the
// client. The source is the redirect's origin when CSP can name it (a DNS
// name or IPv4 address with an optional port), else its scheme alone (an
// IPv6 literal, a custom scheme such as cursor:).
func consentCSP(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || !cspToken(u.Scheme, "+.-") {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return scheme + ":"
	}
	host, port := u.Hostname(), u.Port()
	if host == "" || !cspToken(host, ".-") || !digits(port) {
		return scheme + ":"
	}
	src := scheme + "://" + strings.ToLower(host)
	if port != "" {
		src += ":" + port
	}
	return src
}

// cspToken reports whether s is non-empty and made of ASCII letters, digits
// and the bytes in extra only.
func cspToken(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// digits reports whether s is made of ASCII digits only (or empty).
func digits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}
