package importers

// The formats ImportFrom reads, how they are told apart, and how each becomes memories. Sources
// of the foreign formats (fixtures in testdata/import, with notes of the same sources):
//
//   - server-memory: @modelcontextprotocol/server-memory's memory.jsonl, lines
//     {"type":"entity","name","entityType","observations":[…]} and
//     {"type":"relation","from","to","relationType"}; its read_graph output
//     {"entities":[…],"relations":[…]} too.
//   - mcp-memory-service (doobidoo/mcp-memory-service, scripts/sync/export_memories.py and
//     src/mcp_memory_service/sync/importer.py): {"export_metadata":{…},"memories":[{"content",
//     "content_hash","tags","created_at" (Unix seconds),"created_at_iso","updated_at",
//     "updated_at_iso","memory_type","metadata"}]}.
//   - mem0: the platform's get_all / export output, a list or {"results"|"memories":[…]} of
//     {"id","memory","categories","created_at","updated_at","metadata",…}; OpenMemory's backup
//     (openmemory/api/app/routers/backup.py): a zip of memories.json ({"apps","categories",
//     "memories":[{"id","app_id","content","state","created_at","category_ids",…}]}) and
//     memories.jsonl.gz (lines {"id","content","state","app","categories","created_at",…}).

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
)

// The import formats, by the names ImportOptions.Format and `ownsona import --format` take.
const (
	FormatOwnsona       = "ownsona"            // ownsona export (JSON Lines) or export_memories output
	FormatServerMemory  = "server-memory"      // the reference MCP memory server's knowledge graph
	FormatMemoryService = "mcp-memory-service" // mcp-memory-service's JSON export
	FormatMem0          = "mem0"               // Mem0's and OpenMemory's exports
	FormatMarkdown      = "markdown"           // Markdown or plain text: a memory per paragraph or list item
)

// ImportFormats lists the formats ImportFrom reads.
var ImportFormats = []string{FormatOwnsona, FormatServerMemory, FormatMemoryService, FormatMem0, FormatMarkdown}

// formatAliases are other names people give the formats.
var formatAliases = map[string]string{
	"ownsona-export": FormatOwnsona, "export": FormatOwnsona,
	"knowledge-graph": FormatServerMemory, "graph": FormatServerMemory, "mcp-memory": FormatServerMemory,
	"memory-service": FormatMemoryService,
	"openmemory":     FormatMem0,
	"md":             FormatMarkdown, "text": FormatMarkdown, "txt": FormatMarkdown, "plain": FormatMarkdown,
}

// ParseImportFormat returns the format called name (a name of ImportFormats or an alias such
// as "text" or "openmemory"); "" and "auto" are "" (detect).
func ParseImportFormat(name string) (string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == "auto" {
		return "", nil
	}
	for _, f := range ImportFormats {
		if name == f {
			return f, nil
		}
	}
	if f, ok := formatAliases[name]; ok {
		return f, nil
	}
	return "", &memory.InputError{Field: "format", Reason: fmt.Sprintf("%q is not one of %s (or auto)", name, strings.Join(ImportFormats, ", "))}
}

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
	// character of the store's text limit (memory.Config.MaxTextChars) when that is more: a
	// JSON item is buffered whole before it is read, so a larger one stops the import (a
	// longer line of JSON Lines is skipped and reported). A paragraph or list item of Markdown
	// is refused past 4 bytes per character of the text limit (and 4 KiB for spaces), without
	// being buffered.
	MaxItemBytes = 4 << 20
)

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
	Progress func(memory.ImportStats)
	// OnError is told of each line or item not imported, in input order. Optional.
	OnError func(memory.ImportError)
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

// limits are an import's bounds with the defaults applied.
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

// ImportFrom reads memories from r and stores in s those not stored yet. The formats are
// those of ImportFormats: ownsona's export (JSON Lines with a header, see Export), the
// export_memories tool's output, the knowledge graph of @modelcontextprotocol/server-memory,
// mcp-memory-service's JSON export, Mem0's and OpenMemory's exports (JSON, JSON Lines, or
// OpenMemory's zip), and Markdown or plain text; gzip-compressed input is read too.
//
// Each memory is checked as remember checks it (secret-looking text included); a line or
// item that fails is reported to opt.OnError and skipped, never half stored, and the rest
// goes in. Ownsona records keep every field (times, tombstones, expiry, source); ids are
// re-assigned and replaced_by_id follows them. Records of other formats keep their creation
// time where they have one. A memory with the same text and creation time (for records
// without a time, the same text) is already stored and skipped. Memories are stored in
// batches as they are read, each batch in one transaction that tells the OnChange hooks
// (Store.NewImport). err is an input that cannot be read at all, a storage failure, or ctx
// ending; what was stored before it stays.
//
// No input makes an import hold more than one unit of it at a time, each within what a memory
// may be (MaxItemBytes for JSON, the text limit for Markdown), nor expand without end, nor run
// for ever: compressed input expands to at most opt.MaxExpanded, every layer together; an
// archive holds a gzip at most (OpenMemory's zip), never a zip; one import reads at most
// opt.MaxItems items and runs at most opt.MaxDuration. Past a bound that can be read past (a
// long line of JSON Lines, a long paragraph) the unit is reported and skipped; past the
// others the import stops with a *LimitError (SECURITY.md UP-01).
func ImportFrom(ctx context.Context, s *memory.Store, r io.Reader, opt ImportOptions) (memory.ImportStats, error) {
	format := ""
	if opt.Format != "" {
		f, err := ParseImportFormat(opt.Format)
		if err != nil {
			return memory.ImportStats{}, err
		}
		format = f
	}
	opt = opt.limits()
	in, closeIn, err := unwrapInput(r, &expansion{left: opt.MaxExpanded, max: opt.MaxExpanded, limit: opt.MaxExpandedLimit}, 0)
	if err != nil {
		return memory.ImportStats{}, err
	}
	defer closeIn()
	br := bufio.NewReaderSize(in, 1<<20)
	head, _ := br.Peek(1 << 20)
	if format == "" {
		if format, err = DetectImportFormat(head); err != nil {
			return memory.ImportStats{}, err
		}
	}
	im := &importer{opt: opt, maxText: s.MaxTextChars(),
		imp: s.NewImport(ctx, memory.ImportConfig{Format: format, Progress: opt.Progress, OnError: opt.OnError, MaxDuration: opt.MaxDuration})}
	if err := im.read(br, format, head); err != nil {
		return im.imp.Stop(err)
	}
	return im.imp.Finish()
}

// importer reads one input into an import of the store, an item at a time.
type importer struct {
	imp     *memory.Import
	opt     ImportOptions
	maxText int // the store's text limit, in characters (Store.MaxTextChars)
	units   int // items read in all, imported or not (opt.MaxItems)
}

// tick is called for every line or element read (Import.Tick).
func (im *importer) tick() error { return im.imp.Tick() }

// count counts one item read, imported or not, against opt.MaxItems.
func (im *importer) count() error {
	if im.units++; im.units > im.opt.MaxItems {
		return &memory.LimitError{Limit: "import-items", Message: fmt.Sprintf("the input has more than %d items, the most one import reads; "+
			"what was stored before stays (importing the file again skips it): split the file", im.opt.MaxItems)}
	}
	return nil
}

// add hands the records of one item to the import, all or none (Import.Add); err is why the
// item could not be read, which makes it bad.
func (im *importer) add(pos memory.ImportPos, recs []*memory.ImportRecord, err error) error {
	if err := im.count(); err != nil {
		return err
	}
	if err != nil {
		im.imp.Bad(pos, err)
		return nil
	}
	if im.opt.Client != "" {
		for _, rec := range recs {
			rec.SourceClient = im.opt.Client
		}
	}
	return im.imp.Add(pos, recs)
}

// bad reports an item that was not imported, and counts it (opt.MaxItems).
func (im *importer) bad(pos memory.ImportPos, err error) error {
	if err := im.count(); err != nil {
		return err
	}
	im.imp.Bad(pos, err)
	return nil
}

// expansion is what decompressing an input may still produce: one budget for every layer.
type expansion struct {
	left, max int64
	limit     string // the setting that sets max, for the error
}

func (e *expansion) err() error {
	return &memory.LimitError{Limit: e.limit, Message: fmt.Sprintf("the compressed input expands past %s, the most one import may read (%s); "+
		"what was stored before stays: split the file, or import it uncompressed on the server (ownsona import)", memory.ByteSize(e.max), e.limit)}
}

// Bounds of the archives an import opens.
const (
	maxZipDirectory = 1 << 20   // bytes of a zip's central directory: ~20,000 files at most, OpenMemory's has two
	maxZipStream    = 256 << 20 // a zip read from a stream rather than a file is held in memory
)

// unwrapInput returns r's content, decompressed when r is gzip or an (OpenMemory) zip, within
// the budget exp. depth is how many archives r is inside: an archive may hold a gzip (an
// OpenMemory zip holds memories.jsonl.gz) but nothing compressed lies deeper.
func unwrapInput(r io.Reader, exp *expansion, depth int) (io.Reader, func(), error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(4)
	isGzip, isZip := bytes.HasPrefix(magic, []byte{0x1f, 0x8b}), bytes.HasPrefix(magic, []byte("PK\x03\x04"))
	switch {
	case isZip && depth > 0:
		return nil, nil, errors.New("a zip inside a zip is not read: unzip the outer one and import what it holds")
	case isGzip && depth > 1:
		return nil, nil, errors.New("a compressed file inside a compressed file is not read: decompress it and import what it holds")
	case isGzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		in := bufio.NewReader(&capped{r: zr, exp: exp})
		if inner, _ := in.Peek(4); bytes.HasPrefix(inner, []byte{0x1f, 0x8b}) || bytes.HasPrefix(inner, []byte("PK\x03\x04")) {
			zr.Close()
			return nil, nil, errors.New("a compressed file inside a gzip is not read: decompress it and import what it holds")
		}
		return in, func() { zr.Close() }, nil
	case isZip:
		return openZip(r, br, exp, depth)
	}
	return br, func() {}, nil
}

// openZip opens the member of a zip that holds memories: OpenMemory's memories.jsonl.gz,
// else memories.jsonl or memories.json, else the only file.
func openZip(r io.Reader, br *bufio.Reader, exp *expansion, depth int) (io.Reader, func(), error) {
	var ra io.ReaderAt
	var size int64
	switch f := r.(type) {
	case *bytes.Reader:
		ra, size = f, f.Size()
	case *os.File:
		fi, err := f.Stat()
		if err != nil {
			return nil, nil, err
		}
		ra, size = f, fi.Size()
	default:
		b, err := io.ReadAll(io.LimitReader(br, maxZipStream+1))
		if err != nil {
			return nil, nil, err
		}
		if len(b) > maxZipStream {
			return nil, nil, fmt.Errorf("a zip read from a stream is held in memory, up to %s: import the file by its name, or unzip it first", memory.ByteSize(maxZipStream))
		}
		ra, size = bytes.NewReader(b), int64(len(b))
	}
	if err := checkZipDirectory(ra, size); err != nil {
		return nil, nil, err
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, nil, fmt.Errorf("zip: %w", err)
	}
	var pick *zip.File
	var files []*zip.File
	for _, want := range []string{"memories.jsonl.gz", "memories.jsonl", "memories.json"} {
		for _, f := range zr.File {
			if !f.FileInfo().IsDir() && pick == nil && path.Base(f.Name) == want {
				pick = f
			}
		}
	}
	for _, f := range zr.File {
		if !f.FileInfo().IsDir() {
			files = append(files, f)
		}
	}
	if pick == nil && len(files) == 1 {
		pick = files[0]
	}
	if pick == nil {
		return nil, nil, errors.New("zip: no memories.jsonl.gz, memories.jsonl or memories.json in it, and more than one file")
	}
	rc, err := pick.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("zip %s: %w", pick.Name, err)
	}
	in, closeIn, err := unwrapInput(&capped{r: rc, exp: exp}, exp, depth+1)
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("zip %s: %w", pick.Name, err)
	}
	return in, func() { closeIn(); rc.Close() }, nil
}

// checkZipDirectory refuses a zip whose central directory (what archive/zip reads into memory,
// a record per file) is larger than maxZipDirectory, from the end-of-directory record, before
// archive/zip reads it. A zip64 archive (over 65,535 files or 4 GiB) is refused too.
func checkZipDirectory(ra io.ReaderAt, size int64) error {
	const endLen = 22 // the end-of-central-directory record without its comment
	tail := make([]byte, min(size, endLen+65535))
	if _, err := ra.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
		return fmt.Errorf("zip: %w", err)
	}
	at := bytes.LastIndex(tail, []byte("PK\x05\x06"))
	if at < 0 || len(tail)-at < endLen {
		return errors.New("zip: not a valid zip file (no end of central directory)")
	}
	end := tail[at:]
	files := binary.LittleEndian.Uint16(end[10:])
	offset := int64(binary.LittleEndian.Uint32(end[16:]))
	if files == 0xffff || offset == 0xffffffff {
		return errors.New("zip: a zip64 archive (over 65,535 files or 4 GiB) is not read; unzip it and import the file inside")
	}
	if dir := size - int64(len(tail)) + int64(at) - offset; offset > size || dir > maxZipDirectory {
		return fmt.Errorf("zip: its directory is larger than %s (more files than an export holds); unzip it and import the file inside", memory.ByteSize(maxZipDirectory))
	}
	return nil
}

// capped fails a read once its expansion budget is spent.
type capped struct {
	r   io.Reader
	exp *expansion
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.exp.left -= int64(n); c.exp.left < 0 {
		return n, c.exp.err()
	}
	return n, err
}

// DetectImportFormat names the format of an input from its beginning (up to 1 MiB is
// plenty): JSON Lines by their first line's fields, JSON documents by their keys and their
// first memory's fields, and anything else that is text as Markdown. It fails on binary
// input, an empty one, and JSON of no known shape.
func DetectImportFormat(head []byte) (string, error) {
	b := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	if len(b) == 0 {
		return "", errors.New("the input is empty")
	}
	if !utf8.Valid(trimPartialRune(head)) || bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("the input is not text (a binary file?); the formats are %s, optionally gzip-compressed, or OpenMemory's zip", strings.Join(ImportFormats, ", "))
	}
	if b[0] != '{' && b[0] != '[' {
		return FormatMarkdown, nil
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var probe map[string]json.RawMessage
	if b[0] == '{' && json.Unmarshal(first, &probe) == nil && !hasCollection(probe) {
		return lineFormat(probe)
	}
	f, err := sniffDocument(b)
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && b[0] == '[' {
			return FormatMarkdown, nil // "[link](…)" or "[ ] a task": text that begins with a bracket
		}
		return "", err
	}
	return f, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence that a cut at 1 MiB may leave at the end.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// collectionKeys hold a document's list of memories (or entities and relations).
var collectionKeys = []string{"memories", "results", "records", "entities", "relations", "structuredContent"}

func hasCollection(obj map[string]json.RawMessage) bool {
	for _, k := range collectionKeys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// lineFormat names a JSON Lines format by its first line's fields.
func lineFormat(probe map[string]json.RawMessage) (string, error) {
	has := func(k string) bool { _, ok := probe[k]; return ok }
	var typ string
	_ = json.Unmarshal(probe["type"], &typ)
	switch {
	case has("format"), has("text"):
		return FormatOwnsona, nil
	case typ == "entity" || typ == "relation":
		return FormatServerMemory, nil
	case has("memory"):
		return FormatMem0, nil
	case has("content") && (has("content_hash") || has("memory_type")):
		return FormatMemoryService, nil
	case has("content"):
		return FormatMem0, nil
	}
	return "", fmt.Errorf("JSON Lines of an unknown kind: the first line has none of the fields format, text, type, memory, content; name the format (%s)", strings.Join(ImportFormats, ", "))
}

// sniffDocument names the format of a JSON document by its keys and its first memory.
func sniffDocument(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	top := map[string]bool{}
	var first map[string]json.RawMessage
	switch tok {
	case json.Delim('['):
		if dec.More() {
			if err := dec.Decode(&first); err != nil {
				return "", err
			}
		} else if _, err := dec.Token(); err != nil || len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
			return FormatMarkdown, nil // "[ ] a task": text that begins with a bracket
		}
	case json.Delim('{'):
	keys:
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				break
			}
			key, _ := kt.(string)
			top[key] = true
			switch key {
			case "structuredContent":
				var raw json.RawMessage
				if dec.Decode(&raw) != nil {
					break keys
				}
				return sniffDocument(raw)
			case "memories", "results", "records", "entities", "relations":
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					return "", fmt.Errorf("%q is not a list", key)
				}
				if dec.More() {
					if err := dec.Decode(&first); err != nil {
						return "", err
					}
				}
				break keys
			default:
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break keys
				}
			}
		}
	default:
		return "", errors.New("not a JSON document")
	}
	has := func(k string) bool { _, ok := first[k]; return ok }
	switch {
	case top["entities"] || top["relations"]:
		return FormatServerMemory, nil
	case top["export_metadata"] || has("content_hash") || has("memory_type"):
		return FormatMemoryService, nil
	case has("memory") || top["results"] || top["records"]:
		return FormatMem0, nil
	case has("content"):
		return FormatMem0, nil
	case has("text") || top["memories"]:
		return FormatOwnsona, nil
	case tok == json.Delim('['):
		return FormatMem0, nil // an empty list
	}
	return "", fmt.Errorf("a JSON document of an unknown kind: no list of memories (memories, results, entities) in it; name the format (%s)", strings.Join(ImportFormats, ", "))
}

// read reads every item of br in format; head is its beginning.
func (im *importer) read(br *bufio.Reader, format string, head []byte) error {
	if format == FormatMarkdown {
		return im.readText(br)
	}
	b := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var probe map[string]json.RawMessage
	if len(b) > 0 && b[0] == '{' && json.Unmarshal(first, &probe) == nil && !hasCollection(probe) {
		return im.readLines(br, format)
	}
	return im.readDocument(br, format)
}

// itemLimit is the most bytes one JSON item may take (MaxItemBytes), for a store whose text
// limit is maxText characters.
func itemLimit(maxText int) int { return max(MaxItemBytes, 8*maxText) }

// readLines reads JSON Lines, one item per line; a line longer than an item may be is skipped
// and reported, without being held.
func (im *importer) readLines(r *bufio.Reader, format string) error {
	lr := &lineReader{r: r, max: itemLimit(im.maxText)}
	n := 0
	for {
		raw, long, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		n++
		if err := im.tick(); err != nil {
			return err
		}
		pos := memory.ImportPos{Line: n}
		if long {
			if err := im.bad(pos, fmt.Errorf("the line is longer than %s, the most one item may be; split it", memory.ByteSize(int64(lr.max)))); err != nil {
				return err
			}
			continue
		}
		line := bytes.TrimSpace(raw)
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			if err := im.bad(pos, fmt.Errorf("not JSON: %v", err)); err != nil {
				return err
			}
			continue
		}
		var typ, header string
		_ = json.Unmarshal(probe["type"], &typ)
		rawFormat, isHeader := probe["format"]
		_ = json.Unmarshal(rawFormat, &header)
		var recs []*memory.ImportRecord
		switch {
		case (format == FormatOwnsona || format == FormatServerMemory) && isHeader:
			if header != memory.ExportFormat {
				return fmt.Errorf("line %d: format %s is not %q", n, rawFormat, memory.ExportFormat)
			}
			continue
		case (format == FormatOwnsona || format == FormatServerMemory) && (typ == "entity" || typ == "relation"):
			recs, err = graphRecords(line, typ)
		case format == FormatServerMemory:
			err = errors.New(`not a knowledge-graph line: "type" must be "entity" or "relation"`)
		default:
			recs, err = im.item(format, "", line, nil)
		}
		if err := im.add(pos, recs, err); err != nil {
			return err
		}
	}
}

// lineReader reads lines of at most max bytes from r: a longer line is reported as long and
// skipped to its end without being held.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its "\n" or "\r\n", valid until the next call; for a
// long line, its first max bytes. At the end of the input err is io.EOF.
func (lr *lineReader) next() (line []byte, long bool, err error) {
	lr.buf = lr.buf[:0]
	read := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		read = read || len(frag) > 0
		if room := lr.max + 2 - len(lr.buf); len(frag) > room { // 2: room for "\r\n"
			long = true
			frag = frag[:max(room, 0)]
		}
		lr.buf = append(lr.buf, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && read:
		case err != nil:
			return nil, false, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(lr.buf, []byte("\n")), []byte("\r"))
		if len(line) > lr.max {
			long, line = true, line[:lr.max]
		}
		return line, long, nil
	}
}

// docContext is what a document says besides its memories: OpenMemory's apps and categories
// by id.
type docContext struct {
	apps, categories map[string]string
}

// errUnitTooLarge: a JSON value of a document is larger than an item may be.
var errUnitTooLarge = errors.New("larger than an item may be")

// unitReader lets a JSON decoder read no further than stop: each value the decoder reads is
// given its room (readDocument), and no value can make it buffer more.
type unitReader struct {
	r       io.Reader
	n, stop int64 // bytes read; where reading stops
}

func (u *unitReader) Read(p []byte) (int, error) {
	left := u.stop - u.n
	if left <= 0 {
		return 0, errUnitTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := u.r.Read(p)
	u.n += int64(n)
	return n, err
}

// readDocument reads one JSON document: a list of memories, or an object holding one (under
// memories, results or records; entities and relations; or an MCP tool result's
// structuredContent). It is read a value at a time, each within the item limit (itemLimit),
// so that no value is held whole unless it is small: the list's elements one by one, and
// structuredContent's keys as they come.
func (im *importer) readDocument(r io.Reader, format string) error {
	u := &unitReader{r: r}
	dec := json.NewDecoder(u)
	limit := int64(itemLimit(im.maxText))
	room := func() { u.stop = dec.InputOffset() + limit } // for the next value: no more than limit ahead
	tooLarge := func(what string, err error) error {
		if errors.Is(err, errUnitTooLarge) {
			return &memory.LimitError{Limit: "import-item-bytes", Message: fmt.Sprintf("%s is larger than %s, the most one item may be; "+
				"the import stops there (a JSON document cannot be read past it): split the file", what, memory.ByteSize(limit))}
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	ctx := &docContext{apps: map[string]string{}, categories: map[string]string{}}
	n := 0
	list := func(kind string) error {
		for {
			room()
			if !dec.More() {
				break
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return tooLarge(fmt.Sprintf("item %d", n+1), err)
			}
			n++
			if err := im.tick(); err != nil {
				return err
			}
			recs, err := im.item(format, kind, raw, ctx)
			if err := im.add(memory.ImportPos{Item: n}, recs, err); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return tooLarge(fmt.Sprintf("after item %d", n), err)
		}
		return nil
	}
	// object reads the keys of an object whose '{' was read; nested is structuredContent's.
	var object func(nested bool) (found bool, err error)
	object = func(nested bool) (found bool, err error) {
		for {
			room()
			if !dec.More() {
				break
			}
			kt, err := dec.Token()
			if err != nil {
				return found, tooLarge("a key", err)
			}
			key, _ := kt.(string)
			switch key {
			case "memories", "results", "records", "entities", "relations":
				room()
				t, err := dec.Token()
				if err != nil || t != json.Delim('[') {
					if err == nil && t == nil {
						continue // null
					}
					return found, fmt.Errorf("%q is not a list", key)
				}
				found = true
				if err := list(key); err != nil {
					return found, err
				}
				continue
			case "structuredContent":
				if nested {
					break
				}
				room()
				t, err := dec.Token()
				if err != nil {
					return found, tooLarge("structuredContent", err)
				}
				var inner bool
				switch t {
				case json.Delim('{'):
					inner, err = object(true)
				case json.Delim('['):
					inner, err = true, list("")
				default:
					continue // null or a scalar: no memories
				}
				if err == nil && !inner {
					err = errNoList
				}
				if err != nil {
					return found, fmt.Errorf("structuredContent: %w", err)
				}
				found = true
				continue
			}
			room()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return found, tooLarge(fmt.Sprintf("the value of %q", key), err)
			}
			switch key {
			case "apps", "categories":
				ctx.collect(key, raw)
			}
		}
		if _, err := dec.Token(); err != nil {
			return found, tooLarge("the end of an object", err)
		}
		return found, nil
	}
	room()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	found := false
	switch tok {
	case json.Delim('['):
		found = true
		err = list("")
	case json.Delim('{'):
		found, err = object(false)
	default:
		return errors.New("not a JSON document: neither a list nor an object")
	}
	if err != nil {
		return err
	}
	if !found {
		return errNoList
	}
	return nil
}

var errNoList = errors.New(`no list of memories in the document ("memories", "results", "entities" or "relations")`)

// collect keeps OpenMemory's apps or categories: their names by id.
func (c *docContext) collect(key string, raw json.RawMessage) {
	var list []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return
	}
	m := c.apps
	if key == "categories" {
		m = c.categories
	}
	for _, e := range list {
		m[e.ID] = e.Name
	}
}

// item turns one element (or line) of format into memories; kind is the list it came from.
func (im *importer) item(format, kind string, raw json.RawMessage, ctx *docContext) ([]*memory.ImportRecord, error) {
	switch format {
	case FormatOwnsona:
		rec, err := memoryRecord(raw)
		return []*memory.ImportRecord{rec}, err
	case FormatServerMemory:
		var probe struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &probe)
		switch {
		case kind == "entities" || (kind == "" && probe.Type == "entity"):
			return graphRecords(raw, "entity")
		case kind == "relations" || (kind == "" && probe.Type == "relation"):
			return graphRecords(raw, "relation")
		}
		return nil, errors.New(`not a knowledge-graph entity or relation`)
	case FormatMemoryService:
		return serviceRecords(raw)
	case FormatMem0:
		return mem0Records(raw, ctx)
	}
	return nil, fmt.Errorf("format %q is not read from JSON", format)
}

// memoryRecord reads one ownsona memory.
func memoryRecord(raw []byte) (*memory.ImportRecord, error) {
	m, err := memory.ParseExported(raw)
	if err != nil {
		return nil, fmt.Errorf("not an ownsona memory: %v", err)
	}
	return &memory.ImportRecord{Memory: m}, nil
}

// graphRecords turns a knowledge-graph entity into its observations, "<name>: <observation>",
// tagged by its type and name, or a relation into "<from> <relation type> <to>" tagged by both
// ends.
func graphRecords(raw []byte, kind string) ([]*memory.ImportRecord, error) {
	var e struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
		From         string   `json:"from"`
		To           string   `json:"to"`
		RelationType string   `json:"relationType"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("not a knowledge-graph %s: %v", kind, err)
	}
	var recs []*memory.ImportRecord
	switch kind {
	case "entity":
		if e.Name == "" {
			return nil, errors.New("an entity without a name")
		}
		for _, o := range e.Observations {
			recs = append(recs, &memory.ImportRecord{Memory: memory.Memory{Text: e.Name + ": " + o, Tags: looseTags(e.EntityType, e.Name), SourceProvider: "server-memory"}, TextOnly: true})
		}
	case "relation":
		if e.From == "" || e.To == "" || e.RelationType == "" {
			return nil, errors.New("a relation needs from, to and relationType")
		}
		text := e.From + " " + strings.ReplaceAll(e.RelationType, "_", " ") + " " + e.To
		recs = append(recs, &memory.ImportRecord{Memory: memory.Memory{Text: text, Tags: looseTags(e.From, e.To), SourceProvider: "server-memory"}, TextOnly: true})
	}
	return recs, nil
}

// serviceRecords reads one memory of mcp-memory-service's export: content, tags (a list or a
// comma-separated string), memory_type (a tag, unless it is the default "note") and its
// times.
func serviceRecords(raw []byte) ([]*memory.ImportRecord, error) {
	var it struct {
		Content      *string         `json:"content"`
		Tags         json.RawMessage `json:"tags"`
		MemoryType   string          `json:"memory_type"`
		CreatedAt    json.RawMessage `json:"created_at"`
		CreatedAtISO string          `json:"created_at_iso"`
		UpdatedAt    json.RawMessage `json:"updated_at"`
		UpdatedAtISO string          `json:"updated_at_iso"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, fmt.Errorf("not an mcp-memory-service memory: %v", err)
	}
	if it.Content == nil || strings.TrimSpace(*it.Content) == "" {
		return nil, errors.New(`an mcp-memory-service memory needs a non-empty "content"`)
	}
	var tags []string
	if len(it.Tags) > 0 && string(it.Tags) != "null" {
		var list []string
		var s string
		switch {
		case json.Unmarshal(it.Tags, &list) == nil:
			tags = list
		case json.Unmarshal(it.Tags, &s) == nil:
			tags = strings.Split(s, ",")
		default:
			return nil, errors.New(`"tags" is neither a list of strings nor a comma-separated string`)
		}
	}
	if it.MemoryType != "" && it.MemoryType != "note" {
		tags = append(tags, it.MemoryType)
	}
	rec := &memory.ImportRecord{Memory: memory.Memory{Text: *it.Content, Tags: looseTags(tags...), Importance: memory.DefaultImportance, SourceProvider: FormatMemoryService}}
	var err error
	if rec.CreatedAt, err = foreignTime("created_at", it.CreatedAtISO, it.CreatedAt); err != nil {
		return nil, err
	}
	if rec.UpdatedAt, err = foreignTime("updated_at", it.UpdatedAtISO, it.UpdatedAt); err != nil {
		return nil, err
	}
	rec.TextOnly = rec.CreatedAt.IsZero()
	return []*memory.ImportRecord{rec}, nil
}

// mem0Records reads one memory of Mem0's or OpenMemory's export: its text (memory, else
// content), categories (names, or OpenMemory's category_ids) as tags, the app that wrote it
// as source_provider, its times, and its state (deleted: a tombstone; archived or paused: a
// tag).
func mem0Records(raw []byte, ctx *docContext) ([]*memory.ImportRecord, error) {
	var it struct {
		Memory      *string         `json:"memory"`
		Content     *string         `json:"content"`
		Categories  []string        `json:"categories"`
		CategoryIDs []string        `json:"category_ids"`
		App         *string         `json:"app"`
		AppID       *string         `json:"app_id"`
		State       string          `json:"state"`
		CreatedAt   json.RawMessage `json:"created_at"`
		UpdatedAt   json.RawMessage `json:"updated_at"`
		DeletedAt   json.RawMessage `json:"deleted_at"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, fmt.Errorf("not a Mem0 memory: %v", err)
	}
	text := ""
	for _, s := range []*string{it.Memory, it.Content} {
		if s != nil && strings.TrimSpace(*s) != "" {
			text = *s
			break
		}
	}
	if text == "" {
		return nil, errors.New(`a Mem0 memory needs a non-empty "memory" or "content"`)
	}
	tags := it.Categories
	for _, id := range it.CategoryIDs {
		if ctx != nil && ctx.categories[id] != "" {
			tags = append(tags, ctx.categories[id])
		}
	}
	provider := "mem0"
	switch {
	case it.App != nil && *it.App != "":
		provider = *it.App
	case it.AppID != nil && ctx != nil && ctx.apps[*it.AppID] != "":
		provider = ctx.apps[*it.AppID]
	}
	if it.State == "archived" || it.State == "paused" {
		tags = append(tags, it.State)
	}
	if n := utf8.RuneCountInString(provider); n > memory.MaxSourceChars {
		provider = string([]rune(provider)[:memory.MaxSourceChars])
	}
	rec := &memory.ImportRecord{Memory: memory.Memory{Text: text, Tags: looseTags(tags...), Importance: memory.DefaultImportance, SourceProvider: provider}}
	var err error
	if rec.CreatedAt, err = foreignTime("created_at", "", it.CreatedAt); err != nil {
		return nil, err
	}
	if rec.UpdatedAt, err = foreignTime("updated_at", "", it.UpdatedAt); err != nil {
		return nil, err
	}
	if it.State == "deleted" {
		del, err := foreignTime("deleted_at", "", it.DeletedAt)
		if err != nil {
			return nil, err
		}
		if del.IsZero() {
			del = rec.UpdatedAt
		}
		if del.IsZero() {
			del = time.Now().UTC()
		}
		rec.DeletedAt, rec.ForgetReason = &del, "deleted in "+provider
	}
	rec.TextOnly = rec.CreatedAt.IsZero()
	return []*memory.ImportRecord{rec}, nil
}

// foreignTime reads a time other servers wrote: iso when set, else raw, an RFC 3339 string
// (a zone-less one is UTC, as Python's isoformat writes them) or Unix seconds (milliseconds
// when larger than 10^11). Zero when neither is set.
func foreignTime(field, iso string, raw json.RawMessage) (time.Time, error) {
	s := iso
	if s == "" && len(raw) > 0 && string(raw) != "null" {
		if raw[0] != '"' {
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f < 0 || f > 1e15 {
				return time.Time{}, fmt.Errorf("%s: %s is neither a time nor Unix seconds", field, raw)
			}
			if f > 1e11 {
				f /= 1000
			}
			sec := int64(f)
			return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC().Truncate(time.Microsecond), nil
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, fmt.Errorf("%s: %v", field, err)
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s: %q is not an ISO 8601 time", field, s)
}

// looseTags normalizes tags that other servers or headings chose: what cannot be a tag (one
// letter, too long) is left out rather than refusing the memory, and ':' '/' '.' separate
// words ("source:laptop" is source-laptop). At most memtext.MaxTags.
func looseTags(names ...string) []string {
	repl := strings.NewReplacer(":", " ", "/", " ", ".", " ")
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		t, err := memtext.NormalizeTag(repl.Replace(n))
		if err != nil || len(t) < 2 || seen[t] || len(out) == memtext.MaxTags {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}
