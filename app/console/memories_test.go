package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

var itemRE = regexp.MustCompile(`name="id" value="(\d+)"`)

// listed returns the ids of the memories a list page shows, in order.
func listed(body string) []uint64 {
	var ids []uint64
	for _, m := range itemRE.FindAllStringSubmatch(body, -1) {
		id, _ := strconv.ParseUint(m[1], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

// TestConsole_Memories: the list is newest first and paged; a search by meaning ranks as
// Store.Search (recall) does; a search by exact text and the filters narrow it.
func TestConsole_Memories(t *testing.T) {
	f := MustOpen(t, withEmbedder(vector.NewBuiltin()))
	var filler []string
	for i := range 22 {
		filler = append(filler, fmt.Sprintf("Note number %d about the garden", i))
	}
	f.remember(t, []string{"garden"}, filler...)
	son := f.remember(t, []string{"family"}, "My son lives in Los Angeles", "My son plays the violin")
	coffee := f.remember(t, nil, "I take my coffee black")[0]
	res, _, err := f.mem.Remember(context.Background(), []memory.Draft{{Text: "Prefers window seats on planes"}}, memory.Origin{Provider: "chatgpt", Client: "Travel app"})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	travel := res[0].ID
	if _, err := f.mem.Forget([]uint64{coffee}, memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	<-f.mem.IndexReady()
	b := f.signedIn(t)

	body := b.page(t, "/console/memories")
	first := listed(body)
	if len(first) != 20 || first[0] != travel || !slices.IsSortedFunc(first, func(a, b uint64) int { return int(b) - int(a) }) {
		t.Fatalf("first page: %v, want 20 ids, newest (%d) first", first, travel)
	}
	wantContains(t, "the first page", body, `Newest first <span class="count">(25)</span>`, `href="/console/memories?page=1"`)
	second := listed(b.page(t, "/console/memories?page=1"))
	if len(second) != 5 || slices.Contains(second, coffee) || slices.ContainsFunc(second, func(id uint64) bool { return slices.Contains(first, id) }) {
		t.Errorf("second page: %v, want the 5 others, without the forgotten %d", second, coffee)
	}

	// By meaning: the same ranking as Store.Search, which recall uses.
	const question = "where does my son live?"
	want := f.mem.Search(context.Background(), memory.Query{Text: question, Limit: 20})
	var wantIDs []uint64
	for _, m := range want.Matches {
		wantIDs = append(wantIDs, m.Memory.ID)
	}
	body = b.page(t, "/console/memories?q="+url.QueryEscape(question))
	if got := listed(body); !slices.Equal(got, wantIDs) || got[0] != son[0] {
		t.Errorf("search by meaning: %v, want Store.Search's %v, led by %d", got, wantIDs, son[0])
	}
	wantContains(t, "the results", body, "score ", `value="where does my son live?"`)

	lists := func(name, query string, want ...uint64) scenario {
		return scenario{Name: name, Method: http.MethodGet, URL: "/console/memories" + query, WantStatus: http.StatusOK,
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if got := listed(rec.Body.String()); !slices.Equal(got, want) {
					t.Errorf("%v, want %v", got, want)
				}
			}}
	}
	signedIn.RunOn(t, b, []scenario{
		lists("exact text", "?mode=text&q=VIOLIN", son[1:]...),
		lists("exact text, none", "?mode=text&q=bicycle"),
		lists("tag", "?tag=Family", son[1], son[0]),
		lists("client", "?client="+url.QueryEscape("Travel app"), travel),
		lists("forgotten too", "?all=1&mode=text&q=coffee", coffee),
		{Name: "meaning with a tag", Method: http.MethodGet, URL: "/console/memories?tag=family&q=" + url.QueryEscape("music lessons"), WantStatus: http.StatusOK,
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if got := listed(rec.Body.String()); len(got) == 0 || slices.ContainsFunc(got, func(id uint64) bool { return !slices.Contains(son, id) }) {
					t.Errorf("%v, want only memories tagged family", got)
				}
			}},
		lists("dates", "?from=2000-01-01&to=2000-01-02"),
	})
	body = b.page(t, "/console/memories?tag=!!")
	wantContains(t, "a bad tag filter", body, "The tag filter was ignored")
}

// TestConsole_Edit: the edit form changes text, tags, importance and expiry through
// Store.Update (the OnChange hooks hear it); a refused value shows the form again with what was
// typed, and nothing changes.
func TestConsole_Edit(t *testing.T) {
	f := MustOpen(t)
	id := f.remember(t, []string{"home"}, "Lives in Porto")[0]
	var mu sync.Mutex
	var heard []uint64
	f.mem.OnChange(func(ids []uint64) { mu.Lock(); heard = append(heard, ids...); mu.Unlock() })
	b := f.signedIn(t)
	page := b.page(t, memURL(id))
	wantContains(t, "the memory page", page, "Lives in Porto", `name="text"`, `value="home"`, `name="importance"`, `name="expires"`)

	expires := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Minute)
	body := b.mustPost(t, memURL(id), url.Values{"text": {"Lives in Lisbon\r\nsince 2024"}, "tags": {"Home, Kids"},
		"importance": {"0.8"}, "expires": {expires.Format("2006-01-02T15:04")}})
	wantContains(t, "the page after saving", body, "Saved (text, tags, importance, expires at).")
	m := f.get(t, id)
	if m.Text != "Lives in Lisbon\nsince 2024" || !slices.Equal(m.Tags, []string{"home", "child"}) || m.Importance != 0.8 || m.ExpiresAt == nil || !m.ExpiresAt.Equal(expires) {
		t.Errorf("after the edit: %+v", m)
	}
	mu.Lock()
	// The edit and the memory that keeps the text it replaced (SECURITY.md AG-01).
	if !slices.Equal(heard, []uint64{id, id + 1}) {
		t.Errorf("OnChange heard %v, want [%d %d]: MCP subscribers are told of console edits", heard, id, id+1)
	}
	mu.Unlock()

	saved := f.snapshot(t)
	refused := func(name string, form url.Values, want ...string) scenario {
		return scenario{Name: name, Method: http.MethodPost, URL: memURL(id), FormFor: withCSRF(form),
			WantStatus: http.StatusUnprocessableEntity, WantBody: want,
			After: func(t *testing.T, _ *browser, _ *httptest.ResponseRecorder) {
				if f.snapshot(t) != saved {
					t.Error("a refused edit changed the memory")
				}
			}}
	}
	signedIn.RunOn(t, b, []scenario{
		refused("secret", url.Values{"text": {"my key is AKIAIOSFODNN7EXAMPLE"}, "tags": {"home"}, "importance": {"0.8"}}, "looks like a secret"),
		refused("importance", url.Values{"text": {"Lives in Lisbon"}, "tags": {"home"}, "importance": {"lots"}},
			"importance must be a number from 0 to 1.", `value="lots"`), // the form keeps what was typed
		refused("tag", url.Values{"text": {"Lives in Lisbon"}, "tags": {"home, !"}, "importance": {"0.8"}}, "tags[0] "),
		refused("past expiry", url.Values{"text": {"Lives in Lisbon"}, "tags": {"home"}, "importance": {"0.8"}, "expires": {"2001-01-01T00:00"}}, "is not in the future"),
		refused("empty text", url.Values{"text": {"  "}, "tags": {"home"}, "importance": {"0.8"}}, "text is empty."),
	})
	body = b.mustPost(t, memURL(id), url.Values{"text": {m.Text}, "tags": {"home, child"}, "importance": {"0.8"}, "expires": {""}})
	wantContains(t, "clearing the expiry", body, "Saved (expires at).")
	if f.get(t, id).ExpiresAt != nil {
		t.Error("the expiry was not cleared")
	}
	body = b.mustPost(t, memURL(id), url.Values{"text": {m.Text}, "tags": {"home,child"}, "importance": {"0.8"}})
	wantContains(t, "saving unchanged values", body, "Nothing changed.")
	if got := f.entries(t); !slices.Equal(got, []string{"console/update ok", "console/update error", "console/update error", "console/update error",
		"console/update error", "console/update error", "console/update ok", "console/update ok"}) {
		t.Errorf("audit log: %v", got)
	}
}

// TestConsole_EditAtQuota: an edit refused at a quota says which and what to do (SECURITY.md
// ST-13), as the tools' LIMIT_EXCEEDED does, not "internal error".
func TestConsole_EditAtQuota(t *testing.T) {
	f := MustOpen(t, func(o *options) { o.maxMems = 1 })
	id := f.remember(t, []string{"home"}, "Lives in Porto")[0]
	b := f.signedIn(t)
	w := b.post(memURL(id), url.Values{"text": {"Lives in Lisbon"}, "tags": {"home"}, "importance": {"0.5"}})
	if w.Code != http.StatusUnprocessableEntity {
		t.Errorf("status %d, want 422", w.Code)
	}
	wantContains(t, "the refused edit", w.Body.String(), "Not saved: the database holds 1 memories", "raise max-memories.")
	wantNotContains(t, "the refused edit", w.Body.String(), "internal error")
}

// TestConsole_ForgetRestore: forget puts a memory in the trash, restore brings it back, delete
// forever erases one in the trash, and emptying the trash needs its box ticked.
func TestConsole_ForgetRestore(t *testing.T) {
	f := MustOpen(t)
	ids := f.remember(t, nil, "Works at Acme", "Works at Globex", "Old phone number ends in 42")
	a, g, phone := ids[0], ids[1], ids[2]
	b := f.signedIn(t)

	body := b.mustPost(t, memURL(a)+"/forget", url.Values{"reason": {"changed jobs"}})
	wantContains(t, "the page after forgetting", body, fmt.Sprintf("Memory %d is forgotten.", a), "forgotten", "changed jobs", ">Restore</button>", ">Delete forever</button>")
	wantNotContains(t, "a forgotten memory's page", body, `name="text"`)
	if m := f.get(t, a); !m.Deleted() || m.ForgetReason != "changed jobs" {
		t.Errorf("after forget: %+v", m)
	}
	if got := listed(b.page(t, "/console/trash")); !slices.Equal(got, []uint64{a}) {
		t.Errorf("trash: %v, want [%d]", got, a)
	}
	if got := listed(b.page(t, "/console/memories")); slices.Contains(got, a) {
		t.Errorf("the list shows the forgotten %d: %v", a, got)
	}
	w := b.post(memURL(a), url.Values{"text": {"Works at Initech"}, "tags": {""}, "importance": {"0.5"}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "was forgotten") {
		t.Errorf("editing a forgotten memory: %d, want 422\n%s", w.Code, w.Body)
	}

	body = b.mustPost(t, memURL(a)+"/restore", nil)
	wantContains(t, "the page after restoring", body, fmt.Sprintf("Memory %d is restored.", a), `name="text"`)
	if m := f.get(t, a); m.Deleted() || m.ForgetReason != "" {
		t.Errorf("after restore: %+v", m)
	}
	body = b.mustPost(t, memURL(a)+"/confirm", nil)
	wantContains(t, "the page after confirming", body, "is confirmed as still true")

	body = b.mustPost(t, memURL(g)+"/delete", nil)
	wantContains(t, "deleting an active memory", body, "is not in the trash: forget it first.")
	b.mustPost(t, memURL(g)+"/forget", nil)
	body = b.mustPost(t, memURL(g)+"/delete", nil)
	wantContains(t, "the trash after deleting one for good", body, fmt.Sprintf("Memory %d is deleted for good.", g), "The trash is empty.")
	if _, err := f.mem.Get(g); err == nil {
		t.Errorf("memory %d survived delete forever", g)
	}

	b.mustPost(t, memURL(phone)+"/forget", nil)
	body = b.mustPost(t, "/console/trash/empty", nil)
	wantContains(t, "emptying without the box ticked", body, "Tick the box")
	if f.mem.Count(memory.Filter{OnlyForgotten: true}) != 1 {
		t.Error("the trash was emptied without the box ticked")
	}
	body = b.mustPost(t, "/console/trash/empty", url.Values{"confirm": {"yes"}})
	wantContains(t, "the trash after emptying", body, "The trash is empty: 1 memory deleted for good.")
	if _, err := f.mem.Get(phone); err == nil {
		t.Error("the forgotten memory survived emptying the trash")
	}
	if _, err := f.mem.Get(a); err != nil {
		t.Error("emptying the trash erased an active memory")
	}
}

// TestConsole_Bulk: selected memories are tagged, forgotten and restored together.
func TestConsole_Bulk(t *testing.T) {
	f := MustOpen(t)
	ids := f.remember(t, []string{"misc"}, "one", "two", "three")
	b := f.signedIn(t)
	sel := func(action string, extra url.Values, pick ...uint64) url.Values {
		v := url.Values{"action": {action}, "back": {"/console/memories?tag=misc"}}
		for _, id := range pick {
			v.Add("id", strconv.FormatUint(id, 10))
		}
		for k, vs := range extra {
			v[k] = vs
		}
		return v
	}
	w := b.post("/console/memories/bulk", sel("tag", url.Values{"tag": {"Errands"}}, ids...))
	if w.Header().Get("Location") != "/console/memories?tag=misc" {
		t.Errorf("back to %q, want the list it came from", w.Header().Get("Location"))
	}
	wantContains(t, "after tagging", b.page(t, "/console/memories"), "3 memories tagged Errands.")
	for _, id := range ids {
		if m := f.get(t, id); !slices.Equal(m.Tags, []string{"misc", "errands"}) {
			t.Errorf("memory %d: tags %v", id, m.Tags)
		}
	}
	body := b.mustPost(t, "/console/memories/bulk", sel("tag", url.Values{"tag": {"?"}}, ids...))
	wantContains(t, "a bad tag", body, "No tag added")
	body = b.mustPost(t, "/console/memories/bulk", sel("forget", nil, ids[0], ids[1]))
	wantContains(t, "after forgetting", body, "2 memories forgotten.")
	body = b.page(t, "/console/trash")
	if got := listed(body); !slices.Equal(got, []uint64{ids[1], ids[0]}) {
		t.Errorf("trash %v", got)
	}
	body = b.mustPost(t, "/console/memories/bulk", url.Values{"action": {"restore"}, "id": {strconv.FormatUint(ids[0], 10)}, "back": {"/console/trash"}})
	wantContains(t, "after restoring", body, "1 memory restored.")
	if f.get(t, ids[0]).Deleted() || !f.get(t, ids[1]).Deleted() {
		t.Error("restore restored the wrong memories")
	}
	body = b.mustPost(t, "/console/memories/bulk", sel("forget", nil))
	wantContains(t, "nothing selected", body, "Select at least one memory first.")
	w = b.post("/console/memories/bulk", sel("forget", url.Values{"back": {"https://evil.example/"}}, ids[2]))
	if w.Header().Get("Location") != "/console/memories" {
		t.Errorf("back to another site: %q", w.Header().Get("Location"))
	}
}

// TestConsole_XSS: what others wrote (memory text, client and token names, audit entries) is
// shown as text, never as markup.
func TestConsole_XSS(t *testing.T) {
	f := MustOpen(t)
	const (
		script  = `<script>alert("memory")</script>`
		img     = `"><img src=x onerror=alert(1)>`
		patName = `<img/src=x/onerror=alert(2)>`
		bidi    = "Claude\u202egnp.exe"
	)
	res, _, err := f.mem.Remember(context.Background(), []memory.Draft{{Text: script + " and " + img, Tags: []string{"xss"}, SessionID: "<b>session</b>"}},
		memory.Origin{Provider: "<i>provider</i>", Client: "pat:" + patName})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	id := res[0].ID
	if _, _, err := f.auth.PATs().Create(patName, []string{"memories:read"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.auth.Grants().RegisterClient(grantMeta(`<script>alert("client")</script>`+bidi, "https://evil.example/<x>cb")); err != nil {
		t.Fatal(err)
	}
	f.audit.Record(auditEntry(`<script>alert("audit")</script>`, "remember"))
	b := f.signedIn(t)
	raw := []string{"<script>alert", "<img src=x", "<img/src=x", "<b>session", "<i>provider", "\u202e"}
	for _, path := range []string{"/console/memories", "/console/memories?q=alert", memURL(id), "/console/review", "/console/connections", "/console/activity"} {
		body := b.page(t, path)
		wantNotContains(t, path, body, raw...)
	}
	wantContains(t, "the memory page", b.page(t, memURL(id)), "&lt;script&gt;alert(&#34;memory&#34;)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
	wantContains(t, "the connections page", b.page(t, "/console/connections"), "&lt;script&gt;alert(&#34;client&#34;)&lt;/script&gt;Claude\ufffdgnp.exe", "&lt;img/src=x/onerror=alert(2)&gt;")
	wantContains(t, "the activity page", b.page(t, "/console/activity"), "&lt;script&gt;alert(&#34;audit&#34;)&lt;/script&gt;")
}
