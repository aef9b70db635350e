package memory

// Import: memories from ownsona's export and from the files of other memory servers (the
// formats are in import_formats.go and import_text.go), streamed into the store in batches.

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"time"
)

// importBatch is how many memories one transaction stores.
const importBatch = 200

// Bounds of one import (SECURITY.md UP-01): no input, however small, makes an import hold more
// than a few units of the input in memory, expand without end, or run for ever.
const (
	// DefaultMaxExpanded is what a compressed input may expand to when ImportOptions.MaxExpanded
	// is zero: every layer together (a zip's member and the gzip inside it).
	DefaultMaxExpanded = 1 << 30
	// MaxExpandedCeiling is the most ImportOptions.MaxExpanded may be; more is this.
	MaxExpandedCeiling = 4 << 30
	// DefaultMaxImportItems is how many items (lines of JSON Lines, elements of a JSON list,
	// paragraphs and list items of Markdown, imported or not) one import reads when
	// ImportOptions.MaxItems is zero.
	DefaultMaxImportItems = 1_000_000
	// MaxItemBytes is the most bytes one JSON item (a line of JSON Lines, an element of a
	// JSON document's list, any other value of the document) may take, or 8 bytes per
	// character of Config.MaxTextChars when that is more: a JSON item is buffered whole before
	// it is read, so a larger one stops the import (a longer line of JSON Lines is skipped
	// and reported). A paragraph or list item of Markdown is refused past 4 bytes per
	// character of the text limit (and 4 KiB for spaces), without being buffered.
	MaxItemBytes = 4 << 20
)

// ImportStats is what an import did.
type ImportStats struct {
	Format   string // the format read: one of ImportFormats
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

// ImportOptions tune ImportFrom.
type ImportOptions struct {
	// Format is the input's format (ImportFormats, or an alias ParseImportFormat takes). If
	// empty, it is detected from the content (DetectImportFormat).
	Format string
	// Client, when set, is the source_client of every imported memory: the principal that
	// uploaded the file. If empty, ownsona records keep theirs and others get "import".
	Client string
	// Progress is told the counts so far after each stored batch and every few hundred
	// items read, from the importing goroutine. Optional.
	Progress func(ImportStats)
	// OnError is told of each line or item not imported, in input order. Optional.
	OnError func(ImportError)
	// MaxExpanded caps what a compressed input expands to, all layers together; past it the
	// import stops with a *LimitError naming MaxExpandedLimit. If zero or negative,
	// DefaultMaxExpanded; never more than MaxExpandedCeiling.
	MaxExpanded int64
	// MaxExpandedLimit names the setting MaxExpanded follows in the error past it (uploads:
	// "max-upload-mb"). If empty, "import-expanded".
	MaxExpandedLimit string
	// MaxItems caps the items one import reads (see DefaultMaxImportItems); past it the import
	// stops with a *LimitError. If zero or negative, DefaultMaxImportItems.
	MaxItems int
	// MaxDuration caps how long one import runs, by the store's clock (Config.Now), checked
	// every few hundred lines; past it the import stops with a *LimitError. If zero, no cap.
	MaxDuration time.Duration
}

// importLimits are an import's bounds with the defaults applied.
func (o ImportOptions) limits() ImportOptions {
	if o.MaxExpanded <= 0 {
		o.MaxExpanded = DefaultMaxExpanded
	}
	o.MaxExpanded = min(o.MaxExpanded, MaxExpandedCeiling)
	if o.MaxExpandedLimit == "" {
		o.MaxExpandedLimit = "import-expanded"
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxImportItems
	}
	return o
}

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

// itemPos is where an item sits in the input: its line, or its index in a document.
type itemPos struct{ line, item int }

// Import reads memories from r, in whichever format ImportFrom detects, and stores those not
// stored yet. Each line or item not imported is written to log as "line N: why" (or "item N:
// why"), and the progress of large inputs too. See ImportFrom.
func (s *Store) Import(r io.Reader, log io.Writer) (ImportStats, error) {
	return s.ImportFrom(context.Background(), r, ImportOptions{
		OnError: func(e ImportError) { fmt.Fprintln(log, e.String()) },
	})
}

// ImportFrom reads memories from r and stores those not stored yet. The formats are those of
// ImportFormats: ownsona's export (JSON Lines with a header, see Export), the export_memories
// tool's output, the knowledge graph of @modelcontextprotocol/server-memory,
// mcp-memory-service's JSON export, Mem0's and OpenMemory's exports (JSON, JSON Lines, or
// OpenMemory's zip), and Markdown or plain text; gzip-compressed input is read too.
//
// Each memory is checked as remember checks it (secret-looking text included); a line or
// item that fails is reported to opt.OnError and skipped, never half stored, and the rest
// goes in. Ownsona records keep every field (times, tombstones, expiry, source); ids are
// re-assigned and replaced_by_id follows them. Records of other formats keep their creation
// time where they have one. A memory with the same text and creation time (for records
// without a time, the same text) is already stored and skipped. Memories are stored in
// batches as they are read, each batch in one transaction that tells the OnChange hooks.
// err is an input that cannot be read at all, a storage failure, or ctx ending; what was
// stored before it stays.
//
// No input makes an import hold more than one unit of it at a time, each within what a memory
// may be (MaxItemBytes for JSON, the text limit for Markdown), nor expand without end, nor run
// for ever: compressed input expands to at most opt.MaxExpanded, every layer together; an
// archive holds a gzip at most (OpenMemory's zip), never a zip; one import reads at most
// opt.MaxItems items and runs at most opt.MaxDuration. Past a bound that can be read past (a
// long line of JSON Lines, a long paragraph) the unit is reported and skipped; past the
// others the import stops with a *LimitError (SECURITY.md UP-01).
func (s *Store) ImportFrom(ctx context.Context, r io.Reader, opt ImportOptions) (ImportStats, error) {
	format := ""
	if opt.Format != "" {
		f, err := ParseImportFormat(opt.Format)
		if err != nil {
			return ImportStats{}, err
		}
		format = f
	}
	opt = opt.limits()
	im := &importer{s: s, ctx: ctx, opt: opt, newID: map[uint64]uint64{}, seen: map[seenKey]uint64{}}
	if opt.MaxDuration > 0 {
		im.deadline = s.now().Add(opt.MaxDuration)
	}
	// Idempotence: what is stored already (same text, same creation time) is skipped; its id
	// still maps the source's, so replaced_by_id links to it.
	s.Each(Filter{IncludeDeleted: true}, func(m *Memory) bool {
		im.seen[importKey(m)] = m.ID
		im.seen[textKey(m.Text)] = m.ID
		return true
	})
	in, closeIn, err := unwrapInput(r, &expansion{left: opt.MaxExpanded, max: opt.MaxExpanded, limit: opt.MaxExpandedLimit}, 0)
	if err != nil {
		return im.st, err
	}
	defer closeIn()
	br := bufio.NewReaderSize(in, 1<<20)
	head, _ := br.Peek(1 << 20)
	if format == "" {
		if format, err = DetectImportFormat(head); err != nil {
			return im.st, err
		}
	}
	im.st.Format = format
	if err := im.read(br, format, head); err != nil {
		if ferr := im.flush(); ferr == nil {
			im.report()
		}
		return im.st, err
	}
	if err := im.flush(); err != nil {
		return im.st, err
	}
	if err := im.link(); err != nil {
		return im.st, err
	}
	im.report()
	return im.st, nil
}

// importer streams checked records into the store, a batch at a time.
type importer struct {
	s     *Store
	ctx   context.Context
	opt   ImportOptions
	st    ImportStats
	seen  map[seenKey]uint64 // importKey or textKey → stored id (0: in this import, not stored yet)
	newID map[uint64]uint64  // the source's id → ours
	batch []*importRecord
	links []*importRecord // stored records whose source named a replacement
	items int             // items read since the last progress report
	units int             // items read in all, imported or not (opt.MaxItems)
	ticks int             // lines and elements read (tick)
	// deadline ends the import (opt.MaxDuration), by the store's clock; zero: none.
	deadline time.Time
}

// tick is called for every line or element read: every few hundred it checks that the import
// may go on (ctx, the deadline).
func (im *importer) tick() error {
	if im.ticks++; im.ticks%256 != 0 {
		return nil
	}
	if err := im.ctx.Err(); err != nil {
		return err
	}
	if !im.deadline.IsZero() && im.s.now().After(im.deadline) {
		return &LimitError{Limit: "import-time", Message: fmt.Sprintf("the import ran longer than %s, the most one import may take; "+
			"what was stored before stays (importing the file again skips it): split the file", im.opt.MaxDuration)}
	}
	return nil
}

// count counts one item read, imported or not, against opt.MaxItems.
func (im *importer) count() error {
	if im.units++; im.units > im.opt.MaxItems {
		return &LimitError{Limit: "import-items", Message: fmt.Sprintf("the input has more than %d items, the most one import reads; "+
			"what was stored before stays (importing the file again skips it): split the file", im.opt.MaxItems)}
	}
	return nil
}

// add checks the records of one item and queues them, all or none: a record that fails
// makes the whole item bad. Records already stored are counted as skipped.
func (im *importer) add(pos itemPos, recs []*importRecord, err error) error {
	if err := im.count(); err != nil {
		return err
	}
	for _, rec := range recs {
		if err != nil {
			break
		}
		if im.opt.Client != "" {
			rec.SourceClient = im.opt.Client
		}
		if rec.Supersedes != nil || rec.SupersededBy != nil { // linked by id once all are stored
			rec.oldSup, rec.oldSupBy = rec.Supersedes, rec.SupersededBy
			rec.Supersedes, rec.SupersededBy = nil, nil
		}
		err = im.s.checkImported(&rec.Memory)
	}
	if err != nil {
		im.report1(pos, err)
		return nil
	}
	if len(im.batch)+len(recs) > importBatch {
		if err := im.flush(); err != nil {
			return err
		}
	}
	for _, rec := range recs {
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

// bad reports an item that was not imported, and counts it (opt.MaxItems).
func (im *importer) bad(pos itemPos, err error) error {
	if err := im.count(); err != nil {
		return err
	}
	im.report1(pos, err)
	return nil
}

// report1 reports an item that was not imported.
func (im *importer) report1(pos itemPos, err error) {
	im.st.Bad++
	if im.opt.OnError != nil {
		im.opt.OnError(ImportError{Line: pos.line, Item: pos.item, Error: err.Error()})
	}
}

// flush stores the queued batch in one transaction.
func (im *importer) flush() error {
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
func (im *importer) link() error {
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

func (im *importer) report() {
	im.items = 0
	if im.opt.Progress != nil {
		im.opt.Progress(im.st)
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
