package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/rank"
	"github.com/ownsona/ownsona/vector"
)

// Get returns memory id, forgotten ones with their tombstone included; ErrNotFound when no
// stored memory has that id.
func (s *Store) Get(id uint64) (*Memory, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.mems[id]
	if !ok {
		return nil, notFound(id)
	}
	return m.Clone(), nil
}

// Filter selects memories for lists, counts and searches. The zero Filter selects every active
// memory that is not superseded (Memory.Superseded).
type Filter struct {
	IncludeDeleted    bool // also forgotten, expired and superseded memories
	IncludeSuperseded bool // also memories that a memory not forgotten supersedes
	OnlyForgotten     bool // forgotten memories only (the trash); implies IncludeDeleted
	Tags              []string
	SourceProvider    string
	SourceClient      string // the OAuth client or token that wrote it ("pat:backup", "stdio")
	UntaggedOnly      bool
	MinChars          int
	MaxChars          int // 0: no maximum
	NotConfirmedSince *time.Time
	Since, Until      *time.Time // created_at window, inclusive
	Contains          string     // lowercase substring
}

// match reports whether m passes f at now.
func (f *Filter) match(m *Memory, now time.Time) bool {
	if !f.IncludeDeleted && !f.OnlyForgotten && !m.Active(now) {
		return false
	}
	if f.OnlyForgotten && !m.Deleted() {
		return false
	}
	if m.superseded && !f.IncludeSuperseded && !f.IncludeDeleted && !f.OnlyForgotten {
		return false
	}
	if len(f.Tags) > 0 && !slices.ContainsFunc(m.Tags, func(t string) bool { return slices.Contains(f.Tags, t) }) {
		return false
	}
	if f.SourceProvider != "" && m.SourceProvider != f.SourceProvider {
		return false
	}
	if f.SourceClient != "" && m.SourceClient != f.SourceClient {
		return false
	}
	if f.UntaggedOnly && len(m.Tags) > 0 {
		return false
	}
	if f.MinChars > 0 || f.MaxChars > 0 {
		n := len([]rune(m.Text))
		if n < f.MinChars || (f.MaxChars > 0 && n > f.MaxChars) {
			return false
		}
	}
	if f.NotConfirmedSince != nil && !m.LastConfirmedAt.Before(*f.NotConfirmedSince) {
		return false
	}
	if f.Since != nil && m.CreatedAt.Before(*f.Since) {
		return false
	}
	if f.Until != nil && m.CreatedAt.After(*f.Until) {
		return false
	}
	if f.Contains != "" && !strings.Contains(strings.ToLower(m.Text), f.Contains) {
		return false
	}
	return true
}

// Page is a window of a list, newest first.
type Page struct {
	Before uint64 // start below this id (a cursor); 0: from the newest
	Offset int    // skip this many matches
	Limit  int    // at most this many
}

// List returns the memories that pass f, newest first, in the window p; more reports whether
// any remain after it.
func (s *Store) List(f Filter, p Page) (out []*Memory, more bool) {
	before, offset, limit := p.Before, p.Offset, p.Limit
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := len(s.ids) - 1; i >= 0; i-- {
		id := s.ids[i]
		if before != 0 && id >= before {
			continue
		}
		m := s.mems[id]
		if !f.match(m, now) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, m.Clone())
	}
	return out, false
}

// Each calls fn with every memory that passes f, oldest first, until fn returns false. It holds
// the store's read lock meanwhile: fn must not keep or change m (Clone it) nor call the store.
func (s *Store) Each(f Filter, fn func(m *Memory) bool) {
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, id := range s.ids {
		if m := s.mems[id]; f.match(m, now) && !fn(m) {
			return
		}
	}
}

// Query is a search by meaning and keywords.
type Query struct {
	Text     string
	Filter   Filter  // applied before the top-k cut, never after
	Limit    int     // at most this many matches
	MinScore float32 // drop matches scoring below this
	// TimeWords lets the question's own time words ("last week", "in March") set a window
	// that ranks when Filter has none (TimeWindow): the memories written in it or mentioning a
	// time in it come first; recall and search set it.
	TimeWords bool
}

// Match is one search result.
type Match struct {
	Memory *Memory
	Score  float32 // fused relevance in [0, 1], rounded to 4 decimals
}

// Found is what Search found and how.
type Found struct {
	Matches     []Match
	EmbedTime   time.Duration
	SearchTime  time.Duration
	LexicalOnly bool   // an embedder is configured but could not answer this query in full
	Warning     string // why, for the payload
	// TimeWindow is the window the question's time words set (Query.TimeWords), and whether the
	// matches list it rather than rank (TimeWindow.Listed); nil if none.
	TimeWindow *TimeWindow
}

// Search ranks the memories that pass q.Filter (app/rank): the fusion of BM25, vector cosine
// and (with the builtin embedder) the soft term match, each memory's context counting for it,
// and with q.TimeWords the memories of the question's time window first. When the embedder
// fails, it answers from BM25 alone and says so in Found.Warning.
func (s *Store) Search(ctx context.Context, q Query) Found {
	query, f, limit, minScore := q.Text, &q.Filter, q.Limit, q.MinScore
	var out Found
	var tw *TimeWindow
	if q.TimeWords {
		tw, query = s.timeWindow(query, f, s.now())
		out.TimeWindow = tw
	}
	onlyWindow := tw != nil && !hasWords(query) // "last week?": the window is the question
	var qvec []float32
	if s.emb != nil && !onlyWindow {
		start := time.Now()
		vecs, err := s.embed(ctx, []string{query}, vector.Query)
		out.EmbedTime = time.Since(start)
		if err != nil {
			out.LexicalOnly = true
			out.Warning = "semantic search is unavailable (" + err.Error() + "); results are from lexical search only"
		} else {
			qvec = vecs[0]
		}
	}
	start := time.Now()
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	filter := func(id uint64) bool { m := s.mems[id]; return m != nil && f.match(m, now) }
	if f.isZero() {
		filter = func(id uint64) bool { return s.activeLocked(id, now) }
	} else if win := s.windowLocked(f); win != nil { // outside the window: one bit, no lookup
		filter = func(id uint64) bool { return get(win, id) && f.match(s.mems[id], now) }
	}
	var inWin []uint64
	if tw != nil {
		inWin = s.inWindowLocked(tw)
	}
	if onlyWindow {
		out.Matches = s.listWindowLocked(tw, inWin, filter, limit)
		out.SearchTime = time.Since(start)
		return out
	}
	if qvec != nil && s.dense != nil && len(qvec) == s.dense.Dim() {
		if n := len(s.pending); n > 0 {
			out.Warning = fmt.Sprintf("%d memories are still being embedded; they are found by lexical search only until then", n)
		}
	} else if qvec != nil && len(s.pending) > 0 {
		out.Warning = fmt.Sprintf("%d memories are still being embedded; until then search is lexical only", len(s.pending))
	}
	rq := rank.Query{Text: query, Vec: qvec, Filter: filter, Limit: limit}
	if inWin != nil {
		rq.Window = func(id uint64) bool { return get(inWin, id) }
	}
	for _, r := range s.ranker.Rank(corpus{s, now}, rq) {
		if r.Score < minScore {
			continue
		}
		out.Matches = append(out.Matches, Match{Memory: s.mems[r.ID].Clone(), Score: round4(r.Score)})
	}
	if len(out.Matches) == 0 && tw != nil && minScore <= 0 { // nothing ranks: the window answers
		out.Matches = s.listWindowLocked(tw, inWin, filter, limit)
	}
	out.SearchTime = time.Since(start)
	return out
}

// listWindowLocked answers a question that is only its time window: the window's memories
// (inWin) that pass filter, newest first, or when it holds none, the nearest to it in time;
// tw says which. s.mu must be held.
func (s *Store) listWindowLocked(tw *TimeWindow, inWin []uint64, filter func(uint64) bool, limit int) []Match {
	tw.Listed = true
	if out := s.newestLocked(inWin, filter, limit); len(out) > 0 {
		return out
	}
	tw.Nearest = true
	return s.nearestLocked(tw, filter, limit)
}

// corpus is the store as a ranking reads it (rank.Corpus), at now; s.mu is held while it is
// used.
type corpus struct {
	s   *Store
	now time.Time
}

func (c corpus) Lexical(text string, k int, f vector.Filter, context float32) []vector.Scored {
	return c.s.lex.SearchContext(text, k, f, context, c.s.speaks(c.now))
}

func (c corpus) Dense(vec []float32, k int, f vector.Filter) []vector.Scored {
	if c.s.dense == nil || len(vec) != c.s.dense.Dim() {
		return nil
	}
	return c.s.dense.Search(vec, k, f)
}

func (c corpus) Words(id uint64) vector.Words { return c.s.softWords[id] }

func (c corpus) Neighbours(dst []uint64, id uint64) []uint64 {
	return c.s.activeNeighboursLocked(dst, id, c.now)
}

func (c corpus) Counts() *vector.WordCounts { return c.s.words }

func (c corpus) Text(id uint64) string { return c.s.mems[id].Text }

// Stats counts the whole store.
type Stats struct {
	// Total = Active + Superseded + SoftDeleted + Expired: a superseded memory (neither
	// forgotten nor expired) is counted there, not as active.
	Total, Active, Superseded, SoftDeleted, Expired int
	ImportanceSum                                   float64
	Oldest, Newest                                  *time.Time
	Tags, Providers, Clients                        map[string]int
	Pending                                         int
	// Quota is the file's use against its caps (Store.Quota).
	Quota Quota
}

// Stats counts every memory: totals by state, and over active memories the importance, the
// oldest and newest, and the memories per tag, per provider and per source client.
func (s *Store) Stats() Stats {
	now := s.now()
	st := Stats{Tags: map[string]int{}, Providers: map[string]int{}, Clients: map[string]int{}, Quota: s.Quota()}
	s.mu.RLock()
	defer s.mu.RUnlock()
	st.Pending = len(s.pending)
	for _, id := range s.ids {
		m := s.mems[id]
		st.Total++
		switch {
		case m.Deleted():
			st.SoftDeleted++
			continue
		case m.Expired(now):
			st.Expired++
			continue
		case m.superseded:
			st.Superseded++
			continue
		}
		st.Active++
		st.ImportanceSum += m.Importance
		if st.Oldest == nil || m.CreatedAt.Before(*st.Oldest) {
			t := m.CreatedAt
			st.Oldest = &t
		}
		if st.Newest == nil || m.CreatedAt.After(*st.Newest) {
			t := m.CreatedAt
			st.Newest = &t
		}
		for _, t := range m.Tags {
			st.Tags[t]++
		}
		st.Providers[m.SourceProvider]++
		st.Clients[m.SourceClient]++
	}
	return st
}

// DuplicateGroup is a cluster of memories linked by pairs at or above a similarity threshold.
type DuplicateGroup struct {
	IDs           []uint64
	MaxSimilarity float32
	PairCount     int
}

// NearDuplicates clusters active memories that nothing supersedes whose similarity is at least
// threshold (union-find over similar pairs found through the indexes' nearest neighbours), most
// similar first.
func (s *Store) NearDuplicates(threshold float32) []DuplicateGroup {
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	active := func(id uint64) bool { return s.activeLocked(id, now) }
	parent := map[uint64]uint64{}
	find := func(x uint64) uint64 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	type pair struct{ a, b uint64 }
	pairs := map[pair]float32{}
	for _, id := range s.ids {
		if !active(id) {
			continue
		}
		m := s.mems[id]
		var near []vector.Scored
		if v, ok := s.denseVectorLocked(id); ok {
			near = s.dense.Search(v, 11, active)
		} else {
			for _, r := range s.lex.Search(m.Text, 20, active) {
				near = append(near, vector.Scored{ID: r.ID, Score: vector.LexicalSimilarity(m.Text, s.mems[r.ID].Text)})
			}
		}
		for _, r := range near {
			if r.ID == id || r.Score < threshold {
				continue
			}
			p := pair{min(id, r.ID), max(id, r.ID)}
			if r.Score > pairs[p] {
				pairs[p] = r.Score
			}
		}
	}
	for p := range pairs {
		for _, x := range []uint64{p.a, p.b} {
			if _, ok := parent[x]; !ok {
				parent[x] = x
			}
		}
		ra, rb := find(p.a), find(p.b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	groups := map[uint64]*DuplicateGroup{}
	for p, sim := range pairs {
		root := find(p.a)
		g := groups[root]
		if g == nil {
			g = &DuplicateGroup{}
			groups[root] = g
		}
		g.PairCount++
		g.MaxSimilarity = max(g.MaxSimilarity, round4(sim))
	}
	for x := range parent {
		groups[find(x)].IDs = append(groups[find(x)].IDs, x)
	}
	out := make([]DuplicateGroup, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g.IDs)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MaxSimilarity != out[j].MaxSimilarity {
			return out[i].MaxSimilarity > out[j].MaxSimilarity
		}
		return out[i].IDs[0] < out[j].IDs[0]
	})
	return out
}

// denseVectorLocked returns id's vector when the dense index holds one.
func (s *Store) denseVectorLocked(id uint64) ([]float32, bool) {
	if s.dense == nil {
		return nil, false
	}
	return s.dense.Get(id)
}

// EmbedderStatus describes the embedder and the background embedding.
type EmbedderStatus struct {
	Configured bool        // false with no embedder (lexical search only)
	Info       vector.Info // Name "none" when not configured
	Pending    int         // memories waiting for a vector of the current embedder
	Total      int         // every stored memory
	LastError  string      // the last embedding failure, "" once embedding works again
}

// EmbedderStatus reports the embedder and how far (re-)embedding has come.
func (s *Store) EmbedderStatus() EmbedderStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := EmbedderStatus{Configured: s.emb != nil, Info: vector.Info{Name: "none"}, Pending: len(s.pending), Total: len(s.ids), LastError: s.embErr}
	if s.emb != nil {
		st.Info = s.emb.Info()
		if st.Info.Dim == 0 && s.dense != nil {
			st.Info.Dim = s.dense.Dim()
		}
	}
	return st
}

// IndexBuilding reports whether the HNSW graph is being built; the exact index answers
// searches meanwhile.
func (s *Store) IndexBuilding() bool {
	select {
	case <-s.IndexReady():
		return false
	default:
		return true
	}
}

// IndexReady is closed once no HNSW graph is being built (at once without vectors).
func (s *Store) IndexReady() <-chan struct{} {
	s.mu.RLock()
	d := s.dense
	s.mu.RUnlock()
	if d == nil {
		return closed
	}
	return d.Ready()
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Count is the number of memories that pass f.
func (s *Store) Count(f Filter) int {
	n := 0
	s.Each(f, func(*Memory) bool { n++; return true })
	return n
}

// TagCount is a tag and how many memories carry it.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// Tags counts the tags of the memories that pass f, most used first then by name, at most
// limit (0: all).
func (s *Store) Tags(f Filter, limit int) []TagCount {
	counts := map[string]int{}
	s.Each(f, func(m *Memory) bool {
		for _, t := range m.Tags {
			counts[t]++
		}
		return true
	})
	return TopCounts(counts, limit, func(k string, n int) TagCount { return TagCount{k, n} })
}

// TopCounts sorts counts by count descending then key, keeping at most limit (0: all).
func TopCounts[T any](counts map[string]int, limit int, mk func(string, int) T) []T {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if c := cmp.Compare(counts[y], counts[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = mk(k, counts[k])
	}
	return out
}
