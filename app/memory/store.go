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
	// Rank, if set, replaces the ranking's knobs, for measuring them (cmd/evalsvc).
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
