package doctor

// doctor --client: the rules a known client is seen to apply (E2E-NOTES "What real clients send
// and expect"), checked against ownsona's tools, its redirect URI policy and, over the
// network, its discovery documents.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/oauth"
)

// Tool is a tool as clients see it in tools/list: its name and annotations.
type Tool struct {
	Name string
	// Annotations is false when the tool has none at all.
	Annotations bool
	// Title is annotations.title (Anthropic's connector directory reads it there, not only the
	// top-level title).
	Title string
	// The hints; nil when the tool does not say.
	ReadOnly, Destructive, Idempotent, OpenWorld *bool
}

// Clients are the names --client takes.
var Clients = []string{"claude", "chatgpt", "claude-code", "cursor"}

// clientRules is what one client is known to need.
type clientRules struct {
	name string // as people know it
	// hosted clients connect from their own servers on the internet: the network checks of
	// Options.Public always run, and the port must be 443 (port443 fail) or should be (warn).
	hosted  bool
	port443 level
	// toolLevel is how a tool that breaks the name pattern or lacks annotations counts: the
	// connector directories and model APIs refuse them (fail), local clients cope (warn).
	toolLevel level
	// searchFetch: ChatGPT accepts a connector outside developer mode only with read-only
	// search and fetch tools, and its deep research uses only those.
	searchFetch bool
	// metadataHost, when set, is the host whose client ID metadata document the client
	// registers with (CIMD): it must be fetched, and the server must say it supports them.
	metadataHost string
	// redirects are the callbacks the client is seen to use; registration must accept them.
	redirects []string
}

var clientTable = map[string]clientRules{
	"claude": {name: "Claude.ai", hosted: true, port443: fail, toolLevel: fail, metadataHost: "claude.ai",
		redirects: []string{"https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"}},
	"chatgpt": {name: "ChatGPT", hosted: true, port443: warn, toolLevel: fail, searchFetch: true,
		redirects: []string{"https://chatgpt.com/connector_platform_oauth_redirect", "https://chatgpt.com/connector/oauth/example"}},
	"claude-code": {name: "Claude Code", toolLevel: warn,
		redirects: []string{"http://localhost:49152/callback", "http://127.0.0.1:49152/callback"}},
	"cursor": {name: "Cursor", toolLevel: warn,
		redirects: []string{"cursor://anysphere.cursor-mcp/oauth/callback"}},
}

// toolNamePattern is the tool name every model API and connector directory accepts.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// defaultMetadataHosts are serve's default OWNSONA_METADATA_HOSTS, for Options.MetadataHosts nil.
var defaultMetadataHosts = []string{"claude.ai", "claude.com", "chatgpt.com"}

// knownClient returns the rules of the client named name.
func knownClient(name string) (clientRules, bool) {
	r, ok := clientTable[name]
	return r, ok
}

// checkClient checks what the client of Options.KnownClient needs of the tools, the redirect URI
// policy and the discovery documents (when the network checks fetched them).
func (c *checker) checkClient(s site, siteOK bool) {
	r, ok := knownClient(c.o.KnownClient)
	if !ok {
		c.report(fail, fmt.Sprintf("--client %q is not a known client", c.o.KnownClient), "use one of "+strings.Join(Clients, ", "))
		return
	}
	prefix := c.o.KnownClient + ": "
	c.checkToolNames(prefix, r)
	c.checkAnnotations(prefix, r)
	if r.searchFetch {
		c.checkSearchFetch(prefix)
	}
	c.checkRedirects(prefix, r)
	if r.metadataHost != "" {
		c.checkMetadataHost(prefix, r)
	}
	switch {
	case !siteOK && !r.hosted:
		c.okf("%sno public URL: %s connects to serve on loopback (http://127.0.0.1:PORT/mcp) or runs ownsona stdio", prefix, r.name)
		return
	case !siteOK:
		return // checkConfig said what to change
	}
	if r.hosted && s.port != "443" {
		why := fmt.Sprintf("%s reaches servers on port 443 only", r.name)
		if r.port443 != fail {
			why = fmt.Sprintf("%s is not known to reach other ports", r.name)
		}
		c.report(r.port443, fmt.Sprintf("%spublic URL %s uses port %s: %s", prefix, s.url, s.port, why),
			"serve on port 443 (forward 443 to serve, or --addr :443 with --tls acme), or put a tunnel or proxy on 443 in front, and drop the port from OWNSONA_PUBLIC_URL")
	}
	c.checkIssuerIdentity(prefix, s, r)
}

// checkToolNames checks every tool name against toolNamePattern.
func (c *checker) checkToolNames(prefix string, r clientRules) {
	if len(c.o.Tools) == 0 {
		c.report(fail, prefix+"no tools to check", "OWNSONA_TOOLS hides every tool: remove it, or list the tools to offer")
		return
	}
	var bad []string
	for _, t := range c.o.Tools {
		if !toolNamePattern.MatchString(t.Name) {
			bad = append(bad, fmt.Sprintf("%q", t.Name))
		}
	}
	if len(bad) > 0 {
		c.report(r.toolLevel, fmt.Sprintf("%stool names %s do not match %s: %s refuses them", prefix, strings.Join(bad, ", "), toolNamePattern, r.name),
			"hide them with OWNSONA_TOOLS, or upgrade ownsona")
		return
	}
	c.okf("%s%d tools, every name matches %s", prefix, len(c.o.Tools), toolNamePattern)
}

// checkAnnotations checks that every tool has annotations with a title and the read-only,
// destructive and idempotent hints (and, less strictly, openWorldHint).
func (c *checker) checkAnnotations(prefix string, r clientRules) {
	missing := map[string][]string{}
	var order []string
	add := func(what, tool string) {
		if missing[what] == nil {
			order = append(order, what)
		}
		missing[what] = append(missing[what], tool)
	}
	var openWorld []string
	for _, t := range c.o.Tools {
		switch {
		case !t.Annotations:
			add("annotations", t.Name)
			continue
		case t.Title == "":
			add("annotations.title", t.Name)
		}
		if t.ReadOnly == nil {
			add("readOnlyHint", t.Name)
		}
		if t.Destructive == nil {
			add("destructiveHint", t.Name)
		}
		if t.Idempotent == nil {
			add("idempotentHint", t.Name)
		}
		if t.OpenWorld == nil {
			openWorld = append(openWorld, t.Name)
		}
	}
	for _, what := range order {
		c.report(r.toolLevel, fmt.Sprintf("%stools without %s: %s", prefix, what, strings.Join(missing[what], ", ")),
			fmt.Sprintf("%s reads annotations.title and the readOnlyHint, destructiveHint and idempotentHint of every tool to decide what to ask before a call: upgrade ownsona", r.name))
	}
	if len(openWorld) > 0 {
		c.report(warn, fmt.Sprintf("%stools without openWorldHint: %s", prefix, strings.Join(openWorld, ", ")),
			"clients assume an open world without it and may ask more often: upgrade ownsona")
	}
	if len(order) == 0 && len(c.o.Tools) > 0 {
		c.okf("%severy tool has annotations with a title and the readOnlyHint, destructiveHint and idempotentHint", prefix)
	}
}

// checkSearchFetch checks that the search and fetch tools ChatGPT needs are offered, read-only.
func (c *checker) checkSearchFetch(prefix string) {
	problems := c.problems
	for _, name := range []string{"search", "fetch"} {
		i := slices.IndexFunc(c.o.Tools, func(t Tool) bool { return t.Name == name })
		switch {
		case i < 0:
			c.report(fail, fmt.Sprintf("%sno %s tool: ChatGPT accepts a connector outside developer mode only with search and fetch, and its deep research uses only those", prefix, name),
				"if OWNSONA_TOOLS is set, add search,fetch to it; otherwise upgrade ownsona")
		case c.o.Tools[i].ReadOnly == nil || !*c.o.Tools[i].ReadOnly:
			c.report(fail, fmt.Sprintf("%sthe %s tool is not annotated read-only", prefix, name),
				"ChatGPT expects search and fetch to be read-only (readOnlyHint: true): upgrade ownsona")
		}
	}
	if c.problems == problems {
		c.okf("%ssearch and fetch are offered, read-only", prefix)
	}
}

// checkRedirects checks that registration accepts the client's callbacks.
func (c *checker) checkRedirects(prefix string, r clientRules) {
	var ok []string
	for _, u := range r.redirects {
		err := oauth.CheckRedirectURI(u, c.o.RedirectSchemes, c.o.RedirectHosts)
		if err == nil {
			ok = append(ok, u)
			continue
		}
		fix := "check OWNSONA_REDIRECT_SCHEMES and OWNSONA_REDIRECT_HOSTS"
		switch {
		case strings.HasPrefix(u, "https://") && len(c.o.RedirectHosts) > 0:
			host := strings.SplitN(strings.TrimPrefix(u, "https://"), "/", 2)[0]
			fix = fmt.Sprintf("add %s to OWNSONA_REDIRECT_HOSTS (or unset it)", host)
		case !strings.HasPrefix(u, "http"):
			scheme, _, _ := strings.Cut(u, ":")
			fix = fmt.Sprintf("add %s to OWNSONA_REDIRECT_SCHEMES", scheme)
		}
		c.report(fail, fmt.Sprintf("%sregistration refuses %s's redirect URI %s (%v)", prefix, r.name, u, err), fix)
	}
	if len(ok) == len(r.redirects) {
		c.okf("%sregistration accepts the redirect URIs %s", prefix, strings.Join(ok, ", "))
	}
}

// checkMetadataHost checks that the client's metadata document would be fetched.
func (c *checker) checkMetadataHost(prefix string, r clientRules) {
	hosts := c.o.MetadataHosts
	if hosts == nil {
		hosts = defaultMetadataHosts
	}
	if !slices.Contains(hosts, r.metadataHost) {
		c.report(fail, fmt.Sprintf("%s%s registers with a client ID metadata document from %s, which OWNSONA_METADATA_HOSTS (%s) leaves out", prefix, r.name, r.metadataHost, strings.Join(hosts, ", ")),
			fmt.Sprintf("add %s to OWNSONA_METADATA_HOSTS", r.metadataHost))
		return
	}
	c.okf("%sclient ID metadata documents from %s are fetched", prefix, r.metadataHost)
}

// checkIssuerIdentity checks, in the documents the network checks fetched, what clients compare
// byte for byte: the issuer, authorization_servers[0] and the iss parameter.
func (c *checker) checkIssuerIdentity(prefix string, s site, r clientRules) {
	if c.as == nil || c.prm == nil {
		return // the network checks said why
	}
	problems := c.problems
	doc := asResourceDoc(c.prm)
	first := ""
	if len(doc.AuthorizationServers) > 0 {
		first = doc.AuthorizationServers[0]
	}
	switch {
	case first != c.as.Issuer:
		c.report(fail, fmt.Sprintf("%sauthorization_servers[0] %q is not the issuer %q byte for byte", prefix, first, c.as.Issuer),
			r.name+" refuses the authorization server when they differ: "+fixRunning)
	case strings.HasSuffix(c.as.Issuer, "/"):
		c.report(fail, fmt.Sprintf("%sthe issuer %q ends with a slash", prefix, c.as.Issuer), "write OWNSONA_PUBLIC_URL without the final slash")
	}
	if !c.as.ISSParameterSupported {
		c.report(fail, prefix+"authorization_response_iss_parameter_supported is not true", r.name+" checks the iss parameter of the authorization response (RFC 9207): "+fmt.Sprintf(fixOtherServer, s.issuer+"/.well-known/oauth-authorization-server"))
	}
	if r.metadataHost != "" && !c.as.ClientIDMetadataSupported {
		c.report(fail, prefix+"client_id_metadata_document_supported is not true", r.name+" registers by client ID metadata document: "+fmt.Sprintf(fixOtherServer, s.issuer+"/.well-known/oauth-authorization-server"))
	}
	if c.problems == problems {
		c.okf("%sissuer %s = authorization_servers[0], iss parameter supported", prefix, c.as.Issuer)
	}
}

// docsOnly fetches the discovery documents and checks the 401 without the DNS and TLS checks:
// what a local client reads, at a loopback URL or at the public one.
func (c *checker) docsOnly(ctx context.Context, s site) {
	c.prm = c.checkResourceDoc(ctx, s, s.issuer+"/.well-known/oauth-protected-resource/mcp", s.resource, "/mcp", fail)
	c.checkServerDoc(ctx, s)
	c.checkChallenge(ctx, s, c.prm)
}
