package console

// The Review page: near-duplicate clusters to keep one of, memories not confirmed for a long
// time, and the tags with their counts to rename or merge.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// Bounds of the Review page.
const (
	maxClusters      = 20
	maxStale         = 20
	maxTagRows       = 200
	defaultThreshold = 0.9
)

// reviewPage is the Review page's data.
type reviewPage struct {
	Threshold string
	Clusters  []cluster
	More      int // clusters not shown
	StaleDays int
	Stale     []memoryItem
	StaleMore bool
	Tags      []memory.TagCount
}

// cluster is a group of near duplicates.
type cluster struct {
	N          int // its number on the page, from 1
	Similarity string
	Items      []memoryItem
	IDs        string // every id, comma-separated
}

func (c *Console) getReview(q *req) {
	v := q.r.URL.Query()
	threshold, err := strconv.ParseFloat(v.Get("threshold"), 32)
	if err != nil || threshold < 0.5 || threshold > 1 {
		threshold = defaultThreshold
	}
	now := c.now()
	data := reviewPage{Threshold: strconv.FormatFloat(threshold, 'f', 2, 64), StaleDays: int(c.cfg.StaleAfter / (24 * time.Hour))}
	groups := c.mem.NearDuplicates(float32(threshold))
	if len(groups) > maxClusters {
		data.More = len(groups) - maxClusters
		groups = groups[:maxClusters]
	}
	for i, g := range groups {
		cl := cluster{N: i + 1, Similarity: strconv.FormatFloat(float64(g.MaxSimilarity), 'f', 2, 32)}
		var ids []string
		for _, id := range g.IDs {
			if m, err := c.mem.Get(id); err == nil {
				cl.Items = append(cl.Items, c.item(m, now))
				ids = append(ids, strconv.FormatUint(id, 10))
			}
		}
		cl.IDs = strings.Join(ids, ",")
		if len(cl.Items) > 1 {
			data.Clusters = append(data.Clusters, cl)
		}
	}
	since := now.Add(-c.cfg.StaleAfter)
	stale, more := c.mem.List(memory.Filter{NotConfirmedSince: &since}, memory.Page{Limit: maxStale})
	for _, m := range stale {
		data.Stale = append(data.Stale, c.item(m, now))
	}
	data.StaleMore = more
	data.Tags = c.mem.Tags(memory.Filter{}, maxTagRows)
	c.show(q, http.StatusOK, "review", "Review", "review", data)
}

// postKeepOne keeps one memory of a cluster and forgets the others, each tombstone naming the
// one kept (replaced_by_id), so that they can be restored from the trash.
func (c *Console) postKeepOne(q *req) string {
	const back = Prefix + "/review"
	keep, err := strconv.ParseUint(q.form.Get("keep"), 10, 64)
	if err != nil {
		c.bad(q, "Choose the memory to keep.")
		return back
	}
	var others []uint64
	found := false
	for s := range strings.SplitSeq(q.form.Get("ids"), ",") {
		id, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		switch {
		case err != nil:
			continue
		case id == keep:
			found = true
		default:
			others = append(others, id)
		}
	}
	if !found || len(others) == 0 || len(others) > maxBulk {
		c.bad(q, "Choose one of the memories of the group to keep.")
		return back
	}
	merged := q.form.Get("merge") != ""
	if merged {
		// Merge: the kept memory takes the text written for the group and every tag of the
		// group, then the others are forgotten as replaced by it.
		text := strings.TrimSpace(q.form.Get("text"))
		if text == "" {
			c.bad(q, "Nothing merged: write the merged text first.")
			return back
		}
		var tags []string
		for _, id := range append([]uint64{keep}, others...) {
			if m, err := c.mem.Get(id); err == nil {
				for _, t := range m.Tags {
					if !slices.Contains(tags, t) {
						tags = append(tags, t)
					}
				}
			}
		}
		up, err := c.mem.Update(q.r.Context(), []memory.Patch{{ID: keep, Text: &text, Tags: &tags}}, false)
		if err == nil && len(up) == 1 {
			err = up[0].Err
		}
		if err != nil {
			c.bad(q, "Nothing merged: "+describe(err))
			return back
		}
	}
	res, err := c.mem.Forget(others, memory.Forgetting{Reason: fmt.Sprintf("near duplicate of memory %d (console review)", keep), ReplacedBy: &keep})
	if err != nil {
		c.bad(q, "Nothing forgotten: "+describe(err))
		return back
	}
	n := 0
	for _, r := range res {
		if r.Err == nil && !r.Already {
			n++
		}
	}
	verb := "Kept"
	if merged {
		verb = "Merged the group into"
	}
	c.ok(q, fmt.Sprintf("%s memory %d; %s forgotten (in the trash).", verb, keep, plural(n, "near duplicate", "near duplicates")))
	return back
}

// postStale confirms or forgets one memory listed as not confirmed for long.
func (c *Console) postStale(q *req) string {
	const back = Prefix + "/review"
	id, err := strconv.ParseUint(q.form.Get("id"), 10, 64)
	if err != nil {
		c.bad(q, "No memory was named.")
		return back
	}
	switch q.form.Get("action") {
	case "confirm":
		if _, err := c.mem.Confirm(id); err != nil {
			c.bad(q, "Not confirmed: "+describe(err))
		} else {
			c.ok(q, fmt.Sprintf("Memory %d is confirmed as still true.", id))
		}
	case "forget":
		res, err := c.mem.Forget([]uint64{id}, memory.Forgetting{Reason: "not confirmed for long (console review)"})
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			c.bad(q, "Not forgotten: "+describe(err))
		} else {
			c.ok(q, fmt.Sprintf("Memory %d is forgotten (in the trash).", id))
		}
	default:
		c.bad(q, "Choose confirm or forget.")
	}
	return back
}

// postTags renames a tag, or merges several (comma-separated) into one, on every memory.
func (c *Console) postTags(q *req) string {
	const back = Prefix + "/review#tags"
	var from []string
	for s := range strings.SplitSeq(q.form.Get("from"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			from = append(from, s)
		}
	}
	into := strings.TrimSpace(q.form.Get("into"))
	ids, err := c.mem.MergeTags(from, into)
	if err != nil {
		c.bad(q, "No tag renamed: "+describe(err))
		return back
	}
	c.ok(q, fmt.Sprintf("%s renamed to %s on %s.", strings.Join(from, ", "), into, plural(len(ids), "memory", "memories")))
	return back
}
