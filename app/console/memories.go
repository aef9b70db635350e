package console

// The Memories pages: the list (newest first, or ranked by a search), one memory with its edit
// form, the trash, and the actions on them. Every change goes through memory.Store, whose
// OnChange hooks tell MCP subscribers.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
)

// Sizes of lists.
const (
	pageSize       = 20
	maxSearchPages = 10 // a search by meaning ranks at most pageSize × maxSearchPages memories
	maxBulk        = 500
	previewChars   = 280
)

// memoryItem is one memory in a list.
type memoryItem struct {
	ID        uint64
	Text      string // at most previewChars characters
	Tags      []string
	Created   time.Time
	Client    string
	Forgotten bool
	Expired   bool
	// SupersededBy is the memory that corrects this one while it is superseded (shown with
	// "all"); 0 otherwise.
	SupersededBy uint64
	Score        string // the search score, "" outside a search
}

func (c *Console) item(m *memory.Memory, now time.Time) memoryItem {
	it := memoryItem{ID: m.ID, Text: preview(m.Text, previewChars), Tags: m.Tags, Created: m.CreatedAt,
		Client: m.SourceClient, Forgotten: m.Deleted(), Expired: m.Expired(now)}
	if m.Superseded() {
		it.SupersededBy = *m.SupersededBy
	}
	return it
}

// preview cuts text to at most n characters, ending in "…" when cut.
func preview(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// listQuery is what the memories list shows, as its URL says.
type listQuery struct {
	Q      string // search text
	Mode   string // "meaning" or "text"
	Tag    string
	Client string
	From   string // YYYY-MM-DD, created on or after
	To     string // YYYY-MM-DD, created on or before
	All    bool   // forgotten, expired and superseded too
	Page   int    // from 0
}

func parseListQuery(v url.Values) listQuery {
	q := listQuery{Q: strings.TrimSpace(v.Get("q")), Mode: v.Get("mode"), Tag: strings.TrimSpace(v.Get("tag")),
		Client: v.Get("client"), From: v.Get("from"), To: v.Get("to"), All: v.Get("all") != ""}
	if q.Mode != "text" {
		q.Mode = "meaning"
	}
	q.Page, _ = strconv.Atoi(v.Get("page"))
	q.Page = max(q.Page, 0)
	if q.Q != "" && q.Mode == "meaning" {
		q.Page = min(q.Page, maxSearchPages-1)
	}
	return q
}

// url is the list's URL for page p.
func (lq listQuery) url(p int) string {
	v := url.Values{}
	for k, s := range map[string]string{"q": lq.Q, "tag": lq.Tag, "client": lq.Client, "from": lq.From, "to": lq.To} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if lq.Q != "" && lq.Mode == "text" {
		v.Set("mode", "text")
	}
	if lq.All {
		v.Set("all", "1")
	}
	if p > 0 {
		v.Set("page", strconv.Itoa(p))
	}
	if len(v) == 0 {
		return Prefix + "/memories"
	}
	return Prefix + "/memories?" + v.Encode()
}

// filter is the memory.Filter of the query; problems are the inputs it had to ignore.
func (lq listQuery) filter() (memory.Filter, []string) {
	var f memory.Filter
	var problems []string
	f.IncludeDeleted = lq.All
	f.SourceClient = lq.Client
	if lq.Tag != "" {
		if t, err := memtext.NormalizeTag(lq.Tag); err != nil {
			problems = append(problems, "The tag filter was ignored: "+err.Error())
		} else {
			f.Tags = []string{t}
		}
	}
	if lq.From != "" {
		if t, err := time.ParseInLocation(time.DateOnly, lq.From, time.UTC); err == nil {
			f.Since = &t
		} else {
			problems = append(problems, "The start date was ignored: use a date such as 2026-01-31.")
		}
	}
	if lq.To != "" {
		if t, err := time.ParseInLocation(time.DateOnly, lq.To, time.UTC); err == nil {
			end := t.Add(24*time.Hour - time.Nanosecond)
			f.Until = &end
		} else {
			problems = append(problems, "The end date was ignored: use a date such as 2026-01-31.")
		}
	}
	return f, problems
}

// memoriesPage is the list's data.
type memoriesPage struct {
	listQuery
	Searched   bool
	Items      []memoryItem
	Total      int // the memories that pass the filters; -1 for a search by meaning
	Notes      []string
	Prev, Next string
	Back       string
	Tags       []memory.TagCount
	Clients    []string
	Filtered   bool // a filter beyond the search text is set: the filters start open
}

func (c *Console) getMemories(q *req) {
	lq := parseListQuery(q.r.URL.Query())
	f, notes := lq.filter()
	now := c.now()
	data := memoriesPage{listQuery: lq, Back: lq.url(lq.Page), Notes: notes, Total: -1,
		Filtered: lq.Tag != "" || lq.Client != "" || lq.From != "" || lq.To != "" || lq.All}
	more := false
	switch {
	case lq.Q != "" && lq.Mode == "meaning":
		data.Searched = true
		found := c.mem.Search(q.r.Context(), memory.Query{Text: lq.Q, Filter: f, Limit: (lq.Page + 1) * pageSize})
		if found.Warning != "" {
			data.Notes = append(data.Notes, found.Warning)
		}
		for i, m := range found.Matches {
			if i < lq.Page*pageSize {
				continue
			}
			it := c.item(m.Memory, now)
			it.Score = strconv.FormatFloat(float64(m.Score), 'f', 2, 32)
			data.Items = append(data.Items, it)
		}
		more = len(found.Matches) == (lq.Page+1)*pageSize && lq.Page+1 < maxSearchPages
	default:
		if lq.Q != "" {
			data.Searched = true
			f.Contains = strings.ToLower(lq.Q)
		}
		var mems []*memory.Memory
		mems, more = c.mem.List(f, memory.Page{Offset: lq.Page * pageSize, Limit: pageSize})
		for _, m := range mems {
			data.Items = append(data.Items, c.item(m, now))
		}
		data.Total = c.mem.Count(f)
	}
	if lq.Page > 0 {
		data.Prev = lq.url(lq.Page - 1)
	}
	if more {
		data.Next = lq.url(lq.Page + 1)
	}
	data.Tags = c.mem.Tags(memory.Filter{}, 200)
	for k := range c.mem.Stats().Clients {
		data.Clients = append(data.Clients, k)
	}
	if lq.Client != "" && !slices.Contains(data.Clients, lq.Client) {
		data.Clients = append(data.Clients, lq.Client)
	}
	slices.Sort(data.Clients)
	c.show(q, http.StatusOK, "memories", "Memories", "memories", data)
}

// memoryPage is one memory's page.
type memoryPage struct {
	M          *memory.Memory
	Forgotten  bool
	Expired    bool
	Superseded bool // M.SupersededBy names a memory that is not forgotten
	Form       editForm
	Error      string
}

// editForm is the edit form's values, as the owner typed them when the form came back.
type editForm struct {
	Text, Tags, Importance, Expires string
}

// expiresLayout is the value of an <input type="datetime-local">, read and shown in UTC.
const expiresLayout = "2006-01-02T15:04"

func formOf(m *memory.Memory) editForm {
	f := editForm{Text: m.Text, Tags: strings.Join(m.Tags, ", "), Importance: strconv.FormatFloat(m.Importance, 'f', -1, 64)}
	if m.ExpiresAt != nil {
		f.Expires = m.ExpiresAt.UTC().Format(expiresLayout)
	}
	return f
}

func memoryURL(id uint64) string { return fmt.Sprintf("%s/memories/%d", Prefix, id) }

func (c *Console) getMemory(q *req) {
	m, err := c.mem.Get(pathID(q.r))
	if err != nil {
		c.show(q, http.StatusNotFound, "error", "Not found", "memories", "There is no memory with that number. It may have been deleted for good.")
		return
	}
	c.showMemory(q, http.StatusOK, m, formOf(m), "")
}

func (c *Console) showMemory(q *req, status int, m *memory.Memory, form editForm, errText string) {
	c.show(q, status, "memory", fmt.Sprintf("Memory %d", m.ID), "memories",
		memoryPage{M: m, Forgotten: m.Deleted(), Expired: m.Expired(c.now()), Superseded: m.Superseded(), Form: form, Error: errText})
}

// postEdit saves the edit form: text, tags, importance and expiry, through memory.Store.Update
// (the same rules as update_memory). A refusal shows the form again with what was typed.
func (c *Console) postEdit(q *req) string {
	id := pathID(q.r)
	m, err := c.mem.Get(id)
	if err != nil {
		c.bad(q, "There is no memory with that number.")
		return Prefix + "/memories"
	}
	form := editForm{Text: q.form.Get("text"), Tags: q.form.Get("tags"), Importance: strings.TrimSpace(q.form.Get("importance")),
		Expires: strings.TrimSpace(q.form.Get("expires"))}
	p, perr := patchOf(m, form, c.now())
	var res []memory.Updated
	if perr == nil {
		if res, err = c.mem.Update(q.r.Context(), []memory.Patch{p}, false); err != nil {
			c.log.Error().Err(err).Uint64("memory_id", id).Msg("console: update memory")
			c.bad(q, "The memory could not be saved (internal error).")
			return memoryURL(id)
		}
		perr = res[0].Err
	}
	if perr != nil {
		q.failed = true
		c.showMemory(q, http.StatusUnprocessableEntity, m, form, "Not saved: "+describe(perr))
		return ""
	}
	if len(res[0].Changed) == 0 {
		c.ok(q, "Nothing changed.")
	} else {
		c.ok(q, "Saved ("+strings.ReplaceAll(strings.Join(res[0].Changed, ", "), "_", " ")+").")
	}
	return memoryURL(id)
}

// patchOf turns the edit form into a patch of m: every field is given, and Update reports
// which changed. An expiry left as it was is not given again (it may have passed).
func patchOf(m *memory.Memory, f editForm, now time.Time) (memory.Patch, error) {
	p := memory.Patch{ID: m.ID, Text: &f.Text}
	tags := []string{f.Tags}
	p.Tags = &tags
	imp, err := strconv.ParseFloat(f.Importance, 64)
	if err != nil {
		return p, &memory.InputError{Field: "importance", Reason: "must be a number from 0 to 1"}
	}
	p.Importance = &imp
	switch {
	case f.Expires == "" && m.ExpiresAt != nil:
		p.ClearExpiry = true
	case f.Expires != "" && (m.ExpiresAt == nil || m.ExpiresAt.UTC().Format(expiresLayout) != f.Expires):
		t, err := time.ParseInLocation(expiresLayout, f.Expires, time.UTC)
		if err != nil {
			if t, err = time.ParseInLocation(expiresLayout+":05", f.Expires, time.UTC); err != nil {
				return p, &memory.InputError{Field: "expires_at", Reason: "is not a date and time such as 2027-01-31T09:00"}
			}
		}
		p.ExpiresAt = &t
	}
	return p, nil
}

// describe words an error of the memory store for the owner, by its kind (memory.ErrorCode).
func describe(err error) string {
	var ie *memory.InputError
	var se *memory.SecretError
	var le *memory.LimitError
	switch memory.ErrorCode(err) {
	case memory.CodeInvalid:
		errors.As(err, &ie)
		field := strings.ReplaceAll(ie.Field, "_", " ")
		if field == "" {
			return ie.Reason + "."
		}
		return field + " " + ie.Reason + "."
	case memory.CodeSecret:
		errors.As(err, &se)
		return "the text looks like a secret (" + se.Kind + "); describe it instead of storing it."
	case memory.CodeNotFound:
		return err.Error() + "."
	case memory.CodeLimit: // the message names the limit and what to do (SECURITY.md ST-13)
		errors.As(err, &le)
		return le.Error() + "."
	}
	return "internal error."
}

func (c *Console) postConfirm(q *req) string {
	id := pathID(q.r)
	if _, err := c.mem.Confirm(id); err != nil {
		c.bad(q, "Not confirmed: "+describe(err))
	} else {
		c.ok(q, fmt.Sprintf("Memory %d is confirmed as still true.", id))
	}
	return safeBack(q.form.Get("back"), memoryURL(id))
}

func (c *Console) postForget(q *req) string {
	id := pathID(q.r)
	res, err := c.mem.Forget([]uint64{id}, memory.Forgetting{Reason: strings.TrimSpace(q.form.Get("reason"))})
	switch {
	case err != nil:
		c.bad(q, "Not forgotten: "+describe(err))
	case res[0].Err != nil:
		c.bad(q, "Not forgotten: "+describe(res[0].Err))
	case res[0].Already:
		c.ok(q, fmt.Sprintf("Memory %d was already forgotten.", id))
	default:
		c.ok(q, fmt.Sprintf("Memory %d is forgotten. It stays in the trash until you restore it or empty the trash.", id))
	}
	return safeBack(q.form.Get("back"), memoryURL(id))
}

func (c *Console) postRestore(q *req) string {
	id := pathID(q.r)
	res, err := c.mem.Restore([]uint64{id})
	switch {
	case err != nil:
		c.bad(q, "Not restored: "+describe(err))
	case res[0].Err != nil:
		c.bad(q, "Not restored: "+describe(res[0].Err))
	case res[0].Already:
		c.ok(q, fmt.Sprintf("Memory %d was not forgotten.", id))
	default:
		c.ok(q, fmt.Sprintf("Memory %d is restored.", id))
	}
	return safeBack(q.form.Get("back"), memoryURL(id))
}

// postDelete erases one forgotten memory for good; an active one must be forgotten first.
func (c *Console) postDelete(q *req) string {
	id := pathID(q.r)
	m, err := c.mem.Get(id)
	switch {
	case err != nil:
		c.bad(q, "Not deleted: "+describe(err))
		return Prefix + "/trash"
	case !m.Deleted():
		c.bad(q, fmt.Sprintf("Memory %d is not in the trash: forget it first.", id))
		return memoryURL(id)
	}
	if err := c.mem.Delete(id); err != nil {
		c.bad(q, "Not deleted: "+describe(err))
		return memoryURL(id)
	}
	c.ok(q, fmt.Sprintf("Memory %d is deleted for good.", id))
	return Prefix + "/trash"
}

// postBulk acts on the memories selected in a list: add a tag, forget, or restore.
func (c *Console) postBulk(q *req) string {
	back := safeBack(q.form.Get("back"), Prefix+"/memories")
	var ids []uint64
	for _, s := range q.form["id"] {
		if id, err := strconv.ParseUint(s, 10, 64); err == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		c.bad(q, "Select at least one memory first.")
		return back
	}
	if len(ids) > maxBulk {
		c.bad(q, fmt.Sprintf("Select at most %d memories at once.", maxBulk))
		return back
	}
	var done, failed int
	var firstErr error
	count := func(err error) {
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		done++
	}
	var verb string
	switch q.form.Get("action") {
	case "tag":
		tag := strings.TrimSpace(q.form.Get("tag"))
		res, err := c.mem.AddTags(ids, []string{tag})
		if err != nil {
			c.bad(q, "No tag added: "+describe(err))
			return back
		}
		for _, r := range res {
			count(r.Err)
		}
		verb = "tagged " + tag
	case "forget":
		res, err := c.mem.Forget(ids, memory.Forgetting{})
		if err != nil {
			c.bad(q, "Nothing forgotten: "+describe(err))
			return back
		}
		for _, r := range res {
			count(r.Err)
		}
		verb = "forgotten"
	case "restore":
		res, err := c.mem.Restore(ids)
		if err != nil {
			c.bad(q, "Nothing restored: "+describe(err))
			return back
		}
		for _, r := range res {
			count(r.Err)
		}
		verb = "restored"
	default:
		c.bad(q, "Choose what to do with the selected memories.")
		return back
	}
	if done > 0 {
		c.ok(q, fmt.Sprintf("%s %s.", plural(done, "memory", "memories"), verb))
	}
	if failed > 0 {
		c.bad(q, fmt.Sprintf("%s not %s: %s", plural(failed, "memory was", "memories were"), verb, describe(firstErr)))
	}
	return back
}

// trashPage is the trash's data.
type trashPage struct {
	Items      []memoryItem
	Total      int
	Prev, Next string
	Back       string
}

func (c *Console) getTrash(q *req) {
	p, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	p = max(p, 0)
	f := memory.Filter{OnlyForgotten: true}
	mems, more := c.mem.List(f, memory.Page{Offset: p * pageSize, Limit: pageSize})
	now := c.now()
	data := trashPage{Total: c.mem.Count(f), Back: trashURL(p)}
	for _, m := range mems {
		data.Items = append(data.Items, c.item(m, now))
	}
	if p > 0 {
		data.Prev = trashURL(p - 1)
	}
	if more {
		data.Next = trashURL(p + 1)
	}
	c.show(q, http.StatusOK, "trash", "Trash", "memories", data)
}

func trashURL(p int) string {
	if p == 0 {
		return Prefix + "/trash"
	}
	return fmt.Sprintf("%s/trash?page=%d", Prefix, p)
}

// postEmptyTrash erases every forgotten memory, once the owner has ticked the confirmation.
func (c *Console) postEmptyTrash(q *req) string {
	if q.form.Get("confirm") != "yes" {
		c.bad(q, "Tick the box to confirm that the memories in the trash are to be deleted for good.")
		return Prefix + "/trash"
	}
	ids, err := c.mem.EmptyTrash()
	if err != nil {
		c.log.Error().Err(err).Msg("console: empty trash")
		c.bad(q, "The trash could not be emptied (internal error).")
		return Prefix + "/trash"
	}
	c.ok(q, fmt.Sprintf("The trash is empty: %s deleted for good.", plural(len(ids), "memory", "memories")))
	return Prefix + "/trash"
}

// plural is "1 memory", "2 memories".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
