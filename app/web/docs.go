package web

// The page for developers of clients that the protected-resource metadata names as its
// resource_documentation (RFC 9728 §2): what this server's MCP endpoint is and how a client
// signs in, with this server's own URLs. It is served by the binary, so it always exists and
// always describes the version that answers.

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
)

var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ownsona: connecting a client</title></head>
<body>
<h1>ownsona: connecting a client</h1>
<p>A personal memory server for AI assistants, spoken to over the Model Context Protocol (MCP).
Its tools remember facts and recall them by meaning; <code>tools/list</code> describes each one.</p>

<h2>The MCP endpoint</h2>
<ul>
<li>Streamable HTTP: <code>{{.Resource}}</code>, also at {{range $i, $a := .Aliases}}{{if $i}} and {{end}}<code>{{$a}}</code>{{end}}
(each its own resource for discovery; a token obtained at one works at all).</li>
<li>Protocol revisions: {{range $i, $v := .Versions}}{{if $i}}, {{end}}{{$v}}{{end}}.</li>
<li>The legacy HTTP+SSE transport (2024-11-05): <code>{{.SSE}}</code>.</li>
<li>Server card: <code>{{.Card}}</code>. Health: <code>{{.Health}}</code>.</li>
</ul>

<h2>Signing in</h2>
<ul>
<li>OAuth 2.1. A request without a token is answered 401 with a <code>WWW-Authenticate</code> challenge
naming the protected-resource metadata (RFC 9728), e.g. <code>{{.PRM}}</code>, which names the
authorization server <code>{{.Issuer}}</code> (metadata: <code>{{.ASMeta}}</code>).</li>
<li>Clients register at <code>{{.Registration}}</code> (RFC 7591, public clients) or use an https
client ID metadata document from an allowed host.</li>
<li>Authorization code with PKCE S256 only; send <code>resource</code> (RFC 8707) naming the endpoint
you were given. The owner signs in and approves every client.</li>
<li>Scopes: {{range $i, $s := .Scopes}}{{if $i}}, {{end}}<code>{{$s}}</code>{{end}}
(<code>{{.Write}}</code> implies <code>{{.Read}}</code>).</li>
<li>Refresh tokens rotate on every use. The just-rotated one, presented again within a few minutes
while its successor is unused, gets that same successor; any later reuse revokes the grant.</li>
<li>Scripts use a personal access token that the owner creates (<code>ownsona token create</code>).</li>
<li>Tokens go in the <code>Authorization: Bearer</code> header, never in a URL.</li>
</ul>

<h2>Compatibility modes</h2>
<p>For clients written for other servers, the owner may switch on (<code>OWNSONA_COMPAT</code>, or the console's
settings): <code>once</code> (tokens in tool arguments, ONCE's server-card fields), <code>komcp</code>
(KOmcp's scopes, which grant <code>{{.Read}}</code>, the bare origin as a resource, refusals in KOmcp's shape) and
<code>sophon</code> (Sophon's dotted tool names, which Claude refuses: for Sophon's own clients). With any mode on,
legacy list results carry <code>nextCursor: ""</code> on their last page, which the TypeScript SDK v2 takes
for another page. On here: <strong>{{.Compat}}</strong>.</p>

<h2>Limits and headers</h2>
<ul>
<li>Requests are limited per token and per address: <code>X-RateLimit-Limit</code>,
<code>X-RateLimit-Remaining</code> and <code>X-RateLimit-Reset</code>; over the limit, 429 with
<code>Retry-After</code>.</li>
<li><code>X-API-Version</code> ({{.APIVersion}}) is the semantic version of this HTTP and MCP surface:
the major version changes when a client could break, the minor one for additions.</li>
</ul>
</body>
</html>
`))

// serveDocs serves the page.
func (s *Server) serveDocs(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	ep := s.auth.Endpoints()
	var aliases []string
	for _, a := range oauth.MCPAliases {
		aliases = append(aliases, ep.ResourceAt(a))
	}
	var buf bytes.Buffer
	err := docsPage.Execute(&buf, map[string]any{
		"Resource": ep.Resource, "Aliases": aliases, "Versions": mcp.AllProtocolVersions(),
		"SSE": ep.Issuer + "/mcp/sse", "Card": ep.Issuer + "/.well-known/mcp/server-card.json", "Health": ep.Issuer + "/health",
		"PRM": ep.ResourceMetadata, "Issuer": ep.Issuer, "ASMeta": ep.Issuer + "/.well-known/oauth-authorization-server",
		"Registration": ep.Registration, "Scopes": policy.DefaultScopes, "Read": policy.ScopeRead, "Write": policy.ScopeWrite,
		"APIVersion": APIVersion, "Compat": s.Compat().String(),
	})
	if err != nil {
		s.log.Error().Err(err).Msg("render the docs page")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_error"})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(buf.Bytes())
}
