package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ownsona/ownsona/app/settings"
)

// setTools makes names the allowlist through the run-time settings, as the console does.
func setTools(tb testing.TB, a *App, names ...string) {
	tb.Helper()
	s := a.Settings().Get()
	s.Tools = names
	if err := a.Settings().Set(context.Background(), s); err != nil {
		tb.Fatalf("set the allowlist to %v: %v", names, err)
	}
}

// listed returns the names (or URIs) of a list method's items, in order.
func listed(tb testing.TB, a *App, method, member, field string, header ...string) []string {
	tb.Helper()
	rec := mcpRequest(a.Handler(), "Bearer "+patFor(tb, a), `{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`, header...)
	res, rerr, _ := rpcResponse(tb, rec.Body.Bytes())
	if rerr != nil {
		tb.Fatalf("%s: %+v", method, rerr)
	}
	var out map[string][]map[string]any
	json.Unmarshal(res, &out)
	var names []string
	for _, it := range out[member] {
		names = append(names, it[field].(string))
	}
	return names
}

// TestSettings_Allowlist: the allowlist changed in the settings is in force from the next
// request, in both eras, for tools, prompts and resources alike, and the file keeps it.
func TestSettings_Allowlist(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	a := MustOpen(t, cfg)
	if got := listed(t, a, "tools/list", "tools", "name"); len(got) != len(allTools) {
		t.Fatalf("tools/list = %v, want every tool", got)
	}
	setTools(t, a, "remember", "recall")
	modern := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}
	for _, tc := range []struct {
		what                  string
		method, member, field string
		header                []string
		want                  []string
	}{
		{"tools", "tools/list", "tools", "name", nil, []string{"remember", "recall"}},
		{"prompts", "prompts/list", "prompts", "name", nil, []string{"recall-context"}},
		{"resources", "resources/list", "resources", "uri", nil, []string{"ui://ownsona/memories.html"}},
		{"templates", "resources/templates/list", "resourceTemplates", "uriTemplate", nil, nil},
	} {
		if got := listed(t, a, tc.method, tc.member, tc.field, tc.header...); !slices.Equal(got, tc.want) {
			t.Errorf("%s after the change = %v, want %v", tc.what, got, tc.want)
		}
	}
	rec := mcpRequest(a.Handler(), "Bearer "+patFor(t, a), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}}}}`, modern...)
	if got := listedTools(t, rec); !slices.Equal(got, []string{"recall", "remember"}) {
		t.Errorf("2026-07-28 tools/list = %v", got)
	}
	if code, _ := callToolCode(t, a, "forget"); code != -32000 {
		t.Errorf("forget after the change: code %d, want -32000", code)
	}

	a.Close()
	b := MustOpen(t, cfg)
	if got := listed(t, b, "tools/list", "tools", "name"); !slices.Equal(got, []string{"remember", "recall"}) {
		t.Errorf("after a restart tools/list = %v, want the stored allowlist", got)
	}
	setTools(t, b)
	if got := listed(t, b, "tools/list", "tools", "name"); len(got) != len(allTools) {
		t.Errorf("with the allowlist emptied: %v, want every tool", got)
	}
}

// callToolCode calls a tool with no arguments and returns the JSON-RPC error code (0 if none).
func callToolCode(tb testing.TB, a *App, name string) (int, string) {
	tb.Helper()
	_, body := rpcPost(tb, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{"id":1}}}`)
	_, rerr, _ := rpcResponse(tb, lastMessage(body))
	if rerr == nil {
		return 0, ""
	}
	return rerr.Code, rerr.Message
}

// TestSettings_Fixed: a setting given by a flag or the environment wins over the file and
// cannot be changed at run time; the console is told where it comes from.
func TestSettings_Fixed(t *testing.T) {
	db := t.TempDir() + "/ownsona.db"
	cfg, _, err := loadConfig("serve", []string{"--db", db, "--rate-limit", "60"}, func(k string) string {
		return map[string]string{"OWNSONA_TOOLS": "recall,remember"}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.LoginPassword, cfg.LogLevel, cfg.PublicURL = testPassword, "error", "http://127.0.0.1"
	a := MustOpen(t, cfg)
	want := map[string]string{settings.Tools: "OWNSONA_TOOLS", settings.RateLimit: "flag --rate-limit"}
	if got := a.Settings().Fixed(); len(got) != 2 || got[settings.Tools] != want[settings.Tools] || got[settings.RateLimit] != want[settings.RateLimit] {
		t.Errorf("Fixed = %v, want %v", got, want)
	}
	s := a.Settings().Get()
	s.Tools = []string{"recall"}
	var fe *settings.FixedError
	if err := a.Settings().Set(context.Background(), s); !errors.As(err, &fe) || fe.Setting != settings.Tools || fe.Source != "OWNSONA_TOOLS" {
		t.Errorf("Set of the allowlist: %v, want a FixedError naming OWNSONA_TOOLS", err)
	}
	if got := listed(t, a, "tools/list", "tools", "name"); !slices.Equal(got, []string{"remember", "recall"}) {
		t.Errorf("tools/list = %v, want the variable's allowlist", got)
	}
}

// TestSettings_RateLimit: a rate limit changed in the settings applies to /mcp at once — on,
// lowered, raised and off — and is kept in the file for the next start.
func TestSettings_RateLimit(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.RateLimit = 120 // the default: not fixed
	a := MustOpen(t, cfg)
	pat := testPAT(t, a)
	// codes sends n tools/list requests with the token and returns their statuses.
	codes := func(a *App, n int) []int {
		var got []int
		for range n {
			got = append(got, mcpRequest(a.Handler(), "Bearer "+pat, msgToolsList).Code)
		}
		return got
	}
	set := func(limit, burst int) {
		t.Helper()
		s := a.Settings().Get()
		s.RateLimit, s.RateBurst = limit, burst
		if err := a.Settings().Set(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	ok, limited := http.StatusOK, http.StatusTooManyRequests
	if got := codes(a, 1); !slices.Equal(got, []int{ok}) {
		t.Fatalf("before the change: %v", got)
	}
	for _, step := range []struct {
		name         string
		limit, burst int
		want         []int
	}{
		// The token made a request at 120/min already: one of the new burst of 3 is used.
		{"lowered", 1, 3, []int{ok, ok, limited, limited}},
		{"raised", 120, 20, []int{ok, ok, ok, ok}},
		{"off", 0, 20, slices.Repeat([]int{ok}, 30)},
		{"on again", 1, 2, []int{ok, ok, limited}},
	} {
		set(step.limit, step.burst)
		if got := codes(a, len(step.want)); !slices.Equal(got, step.want) {
			t.Errorf("%s to %d/min burst %d: %v, want %v", step.name, step.limit, step.burst, got, step.want)
		}
	}
	a.Close()
	b := MustOpen(t, cfg)
	if pm, burst := b.limiter.Rate(); pm != 1 || burst != 2 {
		t.Errorf("after a restart: %d/min burst %d, want the stored 1/min burst 2", pm, burst)
	}
}

// listChanges collects the list_changed notifications a Go SDK client receives.
type listChanges struct{ tools, prompts, resources chan struct{} }

func newListChanges() *listChanges {
	return &listChanges{make(chan struct{}, 16), make(chan struct{}, 16), make(chan struct{}, 16)}
}

func (l *listChanges) options() *mcp.ClientOptions {
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { signal(l.tools) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { signal(l.prompts) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { signal(l.resources) },
	}
}

// TestSettings_ListChanged: a connected Go SDK client is told when the allowlist changes —
// notifications/tools/list_changed, and prompts and resources with it — over the session's
// GET stream in the legacy era and its subscriptions/listen stream in 2026-07-28, and its
// next tools/list shows the new list.
func TestSettings_ListChanged(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cfg := testConfig(t, nil)
			cfg.PublicURL = ""
			a := MustOpen(t, cfg)
			if err := a.Listen(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			changes := newListChanges()
			s := sdkClient(t, ctx, "http://"+a.Addr()+"/mcp", testPAT(t, a), era.pin, changes.options())
			init := s.InitializeResult()
			if init.ProtocolVersion != era.want {
				t.Fatalf("the session speaks %s, want %s", init.ProtocolVersion, era.want)
			}
			caps := init.Capabilities
			if !caps.Tools.ListChanged || !caps.Prompts.ListChanged || !caps.Resources.ListChanged {
				t.Errorf("capabilities do not announce list changes: tools %+v prompts %+v resources %+v", caps.Tools, caps.Prompts, caps.Resources)
			}
			if got := sdkToolNames(t, ctx, s); len(got) != len(allTools) {
				t.Fatalf("tools before = %v", got)
			}
			// The SDK opens its stream in the background: change the allowlist until the
			// notification comes (a change before the stream is up has no way to arrive).
			deadline := time.Now().Add(2 * time.Minute)
			for i := 0; ; i++ {
				if i%2 == 0 {
					setTools(t, a, "remember", "recall")
				} else {
					setTools(t, a)
				}
				select {
				case <-changes.tools:
				case <-time.After(250 * time.Millisecond):
					if time.Now().After(deadline) {
						t.Fatalf("no notifications/tools/list_changed after %d changes", i+1)
					}
					continue
				}
				break
			}
			for _, c := range []struct {
				kind string
				ch   chan struct{}
			}{{"prompts", changes.prompts}, {"resources", changes.resources}} {
				select {
				case <-c.ch:
				case <-time.After(2 * time.Minute):
					t.Errorf("no notifications/%s/list_changed", c.kind)
				}
			}
			setTools(t, a, "remember")
			select {
			case <-changes.tools:
			case <-time.After(2 * time.Minute):
				t.Fatal("no notifications/tools/list_changed for the second change")
			}
			if got := sdkToolNames(t, ctx, s); !slices.Equal(got, []string{"remember"}) {
				t.Errorf("tools after the change = %v, want [remember]", got)
			}
		})
	}
}
