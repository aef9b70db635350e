package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/vector"
)

// TestStore_nearLocked: a near-duplicate search made before the write lock and brought up to
// date under it (presearch, nearLocked) answers as a search made under the lock would, after
// other writes came in between: the LoCoMo dev memories twice (the second time with the
// speakers renamed, so that most have near duplicates and possible contradictions; synthetic
// texts when the file is absent), written in batches of 50 after each batch was searched. It
// reports the share of items whose near duplicates and possible contradictions are the same
// ids either way, which must be 1.
func TestStore_nearLocked(t *testing.T) {
	texts := locomoRounds(t, 2)
	if texts == nil {
		for i := range 3000 {
			texts = append(texts, fmt.Sprintf("note %d: my %s lives in %s", i%700, []string{"sister", "son", "friend"}[i%3], []string{"Paris", "Berlin", "Lisbon", "Oslo"}[i%4]))
		}
	}
	s, db := openFile(t, filepath.Join(t.TempDir(), "ownsona.db"), Config{Embedder: vector.NewBuiltin(), GraphThreshold: 1 << 30})
	defer db.Close()
	defer s.Close()
	ctx := context.Background()
	var items, sameNear, sameContra, withNear, withContra, same int
	const batch = 50
	for i := 0; i < len(texts); i += batch {
		chunk := texts[i:min(i+batch, len(texts))]
		vecs, err := s.embed(ctx, chunk, vector.Document)
		if err != nil {
			t.Fatal(err)
		}
		queries := make([]*newMemory, len(chunk))
		for j, text := range chunk {
			queries[j] = &newMemory{Memory: Memory{Text: text}, Vector: vecs[j], Policy: DedupAsk}
		}
		snaps := s.presearch(queries)
		// Other writers in between: this batch itself, and now and then a forget.
		drafts := make([]*newMemory, len(chunk))
		for j, text := range chunk {
			drafts[j] = &newMemory{Memory: Memory{Text: text, Tags: []string{}, CaptureMode: CaptureImport, CreatedAt: s.now().UTC()}, Vector: vecs[j], Policy: DedupInsert}
		}
		res, err := s.insert(drafts)
		if err != nil {
			t.Fatal(err)
		}
		if i%(10*batch) == 0 {
			if _, err := s.Forget([]uint64{res[0].ID}, Forgetting{}); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.RLock()
		for j, q := range queries {
			items++
			got := s.nearLocked(q.Text, q.Vector, snaps[j], nil)
			want := s.similarLocked(q.Text, q.Vector, nearLimit, s.nearThreshold(), nil)
			if slices.Equal(got, want) {
				same++
			}
			near, contra := s.nearAndContra(q.Text, got)
			wantNear, wantContra := s.nearAndContra(q.Text, want)
			if slices.Equal(near, wantNear) {
				sameNear++
			}
			if slices.Equal(contra, wantContra) {
				sameContra++
			}
			if len(wantNear) > 0 {
				withNear++
			}
			if len(wantContra) > 0 {
				withContra++
			}
		}
		s.mu.RUnlock()
	}
	t.Logf("%d items: same near duplicates %.4f (%d of them have some), same possible contradictions %.4f (%d have some)",
		items, float64(sameNear)/float64(items), withNear, float64(sameContra)/float64(items), withContra)
	if same != items {
		t.Errorf("%d of %d items found other near duplicates (ids, texts or scores) through the search made before the lock", items-same, items)
	}
}

// nearAndContra are the ids insert would report as near duplicates and possible
// contradictions of text among similar.
func (s *Store) nearAndContra(text string, similar []NearDuplicate) (near, contra []uint64) {
	for _, d := range similar {
		if d.Score >= s.dedupThreshold && len(near) < 5 {
			near = append(near, d.ID)
		}
		if d.Score >= ContradictionThreshold && DetailsDiffer(text, d.Text) {
			contra = append(contra, d.ID)
		}
	}
	return near, contra
}

// locomoMemories is the LoCoMo dev set's memories, read at run time; nil when the file is not
// there (it is never copied into the repository).
const locomoMemories = "/work/shared/eval/locomo-dev/memories.jsonl"

// locomoTexts returns the texts of the LoCoMo dev memories, or nil when the file is absent.
func locomoTexts(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(locomoMemories)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		out = append(out, rec.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// LocomoTexts is locomoTexts for the benchmarks of package memory_test.
var LocomoTexts = locomoTexts

// locomoRounds returns the LoCoMo dev memories' texts rounds times, the speaker renamed after
// the first round; nil when the file is absent (locomoTexts).
func locomoRounds(tb testing.TB, rounds int) []string {
	base := locomoTexts(tb)
	if base == nil {
		return nil
	}
	names := []string{"Ana", "Ben", "Chloe", "Dev", "Elif"}
	var out []string
	for r := range rounds {
		for _, t := range base {
			if speaker, rest, ok := strings.Cut(t, ": "); ok && r > 0 {
				t = names[r%len(names)] + ": " + rest + " (" + speaker + ")"
			}
			out = append(out, t)
		}
	}
	return out
}
