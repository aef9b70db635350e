package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

// Store is the memories of the one file, with the rules of what they may hold and what each
// operation does to them.
//
// bbolt is the truth; the store keeps a cache of every memory record plus the lexical and vector
// indexes, rebuilt from the file by Open. Writers are serialized by writeMu and commit to the
// file before the cache changes, so a reader never sees a memory the file does not hold. All
// methods are safe for concurrent use; the memories they return are copies the caller owns.
type Store struct {
	db              *kv.DB
	emb             vector.Embedder // nil: lexical search only
	wLex, wDense    float32         // Fuse weights of BM25 and of the embedder's cosine
	minCos, margin  float32         // dense hits below this cosine, or this far below the best, are dropped
	soft            *vector.Builtin // re-ranks candidates by soft term match; nil for other embedders
	wSoft           float32
	ctxLex, ctxSoft float32            // how much a memory's context counts, in BM25 and in the soft match
	words           *vector.WordCounts // the store's word counts, which weigh soft matches; nil without soft
	embID           string             // emb.Info().String(); "" when emb is nil
	now             func() time.Time
	loc             *time.Location // of the calendar in questions; nil: time.Local
	log             zerolog.Logger
	maxText         int
	dedupThreshold  float32

	writeMu  sync.Mutex // serializes writers: one Update and its cache change at a time
	prunedAt time.Time  // when a write last removed expired idempotency keys; guarded by writeMu

	mu      sync.RWMutex // guards the fields below
	mems    map[uint64]*Memory
	ids     []uint64 // every stored id, ascending
	lex     *vector.BM25
	links   map[uint64]contextLink  // every stored memory's place in its context group (context.go)
	tails   map[contextGroup]uint64 // each context group's newest memory
	near    map[uint64][]uint64     // the memories with a context: their neighbours (context.go)
	dense   *vector.Dense           // nil when emb is nil or its dimension is not yet known
	pending map[uint64]struct{}     // memories that lack a vector of the current embedder
	embErr  string                  // the last embedding failure, "" once embedding works again

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
	// Context, if set, replaces how much the words of a memory's context count in search,
	// for measuring it (app/internal/evalsvc); {0, 0} searches without context. If nil,
	// vector.ContextLexicalWeight and vector.ContextSoftWeight.
	Context *ContextWeights
	// Location is the time zone of the calendar in questions ("yesterday", "last week"). If
	// nil, time.Local.
	Location *time.Location
}

// ContextWeights are how much the words of a memory's context (the memories written with it,
// see ContextWindow) count for it in search: Lexical is the share of a neighbour's BM25 score
// credited to the memory, Soft the discount of a neighbour's soft term match.
type ContextWeights struct{ Lexical, Soft float32 }

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
	s := &Store{
		db:             db,
		emb:            cfg.Embedder,
		now:            cfg.Now,
		loc:            cfg.Location,
		log:            cfg.Log,
		maxText:        cfg.MaxTextChars,
		dedupThreshold: float32(cfg.DedupThreshold),
		mems:           make(map[uint64]*Memory),
		lex:            vector.NewBM25(),
		links:          make(map[uint64]contextLink),
		tails:          make(map[contextGroup]uint64),
		near:           make(map[uint64][]uint64),
		pending:        make(map[uint64]struct{}),
		wake:           make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.ctxLex, s.ctxSoft = vector.ContextLexicalWeight, vector.ContextSoftWeight
	if cfg.Context != nil {
		s.ctxLex, s.ctxSoft = cfg.Context.Lexical, cfg.Context.Soft
	}
	s.wLex, s.wDense, s.minCos = 0.5, 0.5, -1
	if b, ok := s.emb.(*vector.Builtin); ok {
		words, err := vector.NewWordCounts()
		if err != nil {
			return nil, fmt.Errorf("builtin embedder: %w", err)
		}
		s.wLex, s.wDense = vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight
		s.soft, s.wSoft, s.words = b, vector.BuiltinSoftWeight, words
		s.minCos, s.margin = vector.BuiltinMinCosine, vector.BuiltinCosineMargin
	}
	if s.emb != nil {
		s.embID = s.emb.Info().String()
		if d := s.emb.Info().Dim; d > 0 {
			s.dense = vector.NewDense(d, -1, vector.HNSWConfig{})
		}
	}
	err := db.View(func(tx *kv.Tx) error {
		err := tx.Bucket(bucketMemories).ForEach(func(k, v []byte) error {
			m, err := decodeMemory(v)
			if err != nil {
				return fmt.Errorf("memory %d: %w", kv.ID(k), err)
			}
			s.mems[m.ID] = m
			s.ids = append(s.ids, m.ID)
			s.lex.Add(m.ID, m.Text)
			s.linkLocked(m, true) // in id order, as they were written
			s.countWords(m.Text, "")
			return nil
		})
		if err != nil || s.emb == nil {
			return err
		}
		vecs := tx.Bucket(bucketVectors)
		for _, id := range s.ids {
			b := vecs.Get(kv.Key(id))
			if b == nil {
				s.pending[id] = struct{}{}
				continue
			}
			embedder, v, err := decodeVector(b)
			if err != nil || embedder != s.embID {
				s.pending[id] = struct{}{}
				continue
			}
			if s.dense == nil {
				s.dense = vector.NewDense(len(v), -1, vector.HNSWConfig{})
			}
			if err := s.dense.Add(id, v); err != nil {
				s.pending[id] = struct{}{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load memories: %w", err)
	}
	s.nearAllLocked()
	for _, m := range s.mems {
		m.superseded = s.isSupersededLocked(m)
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

// OnChange registers fn to be called after every write that changed memories (remember,
// update, confirm, forget, delete, import), with the ids it changed, once the write is in the
// file. Every writer goes through the store, so fn hears of them all: tools, the admin socket's
// import, the console. fn runs on the writer's goroutine while other writers wait: it may read
// the store but must not write to it, nor block for long.
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

// countWords moves the word counts that weigh soft matches from old text to new ("" for none).
// Like the lexical index they cover every stored memory, forgotten ones included. s.mu must be
// held for writing, or the service not yet shared.
func (s *Store) countWords(text, old string) {
	if s.words == nil {
		return
	}
	if old != "" {
		s.words.Remove(old)
	}
	if text != "" {
		s.words.Add(text)
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
	var keep []int
	s.mu.RLock()
	for i, id := range ids {
		if m, ok := s.mems[id]; ok && m.Text == texts[i] {
			keep = append(keep, i)
		}
	}
	s.mu.RUnlock()
	err := s.db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketVectors)
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

// insert stores every item in one Update (one logical operation), after checking each for
// idempotency keys, recent exact duplicates, near duplicates according to its policy, possible
// contradictions and the memories it supersedes. All of it happens under s.writeMu, so two
// identical calls at once store once.
func (s *Store) insert(items []*newMemory) ([]insertResult, error) {
	results := make([]insertResult, len(items))
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	now := s.now().UTC()
	if err := s.replayKeys(items, results, now); err != nil {
		return nil, err
	}
	plan := newLinkPlan()
	s.mu.RLock()
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
			similar := s.similarLocked(it.Text, it.Vector, 10, min(ContradictionThreshold, s.dedupThreshold), exclude)
			for _, d := range similar {
				if d.Score >= s.dedupThreshold && len(r.NearDuplicates) < 5 {
					r.NearDuplicates = append(r.NearDuplicates, d)
				}
				if d.Score >= ContradictionThreshold && DetailsDiffer(it.Text, d.Text) {
					r.Contradictions = append(r.Contradictions, d)
				}
			}
			if it.Policy == DedupSkipIfNear && len(r.NearDuplicates) > 0 {
				r.ID, r.Skipped = r.NearDuplicates[0].ID, true
			}
		}
		if len(it.Supersedes) > 0 {
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
	}
	// The stored memories the links change: those superseded, forgotten successors that stop
	// listing them, and the memories skip_if_near kept, which gain the supersedes.
	linked := map[uint64]*Memory{}
	for _, id := range plan.ids() {
		linked[id] = s.mems[id].Clone()
	}
	for i, it := range items {
		if r := results[i]; r.Skipped && r.Err == nil && len(it.Supersedes) > 0 && linked[r.ID] == nil {
			linked[r.ID] = s.mems[r.ID].Clone()
		}
	}
	s.mu.RUnlock()
	stored := func(i int) bool {
		r := results[i]
		return r.Err == nil && !r.Skipped && !r.Replayed && r.sameAs == 0
	}
	err := s.db.Update(func(tx *kv.Tx) error {
		mb, vb := tx.Bucket(bucketMemories), tx.Bucket(bucketVectors)
		for i, it := range items {
			if !stored(i) {
				continue
			}
			id, err := mb.NextSequence()
			if err != nil {
				return err
			}
			it.ID = id
			results[i].ID = id
		}
		for i, it := range items {
			if !stored(i) {
				continue
			}
			b, err := encodeMemory(&it.Memory)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(it.ID), b); err != nil {
				return err
			}
			if it.Vector != nil {
				if err := vb.Put(kv.Key(it.ID), encodeVector(s.embID, it.Vector)); err != nil {
					return err
				}
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
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(id), b); err != nil {
				return err
			}
		}
		for i := range results {
			if j := results[i].sameAs; j != 0 {
				r := results[j-1]
				results[i] = insertResult{ID: r.ID, Skipped: r.Skipped, Replayed: true, Err: r.Err, keyHit: true}
			}
		}
		return s.rememberKeys(tx, items, results, now)
	})
	if err != nil {
		return nil, fmt.Errorf("insert memories: %w", err)
	}
	s.mu.Lock()
	wake := false
	for i, it := range items {
		if !stored(i) {
			continue
		}
		m := it.Memory.Clone()
		s.mems[m.ID] = m
		s.ids = append(s.ids, m.ID)
		s.lex.Add(m.ID, m.Text)
		s.linkLocked(m, false)
		s.countWords(m.Text, "")
		if it.Vector != nil {
			s.addVectorLocked(m.ID, it.Vector)
		} else if s.emb != nil {
			s.pending[m.ID] = struct{}{}
			wake = true
		}
	}
	var ids []uint64
	for id, m := range linked {
		s.mems[id] = m
		ids = append(ids, id)
	}
	for i := range items {
		if stored(i) {
			ids = append(ids, results[i].ID)
		}
	}
	for _, id := range ids {
		s.refreshSupersededLocked(id)
	}
	s.mu.Unlock()
	if wake {
		s.nudge()
	}
	slices.Sort(ids)
	s.changed(ids)
	return results, nil
}

// similarLocked finds active, current (not superseded) memories whose similarity to text (by
// vector when one is given, else lexically) is at least threshold, best first, at most limit,
// leaving out those exclude names (nil: none). s.mu must be held.
func (s *Store) similarLocked(text string, vec []float32, limit int, threshold float32, exclude func(uint64) bool) []NearDuplicate {
	now := s.now()
	filter := func(id uint64) bool {
		m := s.mems[id]
		return m != nil && m.Active(now) && !m.superseded && (exclude == nil || !exclude(id))
	}
	var out []NearDuplicate
	if vec != nil && s.dense != nil && len(vec) == s.dense.Dim() {
		for _, r := range s.dense.Search(vec, limit, filter) {
			if r.Score >= threshold {
				out = append(out, NearDuplicate{ID: r.ID, Text: s.mems[r.ID].Text, Score: round4(r.Score)})
			}
		}
		return out
	}
	for _, r := range s.lex.Search(text, 4*limit, filter) {
		m := s.mems[r.ID]
		if sim := vector.LexicalSimilarity(text, m.Text); sim >= threshold {
			out = append(out, NearDuplicate{ID: r.ID, Text: m.Text, Score: round4(sim)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func round4(f float32) float32 { return float32(int(f*10000+0.5)) / 10000 }

// modify applies change to copies of the named memories and writes those it reports as changed
// in one Update; a nil change result means unchanged. A text change drops the stale vector and
// re-indexes; vecs supplies new vectors by id (missing: embedded later).
func (s *Store) modify(ids []uint64, change func(m *Memory) (bool, error), vecs map[uint64][]float32) (map[uint64]error, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.modifyLocked(ids, change, vecs)
}

// modifyLocked is modify for a caller that holds s.writeMu (one that chose ids under it).
func (s *Store) modifyLocked(ids []uint64, change func(m *Memory) (bool, error), vecs map[uint64][]float32) (map[uint64]error, error) {
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
	if len(changed) == 0 {
		return errs, nil
	}
	err := s.db.Update(func(tx *kv.Tx) error {
		mb, vb := tx.Bucket(bucketMemories), tx.Bucket(bucketVectors)
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
	wake := false
	for id, m := range changed {
		if m.Text != s.mems[id].Text {
			s.lex.Add(id, m.Text)
			s.countWords(m.Text, s.mems[id].Text)
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
			s.lex.SetContext(id, s.near[id], voiceOf(m))
		}
		s.mems[id] = m
	}
	for id := range changed {
		s.refreshSupersededLocked(id)
	}
	s.mu.Unlock()
	if wake {
		s.nudge()
	}
	ids = ids[:0:0]
	for id := range changed {
		ids = append(ids, id)
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
		mb, vb := tx.Bucket(bucketMemories), tx.Bucket(bucketVectors)
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
	for _, id := range ids {
		s.unlinkLocked(id) // while the neighbours on either side are still in s.mems
	}
	for _, id := range ids {
		gone[id] = true
		s.countWords("", s.mems[id].Text)
		delete(s.mems, id)
		delete(s.pending, id)
		s.lex.Remove(id)
		if s.dense != nil {
			s.dense.Remove(id)
		}
	}
	s.ids = slices.DeleteFunc(s.ids, func(id uint64) bool { return gone[id] })
	for id, m := range fixed {
		s.mems[id] = m
		s.refreshSupersededLocked(id)
		gone[id] = true // changed, for the hooks
	}
	s.mu.Unlock()
	s.changed(slices.Sorted(maps.Keys(gone)))
	return nil
}
