package memory

// Import: the domain's side of an import. An importer (app/importers) reads memories from a
// file, ownsona's export or another server's, and hands them to an Import as ImportRecords;
// the Import checks each as remember does, skips what is stored already, stores the rest in
// batches and restores the links between them at the end.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// importBatch is how many memories one transaction stores.
const importBatch = 200

// ImportStats is what an import did.
type ImportStats struct {
	Format   string // the format read (ImportConfig.Format)
	Read     int    // memories read from the input
	Imported int    // stored
	Skipped  int    // already stored (a re-import adds nothing twice)
	Bad      int    // lines or items that could not be read or were refused, each reported
	// LinksSkipped counts the supersedes links of the input that were not restored because
	// the rules refuse them (supersede.go): a link that would close a cycle, or that would
	// give a memory a second current successor.
	LinksSkipped int
}

// ImportError is one line or item of the input that was not imported, and why. Line is set
// for formats read line by line (JSON Lines, Markdown and text), Item (from 1) for the
// elements of a JSON document; the other is zero.
type ImportError struct {
	Line  int    `json:"line,omitempty"`
	Item  int    `json:"item,omitempty"`
	Error string `json:"error"`
}

// String reads "line 3: not JSON: …" or "item 3: …".
func (e ImportError) String() string {
	if e.Line == 0 && e.Item != 0 {
		return fmt.Sprintf("item %d: %s", e.Item, e.Error)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Error)
}

// ImportPos is where an item sits in the input: its line (from 1), or its index (from 1) in a
// document; the other is zero.
type ImportPos struct{ Line, Item int }

// ImportRecord is one memory an importer read. Its fields are the memory's as the source has
// them; those it lacks are filled as an import fills them (the creation time, and importance,
// are the import's; the times after it the creation time; source and capture mode "import").
// ID, ReplacedByID, Supersedes and SupersededBy are in the source's ids (0 and nil: none): the
// import gives the memory an id of the store and points the links at the memories they
// name once those are stored too.
type ImportRecord struct {
	Memory
	// TextOnly marks a record without times of its own: it is stored already when the same
	// text is. Otherwise the same text written at the same time is.
	TextOnly bool
}

// ImportConfig is what NewImport needs besides the store.
type ImportConfig struct {
	// Format names the input's format, for ImportStats.Format.
	Format string
	// Progress is told the counts so far after each stored batch and every few hundred
	// items, from the importing goroutine. Optional.
	Progress func(ImportStats)
	// OnError is told of each line or item not imported, in input order. Optional.
	OnError func(ImportError)
	// MaxDuration caps how long the import runs, by the store's clock (Config.Now), checked
	// by Tick; past it Tick returns a *LimitError. If zero, no cap.
	MaxDuration time.Duration
}

// Import is one import into the store, fed by an importer: Add for each item read, Bad for
// each that could not be read, Tick for each line or element, then Finish (or Stop when the
// input breaks off). It is not safe for concurrent use; the store's other callers go on
// meanwhile.
type Import struct {
	s     *Store
	ctx   context.Context
	cfg   ImportConfig
	st    ImportStats
	seen  map[seenKey]uint64 // importKey or textKey → stored id (0: in this import, not stored yet)
	newID map[uint64]uint64  // the source's id → ours
	batch []*importRecord
	links []*importRecord // stored records whose source named a replacement
	items int             // items read since the last progress report
	ticks int             // lines and elements read (Tick)
	// deadline ends the import (cfg.MaxDuration), by the store's clock; zero: none.
	deadline time.Time
}

// NewImport begins an import into s. What is stored already (the same text written at the
// same time; for records without times, the same text) is skipped, and a source's link to it
// follows it. ctx ends the import at the next Tick or batch.
func (s *Store) NewImport(ctx context.Context, cfg ImportConfig) *Import {
	im := &Import{s: s, ctx: ctx, cfg: cfg, st: ImportStats{Format: cfg.Format}, newID: map[uint64]uint64{}, seen: map[seenKey]uint64{}}
	if cfg.MaxDuration > 0 {
		im.deadline = s.now().Add(cfg.MaxDuration)
	}
	s.Each(Filter{IncludeDeleted: true}, func(m *Memory) bool {
		im.seen[importKey(m)] = m.ID
		im.seen[textKey(m.Text)] = m.ID
		return true
	})
	return im
}

// MaxTextChars is the most characters a memory's text may have (Config.MaxTextChars): what
// an importer may hold of one item is a few times that.
func (s *Store) MaxTextChars() int { return s.maxText }

// seenKey identifies a memory's text (and creation time) without holding the text: an import
// remembers one for every stored memory.
type seenKey [20]byte

// importKey identifies a memory across imports: the same text written at the same time.
func importKey(m *Memory) seenKey {
	h := sha256.New()
	h.Write([]byte(m.CreatedAt.UTC().Format(time.RFC3339Nano)))
	h.Write([]byte{0})
	h.Write([]byte(m.Text))
	var sum [sha256.Size]byte
	return seenKey(h.Sum(sum[:0])[:20])
}

// textKey identifies a record without times of its own: the same text is the same memory.
func textKey(text string) seenKey {
	sum := sha256.Sum256([]byte("\x00" + text))
	return seenKey(sum[:20])
}

// importRecord is one memory to import, with the id it had in the source (0 if none).
type importRecord struct {
	Memory
	oldID    uint64
	oldRepBy *uint64
	// oldSup and oldSupBy are the record's supersedes links in the source's ids.
	oldSup   []uint64
	oldSupBy *uint64
	textOnly bool // a record without times of its own: the same text is the same memory
}

// Tick is called for every line or element an importer reads: every few hundred it checks
// that the import may go on (ctx, ImportConfig.MaxDuration).
func (im *Import) Tick() error {
	if im.ticks++; im.ticks%256 != 0 {
		return nil
	}
	if err := im.ctx.Err(); err != nil {
		return err
	}
	if !im.deadline.IsZero() && im.s.now().After(im.deadline) {
		return &LimitError{Limit: "import-time", Message: fmt.Sprintf("the import ran longer than %s, the most one import may take; "+
			"what was stored before stays (importing the file again skips it): split the file", im.cfg.MaxDuration)}
	}
	return nil
}

// Add checks the records of one item at pos and queues them, all or none: a record that
// fails makes the whole item bad, which is reported to ImportConfig.OnError. Records already
// stored are counted as skipped. A full batch is stored; err is a storage failure, ctx
// ending, or a quota (a *LimitError), after which nothing more can be stored.
func (im *Import) Add(pos ImportPos, recs []*ImportRecord) error {
	queued := make([]*importRecord, len(recs))
	var err error
	for i, r := range recs {
		rec := &importRecord{Memory: r.Memory, textOnly: r.TextOnly, oldID: r.ID, oldRepBy: r.ReplacedByID}
		rec.ID, rec.ReplacedByID = 0, nil
		if rec.Supersedes != nil || rec.SupersededBy != nil { // linked by id once all are stored
			rec.oldSup, rec.oldSupBy = rec.Supersedes, rec.SupersededBy
			rec.Supersedes, rec.SupersededBy = nil, nil
		}
		queued[i] = rec
		if err = im.s.checkImported(&rec.Memory); err != nil {
			break
		}
	}
	if err != nil {
		im.Bad(pos, err)
		return nil
	}
	if len(im.batch)+len(queued) > importBatch {
		if err := im.flush(); err != nil {
			return err
		}
	}
	for _, rec := range queued {
		im.st.Read++
		key := importKey(&rec.Memory)
		if rec.textOnly {
			key = textKey(rec.Text)
		}
		if id, ok := im.seen[key]; ok {
			im.st.Skipped++
			if rec.oldID != 0 && id != 0 {
				im.newID[rec.oldID] = id
			}
			continue
		}
		im.seen[key] = 0 // the same memory twice in one file is imported once
		im.batch = append(im.batch, rec)
	}
	if im.items++; im.items >= 500 {
		im.report()
	}
	return nil
}

// Bad reports an item at pos that was not imported, and why.
func (im *Import) Bad(pos ImportPos, err error) {
	im.st.Bad++
	if im.cfg.OnError != nil {
		im.cfg.OnError(ImportError{Line: pos.Line, Item: pos.Item, Error: err.Error()})
	}
}

// Stats is what the import did so far.
func (im *Import) Stats() ImportStats { return im.st }

// Finish stores what is queued and restores the links between the memories of the input
// (tombstones' replaced_by_id, supersedes), in the store's ids.
func (im *Import) Finish() (ImportStats, error) {
	if err := im.flush(); err != nil {
		return im.st, err
	}
	if err := im.link(); err != nil {
		return im.st, err
	}
	im.report()
	return im.st, nil
}

// Stop ends an import whose input broke off with err: what is queued is stored, without the
// links, and err is returned.
func (im *Import) Stop(err error) (ImportStats, error) {
	if ferr := im.flush(); ferr == nil {
		im.report()
	}
	return im.st, err
}

// flush stores the queued batch in one transaction.
func (im *Import) flush() error {
	if len(im.batch) == 0 {
		return nil
	}
	if err := im.ctx.Err(); err != nil {
		return err
	}
	items := make([]*newMemory, len(im.batch))
	for i, rec := range im.batch {
		items[i] = &newMemory{Memory: rec.Memory, Policy: DedupInsert}
	}
	res, err := im.s.insert(items)
	if err != nil {
		return err
	}
	var refused error // a quota (quota.go): nothing more can be stored
	stored := 0
	for i, rec := range im.batch {
		if res[i].Err != nil {
			refused = cmp.Or(refused, res[i].Err)
			continue
		}
		stored++
		rec.ID = res[i].ID
		if rec.oldID != 0 {
			im.newID[rec.oldID] = rec.ID
		}
		if rec.oldRepBy != nil || rec.oldSup != nil || rec.oldSupBy != nil {
			im.links = append(im.links, rec)
		}
	}
	im.st.Imported += stored
	im.batch = im.batch[:0]
	im.report()
	return refused
}

// link points tombstones that named their replacement at its new id, and restores the
// supersedes links between memories of the input (either end may be one stored before).
func (im *Import) link() error {
	links := map[uint64]uint64{}
	var pairs [][2]uint64 // superseded, successor; each once, though both ends name it
	seen := map[[2]uint64]bool{}
	pair := func(p [2]uint64) {
		if !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	for _, rec := range im.links {
		if rec.oldRepBy != nil {
			if to, ok := im.newID[*rec.oldRepBy]; ok {
				links[rec.ID] = to
			}
		}
		if rec.oldSupBy != nil {
			if to, ok := im.newID[*rec.oldSupBy]; ok {
				pair([2]uint64{rec.ID, to})
			}
		}
		for _, old := range rec.oldSup {
			if from, ok := im.newID[old]; ok {
				pair([2]uint64{from, rec.ID})
			}
		}
	}
	if len(pairs) > 0 {
		skipped, err := im.s.linkSupersedes(pairs)
		if err != nil {
			return err
		}
		im.st.LinksSkipped += skipped
	}
	if len(links) == 0 {
		return nil
	}
	ids := make([]uint64, 0, len(links))
	for id := range links {
		ids = append(ids, id)
	}
	_, err := im.s.modify(ids, func(m *Memory) (bool, error) {
		to := links[m.ID]
		m.ReplacedByID = &to
		return true, nil
	}, nil)
	return err
}

func (im *Import) report() {
	im.items = 0
	if im.cfg.Progress != nil {
		im.cfg.Progress(im.st)
	}
}

// checkImported fills what a foreign record lacks and checks the memory with the one validator
// remember and update use.
func (s *Store) checkImported(m *Memory) error {
	now := s.now().UTC()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
		if m.Importance == 0 {
			m.Importance = DefaultImportance
		}
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if m.LastConfirmedAt.IsZero() {
		m.LastConfirmedAt = m.CreatedAt
	}
	if m.SourceProvider == "" {
		m.SourceProvider = "import"
	}
	if m.SourceClient == "" {
		m.SourceClient = "import"
	}
	if m.CaptureMode == "" {
		m.CaptureMode = CaptureImport
	}
	return s.check(m)
}
