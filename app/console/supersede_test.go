package console_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
)

// TestConsole_Supersedes: the memory page shows the chain both ways; the list leaves a
// superseded memory out unless "all" asks for it, and then marks it.
func TestConsole_Supersedes(t *testing.T) {
	f := MustOpen(t)
	old := f.remember(t, nil, "My office is in Building 4")[0]
	res, _, err := f.mem.Remember(context.Background(), []memory.Draft{{Text: "My office is in Building 7", Supersedes: []uint64{old}}}, memory.Origin{Client: "stdio"})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	fix := res[0].ID
	b := f.signedIn(t)

	wantContains(t, "the old memory's page", b.page(t, memURL(old)), `<span class="badge">superseded</span>`,
		fmt.Sprintf(`Superseded by <a href="/console/memories/%d">#%d</a>`, fix, fix))
	wantContains(t, "the new memory's page", b.page(t, memURL(fix)),
		fmt.Sprintf(`<dt>Supersedes</dt><dd><a href="/console/memories/%d">#%d</a></dd>`, old, old))

	if got := listed(b.page(t, "/console/memories")); slices.Contains(got, old) || !slices.Contains(got, fix) {
		t.Errorf("list = %v, want %d and not %d", got, fix, old)
	}
	all := b.page(t, "/console/memories?all=1")
	if got := listed(all); !slices.Contains(got, old) {
		t.Errorf("list with all = %v, want %d", got, old)
	}
	wantContains(t, "the list with all", all, fmt.Sprintf("superseded by #%d", fix))
}
