package console_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// TestConsole_Review: a near-duplicate group keeps the chosen memory and forgets the others
// (replaced by it); a memory unconfirmed for long is confirmed or forgotten; tags are renamed
// and merged on every memory.
func TestConsole_Review(t *testing.T) {
	f := MustOpen(t)
	dup := f.remember(t, []string{"family"}, "My sister Ana lives in Lisbon", "My sister Ana lives in Lisbon.", "my sister ana lives in lisbon")
	long := time.Now().Add(-200 * 24 * time.Hour)
	var stale []uint64
	for _, text := range []string{"Allergic to penicillin", "Owns a red bicycle"} {
		res, _, err := f.mem.Remember(context.Background(), []memory.Draft{{Text: text, Tags: []string{"health"}, LastConfirmedAt: &long}}, memory.Origin{Client: "stdio"})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		stale = append(stale, res[0].ID)
	}
	f.remember(t, []string{"pets"}, "Has a cat called Miso")
	f.remember(t, []string{"animals"}, "Feeds the neighbour's dog")
	b := f.signedIn(t)

	body := b.page(t, "/console/review")
	wantContains(t, "the review page", body, "Group 1: similarity 1.00", fmt.Sprintf(`name="ids" value="%d,%d,%d"`, dup[0], dup[1], dup[2]),
		"Not confirmed for 180 days", "Allergic to penicillin", "Owns a red bicycle", `<option value="family">`, "Rename or merge tags")
	if groups := f.mem.NearDuplicates(0.9); len(groups) != 1 || !slices.Equal(groups[0].IDs, dup) {
		t.Fatalf("the store's groups: %v", groups)
	}

	body = b.mustPost(t, "/console/review/duplicates", url.Values{"ids": {fmt.Sprintf("%d,%d,%d", dup[0], dup[1], dup[2])}, "keep": {fmt.Sprint(dup[1])}})
	wantContains(t, "the page after keeping one", body, fmt.Sprintf("Kept memory %d; 2 near duplicates forgotten", dup[1]), "No near duplicates at this similarity.")
	for _, id := range []uint64{dup[0], dup[2]} {
		if m := f.get(t, id); !m.Deleted() || m.ReplacedByID == nil || *m.ReplacedByID != dup[1] {
			t.Errorf("memory %d after keep-one: %+v, want forgotten, replaced by %d", id, m, dup[1])
		}
	}
	if f.get(t, dup[1]).Deleted() {
		t.Error("the memory kept was forgotten")
	}
	body = b.mustPost(t, "/console/review/duplicates", url.Values{"ids": {fmt.Sprint(dup[0])}, "keep": {fmt.Sprint(dup[1])}})
	wantContains(t, "keeping one that is not in the group", body, "Choose one of the memories of the group to keep.")

	b.mustPost(t, "/console/review/stale", url.Values{"id": {fmt.Sprint(stale[0])}, "action": {"confirm"}})
	if m := f.get(t, stale[0]); time.Since(m.LastConfirmedAt) > time.Minute {
		t.Errorf("confirmed at %v, want now", m.LastConfirmedAt)
	}
	body = b.mustPost(t, "/console/review/stale", url.Values{"id": {fmt.Sprint(stale[1])}, "action": {"forget"}})
	wantContains(t, "the page after forgetting a stale memory", body, "Every memory was confirmed or written in the last 180 days.")
	if !f.get(t, stale[1]).Deleted() {
		t.Error("the stale memory was not forgotten")
	}

	body = b.mustPost(t, "/console/review/tags", url.Values{"from": {"pets"}, "into": {"animals"}})
	wantContains(t, "the page after merging", body, "pets renamed to animals on 1 memory.")
	body = b.mustPost(t, "/console/review/tags", url.Values{"from": {"family, health"}, "into": {"people"}})
	wantContains(t, "the page after merging two", body, "family, health renamed to people on 5 memories.")
	got := fmt.Sprint(f.mem.Tags(memory.Filter{IncludeDeleted: true}, 0))
	if got != "[{people 5} {animals 2}]" {
		t.Errorf("tags after renaming: %s", got)
	}
	body = b.mustPost(t, "/console/review/tags", url.Values{"from": {"animals"}, "into": {"?"}})
	wantContains(t, "a bad new name", body, "No tag renamed: into ")
	if !strings.Contains(body, "animals") {
		t.Error("the tag table lost a tag")
	}
}

// TestConsole_ReviewMerge: a group of near duplicates merged into one: the chosen memory takes
// the text written for the group and every tag of the group, the others are forgotten as
// replaced by it; without a text nothing changes.
func TestConsole_ReviewMerge(t *testing.T) {
	f := MustOpen(t)
	a := f.remember(t, []string{"family"}, "My sister Ana lives in Lisbon")
	c := f.remember(t, []string{"places"}, "My sister Ana lives in Lisbon.")
	ids := url.Values{"ids": {fmt.Sprintf("%d,%d", a[0], c[0])}, "keep": {fmt.Sprint(a[0])}, "merge": {"1"}}
	b := f.signedIn(t)

	wantContains(t, "merge without a text", b.mustPost(t, "/console/review/duplicates", ids), "Nothing merged: write the merged text first.")
	if f.get(t, c[0]).Deleted() {
		t.Fatal("a merge without a text forgot a memory")
	}
	ids.Set("text", "My sister Ana lives in Lisbon, near the river")
	wantContains(t, "after merging", b.mustPost(t, "/console/review/duplicates", ids), fmt.Sprintf("Merged the group into memory %d; 1 near duplicate forgotten", a[0]))
	kept := f.get(t, a[0])
	if kept.Text != "My sister Ana lives in Lisbon, near the river" || !slices.Equal(kept.Tags, []string{"family", "places"}) {
		t.Errorf("the kept memory = %q %v, want the merged text and both tags", kept.Text, kept.Tags)
	}
	if m := f.get(t, c[0]); !m.Deleted() || m.ReplacedByID == nil || *m.ReplacedByID != a[0] {
		t.Errorf("the other memory after the merge: %+v, want forgotten, replaced by %d", m, a[0])
	}
}
