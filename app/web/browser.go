package web

// What a person who types the server's address into a browser sees (issue 30, item 2): `/`
// leads to the console, and /mcp, which answers clients with a JSON 401, shows a short page
// that says what it is and where to go instead. Clients never see either: MCP clients send
// Accept: application/json, text/event-stream (or only text/event-stream on a GET), scripts
// send none or application/json, and only a browser's navigation asks for text/html.

import (
	"html/template"
	"mime"
	"net/http"
	"strings"
)

// wantsHTML reports whether r is a browser's navigation: a GET or HEAD whose Accept lists
// text/html and not text/event-stream (what an MCP client's GET asks for).
func wantsHTML(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	html := false
	for _, a := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(a, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			switch {
			case err != nil:
			case mt == "text/event-stream":
				return false
			case mt == "text/html":
				html = true
			}
		}
	}
	return html
}

// serveRoot answers `/`: a browser is sent to the console when there is one; everything else
// (and any other unknown path) gets the JSON 404 as before.
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" && s.cfg.Console != nil {
		w.Header().Add("Vary", "Accept")
		if wantsHTML(r) {
			http.Redirect(w, r, "/console", http.StatusFound)
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no such endpoint; MCP is served at /mcp"})
}

// mcpPage is shown to a browser that opens the MCP endpoint without a token. It has no style
// and no script: the CSP of default-src 'none' holds.
var mcpPage = template.Must(template.New("mcp").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>ownsona — MCP endpoint</title></head>
<body>
<h1>ownsona</h1>
<p>This is the address an AI assistant connects to: add <code>{{.Endpoint}}</code> as a custom connector (MCP server) in Claude, ChatGPT or another client, and sign in when it asks.</p>
<ul>
{{- if .Console}}
<li><a href="/console">The owner's console</a>: your memories, connections and settings.</li>
{{- end}}
<li><a href="/docs">Documentation for developers of clients</a>.</li>
</ul>
</body>
</html>
`))

// writeMCPPage answers a browser's visit to the MCP endpoint: the same 401 and challenge a
// client gets, with a page for a person as the body.
func (s *Server) writeMCPPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Add("Vary", "Accept")
	w.WriteHeader(http.StatusUnauthorized)
	if r.Method == http.MethodHead {
		return
	}
	_ = mcpPage.Execute(w, struct {
		Endpoint string
		Console  bool
	}{s.auth.Endpoints().Issuer + r.URL.Path, s.cfg.Console != nil})
}
