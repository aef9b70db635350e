package doctor

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/oauth"
)

func boolp(b bool) *bool { return &b }

// goodTool is a tool with everything clients read.
func goodTool(name string, readOnly bool) Tool {
	return Tool{Name: name, Annotations: true, Title: strings.ToUpper(name[:1]) + name[1:], ReadOnly: boolp(readOnly),
		Destructive: boolp(false), Idempotent: boolp(readOnly), OpenWorld: boolp(false)}
}

func goodTools() []Tool {
	return []Tool{goodTool("remember", false), goodTool("recall", true), goodTool("search", true), goodTool("fetch", true)}
}

func TestRun_KnownClient(t *testing.T) {
	ca := mustCA(t)
	now := time.Now()
	cert := ca.issue(t, []string{"mem.example.com"}, now.Add(-time.Hour), now.Add(90*24*time.Hour))
	good := startSite(t, newGoodSite(t), cert)
	mismatched := newGoodSite(t)
	mismatched.prmMCP["authorization_servers"] = []any{"https://other.example", testOrigin}
	noCIMD := newGoodSite(t)
	noCIMD.as["client_id_metadata_document_supported"] = false
	badSite, noCIMDSite := startSite(t, mismatched, cert), startSite(t, noCIMD, cert)
	ep8443 := mustEndpoints(t, testOrigin+":8443")
	on8443 := newGoodSiteAt(t, testOrigin+":8443")
	on8443.mcp = func(w http.ResponseWriter, r *http.Request) {
		ep8443.Challenge(w, "", "memories:read memories:write")
		w.WriteHeader(http.StatusUnauthorized)
	}
	site8443 := startSite(t, on8443, cert)

	tests := []struct {
		name         string
		client       string
		addr         string // the site dialled; "" for good
		change       func(o *Options)
		fails, warns []string
		wantOK       []string
	}{
		{name: "claude, all good", client: "claude",
			wantOK: []string{
				"ok   claude: 4 tools, every name matches ^[a-zA-Z0-9_-]{1,64}$",
				"ok   claude: every tool has annotations with a title and the readOnlyHint, destructiveHint and idempotentHint",
				"ok   claude: registration accepts the redirect URIs https://claude.ai/api/mcp/auth_callback, https://claude.com/api/mcp/auth_callback",
				"ok   claude: client ID metadata documents from claude.ai are fetched",
				"ok   claude: issuer https://mem.example.com = authorization_servers[0], iss parameter supported",
				"ok   DNS mem.example.com", // --client claude implies --public
			}},
		{name: "chatgpt, all good", client: "chatgpt",
			wantOK: []string{"ok   chatgpt: search and fetch are offered, read-only",
				"ok   chatgpt: registration accepts the redirect URIs https://chatgpt.com/connector_platform_oauth_redirect"}},
		{name: "cursor, all good, no public URL", client: "cursor", change: func(o *Options) { o.PublicURL, o.TLS, o.Public = "", "off", false },
			wantOK: []string{"ok   cursor: registration accepts the redirect URIs cursor://anysphere.cursor-mcp/oauth/callback",
				"ok   cursor: no public URL: Cursor connects to serve on loopback"}},
		{name: "claude-code, all good", client: "claude-code", change: func(o *Options) { o.Public = false },
			wantOK: []string{"ok   claude-code: registration accepts the redirect URIs http://localhost:49152/callback",
				"ok   GET https://mem.example.com/.well-known/oauth-authorization-server: ", "ok   claude-code: issuer https://mem.example.com = authorization_servers[0]"}},
		{name: "unknown client", client: "copilot", fails: []string{`--client "copilot" is not a known client`}},
		{name: "bad tool names and missing annotations", client: "claude",
			change: func(o *Options) {
				o.Tools = append(o.Tools, Tool{Name: "memory.get"}, Tool{Name: "x", Annotations: true, ReadOnly: boolp(true)})
			},
			fails: []string{`claude: tool names "memory.get" do not match`, "claude: tools without annotations: memory.get",
				"claude: tools without annotations.title: x", "claude: tools without destructiveHint: x", "claude: tools without idempotentHint: x"},
			warns: []string{"claude: tools without openWorldHint: x"}},
		{name: "local clients only warn about tools", client: "cursor", change: func(o *Options) { o.Tools = append(o.Tools, Tool{Name: "bad name"}) },
			warns: []string{`cursor: tool names "bad name" do not match`, "cursor: tools without annotations: bad name"}},
		{name: "chatgpt without search and fetch", client: "chatgpt",
			change: func(o *Options) { o.Tools = []Tool{goodTool("recall", true), goodTool("fetch", false)} },
			fails:  []string{"chatgpt: no search tool", "chatgpt: the fetch tool is not annotated read-only"}},
		{name: "claude's callbacks outside the redirect host allowlist", client: "claude",
			change: func(o *Options) { o.RedirectHosts = []string{"claude.ai"} },
			fails:  []string{"claude: registration refuses Claude.ai's redirect URI https://claude.com/api/mcp/auth_callback"}},
		{name: "cursor's scheme not allowed", client: "cursor", change: func(o *Options) { o.RedirectSchemes = []string{} },
			fails: []string{"cursor: registration refuses Cursor's redirect URI cursor://anysphere.cursor-mcp/oauth/callback"}},
		{name: "claude.ai metadata documents not fetched", client: "claude", change: func(o *Options) { o.MetadataHosts = []string{"chatgpt.com"} },
			fails: []string{"claude: Claude.ai registers with a client ID metadata document from claude.ai, which OWNSONA_METADATA_HOSTS (chatgpt.com) leaves out"}},
		{name: "claude on another port", client: "claude", addr: site8443,
			change: func(o *Options) { o.PublicURL = "https://mem.example.com:8443" },
			fails:  []string{"claude: public URL https://mem.example.com:8443 uses port 8443: Claude.ai reaches servers on port 443 only"}},
		{name: "chatgpt on another port warns", client: "chatgpt", addr: site8443,
			change: func(o *Options) { o.PublicURL = "https://mem.example.com:8443" },
			warns:  []string{"chatgpt: public URL https://mem.example.com:8443 uses port 8443: ChatGPT is not known to reach other ports"}},
		{name: "claude behind a private address", client: "claude", change: func(o *Options) { o.Public, o.LookupIP = false, lookupStub("192.168.1.20") },
			fails: []string{"resolves to 192.168.1.20, a private address"}},
		{name: "authorization_servers[0] is not the issuer", client: "claude", addr: badSite,
			fails: []string{`claude: authorization_servers[0] "https://other.example" is not the issuer "https://mem.example.com" byte for byte`},
			warns: []string{"the two protected-resource documents differ"}},
		{name: "no CIMD", client: "claude", addr: noCIMDSite,
			fails: []string{"lacks client_id_metadata_document_supported: true", "claude: client_id_metadata_document_supported is not true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := good
			if tc.addr != "" {
				addr = tc.addr
			}
			o := goodOptions(t, addr, ca)
			o.KnownClient, o.Tools, o.RedirectSchemes = tc.client, goodTools(), []string{"cursor"}
			if tc.change != nil {
				tc.change(&o)
			}
			out, fails, warns := runDoctor(t, o)
			matchAll(t, "FAIL", fails, tc.fails, out)
			matchAll(t, "warn", warns, tc.warns, out)
			for _, want := range tc.wantOK {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestRun_KnownClientLoopback: for a local client and a loopback public URL, doctor fetches the
// discovery documents over plain HTTP, with no DNS or certificate checks.
func TestRun_KnownClientLoopback(t *testing.T) {
	site := newGoodSite(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { site.ServeHTTP(w, r) }))
	defer srv.Close()
	origin := srv.URL // http://127.0.0.1:PORT
	ep := mustEndpoints(t, origin)
	site.prm, site.prmMCP, site.as = mustDecode(t, ep.ProtectedResourceMetadata()), mustDecode(t, ep.ProtectedResourceMetadata()), mustDecode(t, ep.AuthorizationServerMetadata())
	site.mcp = func(w http.ResponseWriter, r *http.Request) {
		ep.Challenge(w, "", "memories:read memories:write")
		w.WriteHeader(http.StatusUnauthorized)
	}
	o := Options{DB: mustDB(t), PublicURL: origin, KnownClient: "claude-code", Tools: goodTools(), Timeout: 2 * time.Second}
	out, fails, warns := runDoctor(t, o)
	if len(fails) > 0 || len(warns) > 0 {
		t.Errorf("findings:\n%s", out)
	}
	for _, want := range []string{
		"ok   GET " + origin + "/.well-known/oauth-protected-resource/mcp: ",
		"ok   GET " + origin + "/.well-known/oauth-authorization-server: ",
		"ok   POST " + origin + "/mcp without a token: 401",
		"ok   claude-code: issuer " + origin + " = authorization_servers[0]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DNS ") || strings.Contains(out, "TLS ") {
		t.Errorf("network checks of a public site ran for a loopback URL:\n%s", out)
	}
}

func mustEndpoints(tb testing.TB, origin string) oauth.Endpoints {
	tb.Helper()
	ep, err := oauth.NewEndpoints(origin)
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}
