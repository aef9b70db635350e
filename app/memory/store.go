package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/app/rank"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

// Store is the memories of the one file, with the rules of what they may hold and what each
// operation does to them.
//
// bbolt is the truth; the store keeps a cache of every memory record plus the lexical and vector
// indexes, rebuilt from the file by Open. Writers do their checks one at a time under writeMu;
// new memories then share commits with the writers at once (commit.go), other writes commit on
// their own. Every write is in the file before the cache changes and before its writer is
// answered, so a reader never sees a memory the file does not hold. All methods are safe for
// concurrent use; the memories they return are copies the caller owns.
type Store struct {
	db             *kv.DB
	emb            vector.Embedder    // nil: lexical search only
	soft           *vector.Builtin    // reads each memory's words for the soft match; nil for other embedders
	words          *vector.WordCounts // the store's word counts, which weigh soft matches; nil without soft
	embID          string             // emb.Info().String(); "" when emb is nil
	now            func() time.Time
	loc            *time.Location // of the calendar in questions and memories; nil: time.Local
	log            zerolog.Logger
	maxText        int
	dedupThreshold float32
	maxMemories    int   // ≤ 0: no cap (quota.go)
	maxFileBytes   int64 // ≤ 0: no cap

	writeMu  sync.Mutex // serializes writers' checks, and the writes that do not queue (commit.go)
	prunedAt time.Time  // when a write last removed expired idempotency keys; guarded by writeMu
	seq      uint64     // the last id handed out: the memories bucket's sequence once committed; guarded by writeMu
	commit   committer  // the group commit's queue (commit.go)

	mu      sync.RWMutex // guards the fields below
	ranker  *rank.Ranker // recall's ranking (read.go)
	mems    map[uint64]*Memory
	ids     []uint64 // every stored id, ascending
	lex     *vector.BM25
	links   map[uint64]contextLink  // every stored memory's place in its context group (context.go)
	tails   map[contextGroup]uint64 // each context group's newest memory
	dense   *vector.Dense           // nil when emb is nil or its dimension is not yet known
	pending map[uint64]struct{}     // memories that lack a vector of the current embedder
	embErr  string                  // the last embedding failure, "" once embedding works again
	queued  []*commitReq            // queued for a commit, not yet applied, in queue order (commit.go)
	gen     uint64                  // counts failed group commits
	modGen  uint64                  // counts the changes to stored memories other than new ones (nearSnap)
	active  activeSet               // which memories pass the zero Filter (active.go)
	created []createdID             // every stored memory in creation order (created.go)
	// The store's caches of what each memory's text says, read once (indexText): kept here,
	// not on the memories it hands out. mentioning is the times each memory whose text
	// mentions one mentions, read against its creation time (timewindow.go); softWords is
	// each memory's words for the soft match (rank), nil without soft.
	mentioning map[uint64][]mention
	softWords  map[uint64]vector.Words
	recent     recentIndex // the memories of the last RecentDuplicateWindow (idempotency.go)

	hookMu   sync.Mutex
	onChange []func(ids []uint64)

	wake chan struct{} // nudges the background embedder
	stop context.CancelFunc
	done chan struct{}
}

// Config is what Open needs besides the file.
type Config struct {
	// Embedder turns text into vectors. If nil, search is lexical only.
	Embedder vector.Embedder
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Log receives the background embedder's progress and failures. If zero, nothing is logged.
	Log zerolog.Logger
	// MaxTextChars caps a memory's text, in characters. If zero, memtext.DefaultMaxTextChars.
	MaxTextChars int
	// DedupThreshold is the similarity at or above which a stored memory counts as a near
	// duplicate of a new one. If zero, 0.9.
	DedupThreshold float64
	// GraphThreshold is the number of vectors from which an HNSW graph serves searches. If
	// zero, vector.DefaultGraphThreshold.
	GraphThreshold int
	// Rank, if set, replaces the ranking's knobs, for measuring them (app/internal/evalsvc).
	// If nil, rank.Default().
	Rank *rank.Params
	// Location is the time zone of the calendar in questions ("yesterday", "last week"). If
	// nil, time.Local.
	Location *time.Location
	// MaxMemories caps how many memories the file holds, forgotten ones and the previous texts
	// updates keep included: a write that would add one past it (remember, an import, an
	// update of a text) is refused with a *LimitError on "max-memories" (quota.go). If zero,
	// DefaultMaxMemories (250,000); negative: no cap.
	MaxMemories int
	// MaxFileBytes caps the data the file holds (its pages less its free ones): once it is
	// reached, writes that add memories or text are refused with a *LimitError on
	// "max-file-mb". One write may pass it by its own size. If zero, DefaultMaxFileBytes
	// (2 GiB; 1 GiB on 32-bit systems); negative: no cap.
	MaxFileBytes int64
}

// Open loads every memory and vector of db into the caches and starts the background embedder
// when one is configured. db must have Migrations applied. Close stops the embedder; the caller
// closes db after it.
func Open(db *kv.DB, cfg Config) (*Store, error) {
	if cfg.MaxTextChars == 0 {
		cfg.MaxTextChars = memtext.DefaultMaxTextChars
	}
	if cfg.DedupThreshold == 0 {
		cfg.DedupThreshold = 0.9
	}
	if cfg.MaxMemories == 0 {
		cfg.MaxMemories = DefaultMaxMemories
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	s := &Store{
		db:             db,
		emb:            cfg.Embedder,
		now:            cfg.Now,
		loc:            cfg.Location,
		log:            cfg.Log,
		maxText:        cfg.MaxTextChars,
		maxMemories:    cfg.MaxMemories,
		maxFileBytes:   cfg.MaxFileBytes,
		dedupThreshold: float32(cfg.DedupThreshold),
		mems:           make(map[uint64]*Memory),
		lex:            vector.NewBM25(),
		links:          make(map[uint64]contextLink),
		mentioning:     make(map[uint64][]mention),
		tails:          make(map[contextGroup]uint64),
		pending:        make(map[uint64]struct{}),
		wake:           make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	p := rank.Default()
	if cfg.Rank != nil {
		p = *cfg.Rank
	}
	s.ranker = rank.New(s.emb, p)
	if b, ok := s.emb.(*vector.Builtin); ok {
		s.soft = b
		s.softWords = make(map[uint64]vector.Words)
	}
	if s.emb != nil {
		s.embID = s.emb.Info().String()
		if d := s.emb.Info().Dim; d > 0 {
			s.dense = vector.NewDense(d, -1, vector.HNSWConfig{})
		}
	}
	err := db.View(func(tx *kv.Tx) error {
		mb := tx.Bucket(bucketMemories)
		s.seq = mb.Sequence()
		var analyze func(string) vector.Analysis
		if s.soft != nil {
			analyze = s.soft.Analyze
		}
		// The memories are indexed as they are decoded, in id order (as they were written):
		// the lexical index with the context links on one goroutine, the word counts on
		// another; the vectors load on this one, which owns tx, once the walk is done.
		counted := make(chan []vector.Analysis, 64)
		var wg sync.WaitGroup
		var werr error
		if s.soft != nil {
			wg.Go(func() {
				// The counts rank words by the embedder's vocabulary, which this loads, or
				// waits for while the first analysis does; the walk goes on meanwhile.
				words, err := vector.NewWordCounts()
				for ans := range counted {
					if err == nil {
						for _, a := range ans {
							words.AddAnalysis(a)
						}
					}
				}
				if err != nil {
					err = fmt.Errorf("builtin embedder: %w", err)
				}
				s.words, werr = words, err
			})
		}
		ids, wait := loadMemories(mb, s.loc, analyze, func(mems []*Memory, ans []vector.Analysis, ments [][]mention) {
			for i, m := range mems {
				s.mems[m.ID] = m
				s.ids = append(s.ids, m.ID)
				s.setMentionsLocked(m.ID, ments[i])
				if ans != nil {
					s.lex.AddAnalysis(m.ID, ans[i])
					s.softWords[m.ID] = ans[i].Words
				} else {
					s.lex.Add(m.ID, m.Text)
				}
				s.linkLocked(m, true)
			}
			if ans != nil {
				counted <- ans
			}
		})
		if s.emb != nil {
			s.loadVectors(tx, ids)
		}
		err := wait()
		close(counted)
		wg.Wait()
		return cmp.Or(err, werr)
	})
	if err != nil {
		return nil, fmt.Errorf("load memories: %w", err)
	}
	s.nearAllLocked()
	s.sortCreatedLocked()
	for _, m := range s.mems {
		m.superseded = s.isSupersededLocked(m)
	}
	for _, id := range s.ids {
		s.markLocked(id)
	}
	now := s.now().UTC()
	for i := max(len(s.ids)-recentScan, 0); i < len(s.ids); i++ {
		if m := s.mems[s.ids[i]]; now.Sub(m.CreatedAt) <= RecentDuplicateWindow {
			s.addRecentLocked(m, now)
		}
	}
	// The load's garbage (the records' raw copies, the decoder's buffers) goes back to the OS
	// rather than staying in the process for good, in the background: the collection that
	// finds it takes 40-300 ms at 100k, which the first answer need not wait for. So do the
	// file's pages, which the load made resident and the caches now stand in for
	// (kv.DB.ReleasePages).
	s.lex.Compact()
	go debug.FreeOSMemory()
	if err := db.ReleasePages(); err != nil {
		s.log.Debug().Err(err).Msg("release the file's pages")
	}
	if s.dense != nil {
		// One parallel build over everything loaded, in the background: searches are exact
		// until it is done.
		s.dense.SetThreshold(cfg.GraphThreshold)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	if s.emb != nil {
		go s.embedLoop(ctx)
		s.nudge()
	} else {
		close(s.done)
	}
	return s, nil
}

// loadVectors loads the stored vector of each memory of ids, ascending, into the vector index,
// and marks the memories without one, or with another embedder's, pending (to be embedded).
func (s *Store) loadVectors(tx *kv.Tx, ids []uint64) {
	if s.dense != nil {
		s.dense.Grow(len(ids))
	}
	// The vectors bucket is walked alongside the ids, both ascending; a vector is decoded
	// into one buffer, which the index copies.
	c := tx.Bucket(bucketVectors).Cursor()
	k, v := c.First()
	var buf []float32
	for _, id := range ids {
		for k != nil && kv.ID(k) < id {
			k, v = c.Next()
		}
		if k == nil || kv.ID(k) != id {
			s.pending[id] = struct{}{}
			continue
		}
		var embedder string
		var err error
		embedder, buf, err = decodeVectorInto(v, buf)
		if err != nil || embedder != s.embID {
			s.pending[id] = struct{}{}
			continue
		}
		if s.dense == nil {
			s.dense = vector.NewDense(len(buf), -1, vector.HNSWConfig{})
			s.dense.Grow(len(ids))
		}
		if err := s.dense.Add(id, buf); err != nil {
			s.pending[id] = struct{}{}
		}
	}
}

// OnChange registers fn to be called after every write that changed memories (remember,
// update, confirm, forget, delete, import), with the ids it changed, once the write is in the
// file and before its writer is answered. Every writer goes through the store, so fn hears of
// them all: tools, the admin socket's import, the console. Calls come one at a time, in the
// order of the writes; fn runs on the goroutine that committed the write (for a remember that
// shared a commit, possibly another writer's, see commit.go) while the writes behind it wait:
// it may read the store but must not write to it, nor block for long.
func (s *Store) OnChange(fn func(ids []uint64)) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.onChange = append(s.onChange, fn)
}

// changed tells the OnChange hooks about ids.
func (s *Store) changed(ids []uint64) {
	if len(ids) == 0 {
		return
	}
	s.hookMu.Lock()
	hooks := slices.Clone(s.onChange)
	s.hookMu.Unlock()
	for _, fn := range hooks {
		fn(ids)
	}
}

// Close stops the background embedder and waits for it. It does not close the file; it
// tolerates a nil Store and repeat calls.
func (s *Store) Close() error {
	if s == nil || s.stop == nil {
		return nil
	}
	s.stop()
	<-s.done
	return nil
}

// indexText puts m's text into the lexical index and the word counts that weigh soft matches,
// in place of old's (nil: none), and keeps the times it mentions and the soft match's reading
// of it in the store's caches (mentioning, softWords): with the builtin embedder the text is
// read once for all three (vector.Analysis). Like the lexical index, the counts cover every
// stored memory, forgotten ones included. s.mu must be held for writing.
func (s *Store) indexText(m, old *Memory) {
	s.setMentionsLocked(m.ID, mentionsOf(m.Text, m.CreatedAt, s.loc))
	if s.soft == nil {
		s.lex.Add(m.ID, m.Text)
		return
	}
	a := s.soft.Analyze(m.Text)
	s.lex.AddAnalysis(m.ID, a)
	if old != nil {
		s.words.Remove(old.Text)
	}
	s.words.AddAnalysis(a)
	s.softWords[m.ID] = a.Words
}

// uncountWords takes a hard-deleted memory's text out of the word counts. s.mu must be held for
// writing.
func (s *Store) uncountWords(m *Memory) {
	if s.words != nil {
		s.words.Remove(m.Text)
	}
}

// nudge wakes the background embedder without blocking.
func (s *Store) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// embedLoop fills in missing vectors, in batches, until none are pending; it retries failures
// with a growing pause and sleeps until nudged.
func (s *Store) embedLoop(ctx context.Context) {
	defer close(s.done)
	const batch = 32
	backoff := time.Second
	for {
		s.mu.RLock()
		ids := make([]uint64, 0, batch)
		texts := make([]string, 0, batch)
		for _, id := range s.ids { // oldest first, deterministic
			if _, ok := s.pending[id]; !ok {
				continue
			}
			ids = append(ids, id)
			texts = append(texts, s.mems[id].Text)
			if len(ids) == batch {
				break
			}
		}
		s.mu.RUnlock()
		if len(ids) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				continue
			}
		}
		vecs, err := s.emb.Embed(ctx, texts, vector.Document)
		if err == nil {
			err = s.storeVectors(ids, texts, vecs)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.setEmbedError(err)
			s.log.Warn().Err(err).Int("pending", len(ids)).Dur("retry_in", backoff).Msg("background embedding failed")
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Minute)
			continue
		}
		backoff = time.Second
		s.setEmbedError(nil)
		s.mu.RLock()
		left := len(s.pending)
		s.mu.RUnlock()
		s.log.Info().Int("embedded", len(ids)).Int("pending", left).Msg("background embedding progress")
	}
}

// storeVectors writes vectors for memories whose text is still texts[i] (an update in between
// makes the vector stale, so it is skipped and stays pending).
func (s *Store) storeVectors(ids []uint64, texts []string, vecs [][]float32) error {
	if len(vecs) != len(ids) {
		return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(ids))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	var keep []int
	s.mu.RLock()
	for i, id := range ids {
		if m, ok := s.mems[id]; ok && m.Text == texts[i] {
			keep = append(keep, i)
		}
	}
	s.mu.RUnlock()
	err := s.db.Update(func(tx *kv.Tx) error {
		_, b := writeBuckets(tx)
		for _, i := range keep {
			if err := b.Put(kv.Key(ids[i]), encodeVector(s.embID, vecs[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store vectors: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modGen++
	for _, i := range keep {
		s.addVectorLocked(ids[i], vecs[i])
	}
	return nil
}

// addVectorLocked indexes v for id. s.mu must be held for writing.
func (s *Store) addVectorLocked(id uint64, v []float32) {
	if s.dense == nil {
		s.dense = vector.NewDense(len(v), 0, vector.HNSWConfig{})
	}
	if err := s.dense.Add(id, v); err != nil {
		s.log.Error().Err(err).Uint64("memory_id", id).Msg("index vector")
		s.pending[id] = struct{}{}
		return
	}
	delete(s.pending, id)
}

func (s *Store) setEmbedError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.embErr = ""
		return
	}
	s.embErr = err.Error()
}

// embed embeds texts for storage or search; a failure is recorded and returned, never fatal.
func (s *Store) embed(ctx context.Context, texts []string, kind vector.Kind) ([][]float32, error) {
	if s.emb == nil || len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.emb.Embed(ctx, texts, kind)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		s.setEmbedError(err)
		return nil, err
	}
	return vecs, nil
}

// newMemory is a validated memory to insert.
type newMemory struct {
	Memory
	Vector []float32 // nil: embed later
	Policy DedupPolicy
	// Key is the idempotency key, "" for none; Principal owns it and Sum is the text's
	// fingerprint (idempotency.go).
	Key, Principal string
	// Retry: answer an exact duplicate the same client wrote within RecentDuplicateWindow with
	// it (Remember's drafts; not imports).
	Retry bool
}

// NearDuplicate is a stored memory similar to a text being written.
type NearDuplicate struct {
	ID    uint64  `json:"id"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
}

// insertResult is the outcome of inserting one newMemory.
type insertResult struct {
	ID             uint64
	Skipped        bool // skip_if_near found an existing memory; ID is that memory
	Replayed       bool // an idempotency key or a recent exact duplicate answered; nothing stored
	NearDuplicates []NearDuplicate
	Contradictions []NearDuplicate
	Err            error // the item was refused (its supersedes, its idempotency key)

	sameAs int  // for a key repeated in one call: 1 + the index of the item that answers
	keyHit bool // answered by its idempotency key, which is recorded already
}

// insert stores every item in one transaction (one logical operation), after checking each for
// idempotency keys, recent exact duplicates, near duplicates according to its policy, possible
// contradictions and the memories it supersedes. The checks happen under s.writeMu against the
// cache and the writes queued before this one, so two identical calls at once store once; the
// write then joins the group commit (commit.go) and insert returns once it is in the file. A
// call that supersedes waits for the queue to drain and keeps s.writeMu until it is committed.
//
// It reads as its four steps: check each item (checkInsertLocked), plan the links its
// supersedes change (planInsertLocked), assign the ids (assignInsert), and commit
// (commitInsert).
func (s *Store) insert(items []*newMemory) ([]insertResult, error) {
	results := make([]insertResult, len(items))
	links := slices.ContainsFunc(items, func(it *newMemory) bool { return len(it.Supersedes) > 0 })
	full := s.fileFull() // quota.go: read before the locks, a stat
	snaps := s.presearch(items)
	s.writeMu.Lock()
	locked := true
	defer func() {
		if locked {
			s.writeMu.Unlock()
		}
	}()
	if links {
		s.drainLocked()
	}
	now := s.now().UTC()
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	if err := s.replayKeys(items, results, now); err != nil {
		return nil, err
	}
	s.mu.RLock()
	s.checkInsertLocked(items, results, snaps, full, now)
	plan, linked := s.planInsertLocked(items, results)
	s.mu.RUnlock()
	mems := s.assignInsert(items, results, plan, linked, now)
	release := func() {
		if !links {
			s.writeMu.Unlock()
			locked = false
		}
	}
	if err := s.commitInsert(items, results, mems, linked, now, gen, release); err != nil {
		return nil, fmt.Errorf("insert memories: %w", err)
	}
	return results, nil
}

// checkInsertLocked is insert's first step: it decides for each item not answered already (by
// its idempotency key) whether it is a retry of a recent exact duplicate (Replayed), which
// stored memories it nearly duplicates or may contradict, whether skip_if_near keeps one of
// them instead (Skipped), and whether the quotas let it be stored (else its Err). full is the
// file's quota error read before the locks (fileFull), snaps the items' presearches. s.mu is
// held for reading and s.writeMu held.
func (s *Store) checkInsertLocked(items []*newMemory, results []insertResult, snaps []*nearSnap, full error, now time.Time) {
	// The details of the texts compared for contradictions, each read once a call: near
	// duplicates recur across a batch's items.
	known := map[string]textDetails{}
	detailsOf := func(text string) textDetails {
		d, ok := known[text]
		if !ok {
			d = details(text)
			known[text] = d
		}
		return d
	}
	count := len(s.mems) + s.queuedLocked() // what the file holds, against MaxMemories
	for i, it := range items {
		r := &results[i]
		if r.Replayed || r.Err != nil || r.sameAs != 0 {
			continue
		}
		if it.Retry && it.Policy != DedupInsert {
			if id := s.recentDuplicateLocked(&it.Memory, now); id != 0 {
				r.ID, r.Replayed = id, true
				continue
			}
		}
		if it.Policy != DedupInsert {
			exclude := func(id uint64) bool { return slices.Contains(it.Supersedes, id) }
			similar := s.nearLocked(it.Text, it.Vector, snaps[i], exclude)
			for _, d := range similar {
				if d.Score >= s.dedupThreshold && len(r.NearDuplicates) < 5 {
					r.NearDuplicates = append(r.NearDuplicates, d)
				}
				if d.Score >= ContradictionThreshold && detailsOf(it.Text).differ(detailsOf(d.Text)) {
					r.Contradictions = append(r.Contradictions, d)
				}
			}
			if it.Policy == DedupSkipIfNear && len(r.NearDuplicates) > 0 {
				r.ID, r.Skipped = r.NearDuplicates[0].ID, true
			}
		}
		if !r.Skipped { // it would be stored: the quotas (quota.go)
			if err := cmp.Or(full, s.countFull(count)); err != nil {
				*r = insertResult{Err: err}
				continue
			}
			count++
		}
	}
}

// planInsertLocked is insert's second step: it plans the supersedes links of the items that
// passed the checks, in item order (an item whose links the rules refuse gets that Err), with
// the items not stored yet named by their stand-in ids (pendingBase), and returns the plan
// with copies of the stored memories it changes: those superseded, forgotten successors that
// stop listing them, and the memories skip_if_near kept, which gain the supersedes. s.mu is
// held for reading and s.writeMu held.
func (s *Store) planInsertLocked(items []*newMemory, results []insertResult) (*linkPlan, map[uint64]*Memory) {
	plan := newLinkPlan()
	for i, it := range items {
		r := &results[i]
		if r.Replayed || r.Err != nil || r.sameAs != 0 || len(it.Supersedes) == 0 {
			continue
		}
		successor := pendingBase + uint64(i)
		if r.Skipped {
			successor = r.ID
		}
		next, err := s.planSupersedesLocked(plan, successor, it.Supersedes)
		if err != nil {
			*r = insertResult{Err: err}
			continue
		}
		plan = next
	}
	linked := map[uint64]*Memory{}
	for _, id := range plan.ids() {
		linked[id] = s.mems[id].Clone()
	}
	for i, it := range items {
		if r := results[i]; r.Skipped && r.Err == nil && len(it.Supersedes) > 0 && linked[r.ID] == nil {
			linked[r.ID] = s.mems[r.ID].Clone()
		}
	}
	return plan, linked
}

// assignInsert is insert's third step: it gives each item to store the next id of s.seq (which
// the commit writes back as the bucket's sequence), applies the plan to the linked memories
// with those ids (dropping the ones it leaves unchanged, touching the others at now), and
// answers each item whose idempotency key an earlier item of the call carries with that
// item's outcome. It returns the memories to store, in item order. s.writeMu is held.
func (s *Store) assignInsert(items []*newMemory, results []insertResult, plan *linkPlan, linked map[uint64]*Memory, now time.Time) []queuedMemory {
	var mems []queuedMemory
	for i, it := range items {
		if r := results[i]; r.Err == nil && !r.Skipped && !r.Replayed && r.sameAs == 0 {
			s.seq++
			it.ID, results[i].ID = s.seq, s.seq
			mems = append(mems, queuedMemory{m: &it.Memory, vec: it.Vector})
		}
	}
	resolve := func(id uint64) uint64 {
		if id >= pendingBase {
			return results[id-pendingBase].ID
		}
		return id
	}
	for id, m := range linked {
		changed := plan.apply(m, resolve)
		for i, it := range items {
			if r := results[i]; r.Skipped && r.ID == id && r.Err == nil && addSupersedes(m, it.Supersedes) {
				changed = true
			}
		}
		if !changed {
			delete(linked, id)
			continue
		}
		m.UpdatedAt = now
	}
	for i := range results {
		if j := results[i].sameAs; j != 0 {
			r := results[j-1]
			results[i] = insertResult{ID: r.ID, Skipped: r.Skipped, Replayed: true, Err: r.Err, keyHit: true}
		}
	}
	return mems
}

// commitInsert is insert's last step: it queues for the group commit (commit.go) the new
// memories mems, the linked memories the plan changed and the items' idempotency keys, with
// their change to the caches, and waits until they are in the file. release is called once
// the write is queued (insert lets go of s.writeMu there unless the call supersedes); gen is
// s.gen as insert's checks saw it. s.writeMu is held.
func (s *Store) commitInsert(items []*newMemory, results []insertResult, mems []queuedMemory, linked map[uint64]*Memory, now time.Time, gen uint64, release func()) error {
	keys := map[string]idempotencyRecord{}
	for i, it := range items {
		if r := results[i]; it.Key != "" && r.Err == nil && !r.keyHit {
			keys[string(idempotencyKey(it.Principal, it.Key))] = idempotencyRecord{At: now, Sum: textSum(it.Text), ID: r.ID, Existing: r.Skipped}
		}
	}
	prune := now.Sub(s.prunedAt) >= pruneEvery
	if prune {
		s.prunedAt = now
	}
	req := &commitReq{mems: mems, keys: keys}
	if len(mems) > 0 || len(linked) > 0 || len(keys) > 0 || prune {
		req.write = s.insertWrite(mems, linked, keys, now, prune)
	}
	req.apply = func() []uint64 { return s.insertApplyLocked(mems, linked, now) }
	req.wake = s.emb != nil && slices.ContainsFunc(mems, func(q queuedMemory) bool { return q.vec == nil })
	lead, err := s.enqueue(req, gen)
	if err != nil {
		return err
	}
	release()
	return s.await(req, lead)
}

// insertWrite is the puts of an insert, for the group's transaction: the new memories and
// their vectors, the bucket's sequence (s.seq as it is now), the linked memories the plan
// changed, and the idempotency keys (pruning the expired ones if prune).
func (s *Store) insertWrite(mems []queuedMemory, linked map[uint64]*Memory, keys map[string]idempotencyRecord, now time.Time, prune bool) func(tx *kv.Tx) error {
	seq := s.seq
	return func(tx *kv.Tx) error {
		mb, vb := writeBuckets(tx)
		for _, q := range mems {
			b, err := encodeMemory(q.m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(q.m.ID), b); err != nil {
				return err
			}
			if q.vec != nil {
				if err := vb.Put(kv.Key(q.m.ID), encodeVector(s.embID, q.vec)); err != nil {
					return err
				}
			}
		}
		if seq > mb.Sequence() {
			if err := mb.SetSequence(seq); err != nil {
				return err
			}
		}
		for id, m := range linked {
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(id), b); err != nil {
				return err
			}
		}
		return s.rememberKeys(tx, keys, now, prune)
	}
}

// insertApplyLocked is an insert's change to the caches once it is in the file: the new
// memories indexed (their vectors, or pending for the background embedder), the linked ones
// replaced. It returns the ids changed, ascending, for the OnChange hooks. s.mu is held for
// writing.
func (s *Store) insertApplyLocked(mems []queuedMemory, linked map[uint64]*Memory, now time.Time) []uint64 {
	var ids []uint64
	for _, q := range mems {
		m := q.m.Clone()
		s.addRecentLocked(m, now)
		s.mems[m.ID] = m
		s.ids = append(s.ids, m.ID)
		s.indexText(m, nil)
		s.linkLocked(m, false)
		if q.vec != nil {
			s.addVectorLocked(m.ID, q.vec)
		} else if s.emb != nil {
			s.pending[m.ID] = struct{}{}
		}
		ids = append(ids, m.ID)
	}
	s.addCreatedLocked(mems)
	if len(linked) > 0 {
		s.modGen++
	}
	for id, m := range linked {
		s.mems[id] = m
		ids = append(ids, id)
	}
	for _, id := range ids {
		s.refreshSupersededLocked(id)
	}
	slices.Sort(ids)
	return ids
}

func round4(f float32) float32 { return float32(int(f*10000+0.5)) / 10000 }

// modify applies change to copies of the named memories and writes those it reports as changed
// in one Update; a nil change result means unchanged. A text change drops the stale vector and
// re-indexes; vecs supplies new vectors by id (missing: embedded later).
func (s *Store) modify(ids []uint64, change func(m *Memory) (bool, error), vecs map[uint64][]float32) (map[uint64]error, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	return s.modifyLocked(ids, change, vecs)
}

// modifyLocked is modify for a caller that holds s.writeMu (one that chose ids under it).
func (s *Store) modifyLocked(ids []uint64, change func(m *Memory) (bool, error), vecs map[uint64][]float32) (map[uint64]error, error) {
	return s.modifyAddLocked(ids, change, vecs, nil)
}

// modifyAddLocked is modifyLocked that also stores, in the same transaction, the new memories
// that added returns once change has run for every id (Update's previous versions), with the
// ids change gave them (from s.seq). added may be nil.
func (s *Store) modifyAddLocked(ids []uint64, change func(m *Memory) (bool, error), vecs map[uint64][]float32, added func() []*Memory) (map[uint64]error, error) {
	errs := make(map[uint64]error)
	changed := make(map[uint64]*Memory)
	s.mu.RLock()
	for _, id := range ids {
		m, ok := s.mems[id]
		if !ok {
			errs[id] = notFound(id)
			continue
		}
		c := m.Clone()
		ok, err := change(c)
		if err != nil {
			errs[id] = err
			continue
		}
		if ok {
			changed[id] = c
		}
	}
	s.mu.RUnlock()
	var adds []*Memory
	if added != nil {
		adds = added()
	}
	if len(changed) == 0 && len(adds) == 0 {
		return errs, nil
	}
	seq := s.seq
	err := s.db.Update(func(tx *kv.Tx) error {
		mb, vb := writeBuckets(tx)
		for _, m := range adds {
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(m.ID), b); err != nil {
				return err
			}
		}
		if seq > mb.Sequence() {
			if err := mb.SetSequence(seq); err != nil {
				return err
			}
		}
		for id, m := range changed {
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(id), b); err != nil {
				return err
			}
			if m.Text != s.mems[id].Text {
				if v := vecs[id]; v != nil {
					err = vb.Put(kv.Key(id), encodeVector(s.embID, v))
				} else {
					err = vb.Delete(kv.Key(id))
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update memories: %w", err)
	}
	s.mu.Lock()
	s.modGen++
	wake := false
	now := s.now().UTC()
	for id, m := range changed {
		if m.Text != s.mems[id].Text {
			s.addRecentLocked(m, now)
			s.indexText(m, s.mems[id])
			if v := vecs[id]; v != nil {
				s.addVectorLocked(id, v)
			} else if s.emb != nil {
				if s.dense != nil {
					s.dense.Remove(id)
				}
				s.pending[id] = struct{}{}
				wake = true
			}
		}
		if voiceOf(m) != voiceOf(s.mems[id]) { // forgotten words count for nobody
			s.lex.SetContext(id, s.neighboursLocked(nil, id), voiceOf(m))
		}
		s.mems[id] = m
	}
	for _, m := range adds {
		m = m.Clone()
		s.mems[m.ID] = m
		s.ids = append(s.ids, m.ID)
		s.indexText(m, nil)
		s.linkLocked(m, false)
		if s.emb != nil {
			s.pending[m.ID] = struct{}{}
			wake = true
		}
		s.addCreatedLocked([]queuedMemory{{m: m}})
	}
	for id := range changed {
		s.refreshSupersededLocked(id)
	}
	for _, m := range adds {
		s.refreshSupersededLocked(m.ID)
	}
	s.mu.Unlock()
	if wake {
		s.nudge()
	}
	ids = ids[:0:0]
	for id := range changed {
		ids = append(ids, id)
	}
	for _, m := range adds {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	s.changed(ids)
	return errs, nil
}

// hardDelete removes a memory, its vector and its index entries in one Update. Its id is never
// reused (the bucket's sequence only grows).
func (s *Store) hardDelete(id uint64) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	s.mu.RLock()
	_, ok := s.mems[id]
	s.mu.RUnlock()
	if !ok {
		return notFound(id)
	}
	return s.eraseLocked([]uint64{id})
}

// eraseLocked removes stored memories, their vectors and their index entries in one Update, and
// tells the OnChange hooks. The caller holds s.writeMu and has checked that every id is stored.
func (s *Store) eraseLocked(ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	fixed := s.unlinkErasedLocked(ids) // the other ends of their supersedes links
	err := s.db.Update(func(tx *kv.Tx) error {
		mb, vb := writeBuckets(tx)
		for _, id := range ids {
			if err := mb.Delete(kv.Key(id)); err != nil {
				return err
			}
			if err := vb.Delete(kv.Key(id)); err != nil {
				return err
			}
		}
		for id, m := range fixed {
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(id), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete memories: %w", err)
	}
	gone := make(map[uint64]bool, len(ids))
	s.mu.Lock()
	s.modGen++
	for _, id := range ids {
		s.unlinkLocked(id) // while the neighbours on either side are still in s.mems
	}
	for _, id := range ids {
		gone[id] = true
		delete(s.mentioning, id)
		delete(s.softWords, id)
		s.uncountWords(s.mems[id])
		delete(s.mems, id)
		s.markLocked(id)
		delete(s.pending, id)
		s.lex.Remove(id)
		if s.dense != nil {
			s.dense.Remove(id)
		}
	}
	s.ids = slices.DeleteFunc(s.ids, func(id uint64) bool { return gone[id] })
	s.created = slices.DeleteFunc(s.created, func(e createdID) bool { return gone[e.id] })
	for id, m := range fixed {
		s.mems[id] = m
		s.refreshSupersededLocked(id)
		gone[id] = true // changed, for the hooks
	}
	s.mu.Unlock()
	s.changed(slices.Sorted(maps.Keys(gone)))
	return nil
}
