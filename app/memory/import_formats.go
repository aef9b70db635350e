package memory

// The formats Import reads, how they are told apart, and how each becomes memories. Sources
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

// ImportFormats lists the formats Import reads.
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
	return "", &InputError{Field: "format", Reason: fmt.Sprintf("%q is not one of %s (or auto)", name, strings.Join(ImportFormats, ", "))}
}

// maxExpanded caps what a compressed input may expand to.
const maxExpanded = 1 << 30

// ErrExpandedTooLarge: a gzip or zip input expands past 1 GiB.
var ErrExpandedTooLarge = errors.New("the compressed input expands past 1 GiB")

// unwrapInput returns r's content, decompressed when r is gzip or an (OpenMemory) zip.
func unwrapInput(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return &capped{r: zr, left: maxExpanded}, func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, []byte("PK\x03\x04")):
		return openZip(r, br)
	}
	return br, func() {}, nil
}

// openZip opens the member of a zip that holds memories: OpenMemory's memories.jsonl.gz,
// else memories.jsonl or memories.json, else the only file.
func openZip(r io.Reader, br *bufio.Reader) (io.Reader, func(), error) {
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
		b, err := io.ReadAll(io.LimitReader(br, maxExpanded+1))
		if err != nil {
			return nil, nil, err
		}
		if len(b) > maxExpanded {
			return nil, nil, ErrExpandedTooLarge
		}
		ra, size = bytes.NewReader(b), int64(len(b))
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
	in, closeIn, err := unwrapInput(&capped{r: rc, left: maxExpanded})
	if err != nil {
		rc.Close()
		return nil, nil, err
	}
	return in, func() { closeIn(); rc.Close() }, nil
}

// capped fails a read past left bytes.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n, ErrExpandedTooLarge
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

// readLines reads JSON Lines, one item per line.
func (im *importer) readLines(r io.Reader, format string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(line) == 0 {
			continue
		}
		pos := itemPos{line: n}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			im.bad(pos, fmt.Errorf("not JSON: %v", err))
			continue
		}
		var typ, header string
		_ = json.Unmarshal(probe["type"], &typ)
		rawFormat, isHeader := probe["format"]
		_ = json.Unmarshal(rawFormat, &header)
		var recs []*importRecord
		var err error
		switch {
		case (format == FormatOwnsona || format == FormatServerMemory) && isHeader:
			if header != exportFormat {
				return fmt.Errorf("line %d: format %s is not %q", n, rawFormat, exportFormat)
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
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}

// docContext is what a document says besides its memories: OpenMemory's apps and categories
// by id.
type docContext struct {
	apps, categories map[string]string
}

// readDocument reads one JSON document: a list of memories, or an object holding one (under
// memories, results or records; entities and relations; or an MCP tool result's
// structuredContent). The list is read an element at a time.
func (im *importer) readDocument(r io.Reader, format string) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	ctx := &docContext{apps: map[string]string{}, categories: map[string]string{}}
	n := 0
	list := func(kind string) error {
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("item %d: %w", n+1, err)
			}
			n++
			recs, err := im.item(format, kind, raw, ctx)
			if err := im.add(itemPos{item: n}, recs, err); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	found := false
	switch tok {
	case json.Delim('['):
		found = true
		if err := list(""); err != nil {
			return err
		}
	case json.Delim('{'):
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			switch key {
			case "memories", "results", "records", "entities", "relations":
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					if err == nil && t == nil {
						continue // null
					}
					return fmt.Errorf("%q is not a list", key)
				}
				found = true
				if err := list(key); err != nil {
					return err
				}
				continue
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			switch key {
			case "structuredContent":
				found = true
				if err := im.readDocument(bytes.NewReader(raw), format); err != nil {
					return fmt.Errorf("structuredContent: %w", err)
				}
			case "apps", "categories":
				ctx.collect(key, raw)
			}
		}
	default:
		return errors.New("not a JSON document: neither a list nor an object")
	}
	if !found {
		return errors.New(`no list of memories in the document ("memories", "results", "entities" or "relations")`)
	}
	return nil
}

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
func (im *importer) item(format, kind string, raw json.RawMessage, ctx *docContext) ([]*importRecord, error) {
	switch format {
	case FormatOwnsona:
		rec, err := memoryRecord(raw)
		return []*importRecord{rec}, err
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
func memoryRecord(raw []byte) (*importRecord, error) {
	var m Memory
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not an ownsona memory: %v", err)
	}
	rec := &importRecord{Memory: m, oldID: m.ID, oldRepBy: m.ReplacedByID}
	rec.ID, rec.ReplacedByID = 0, nil
	return rec, nil
}

// graphRecords turns a knowledge-graph entity into its observations, "<name>: <observation>",
// tagged by its type and name, or a relation into "<from> <relation type> <to>" tagged by both
// ends.
func graphRecords(raw []byte, kind string) ([]*importRecord, error) {
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
	var recs []*importRecord
	switch kind {
	case "entity":
		if e.Name == "" {
			return nil, errors.New("an entity without a name")
		}
		for _, o := range e.Observations {
			recs = append(recs, &importRecord{Memory: Memory{Text: e.Name + ": " + o, Tags: looseTags(e.EntityType, e.Name), SourceProvider: "server-memory"}, textOnly: true})
		}
	case "relation":
		if e.From == "" || e.To == "" || e.RelationType == "" {
			return nil, errors.New("a relation needs from, to and relationType")
		}
		text := e.From + " " + strings.ReplaceAll(e.RelationType, "_", " ") + " " + e.To
		recs = append(recs, &importRecord{Memory: Memory{Text: text, Tags: looseTags(e.From, e.To), SourceProvider: "server-memory"}, textOnly: true})
	}
	return recs, nil
}

// serviceRecords reads one memory of mcp-memory-service's export: content, tags (a list or a
// comma-separated string), memory_type (a tag, unless it is the default "note") and its
// times.
func serviceRecords(raw []byte) ([]*importRecord, error) {
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
	rec := &importRecord{Memory: Memory{Text: *it.Content, Tags: looseTags(tags...), Importance: DefaultImportance, SourceProvider: FormatMemoryService}}
	var err error
	if rec.CreatedAt, err = foreignTime("created_at", it.CreatedAtISO, it.CreatedAt); err != nil {
		return nil, err
	}
	if rec.UpdatedAt, err = foreignTime("updated_at", it.UpdatedAtISO, it.UpdatedAt); err != nil {
		return nil, err
	}
	rec.textOnly = rec.CreatedAt.IsZero()
	return []*importRecord{rec}, nil
}

// mem0Records reads one memory of Mem0's or OpenMemory's export: its text (memory, else
// content), categories (names, or OpenMemory's category_ids) as tags, the app that wrote it
// as source_provider, its times, and its state (deleted: a tombstone; archived or paused: a
// tag).
func mem0Records(raw []byte, ctx *docContext) ([]*importRecord, error) {
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
	if n := utf8.RuneCountInString(provider); n > MaxSourceChars {
		provider = string([]rune(provider)[:MaxSourceChars])
	}
	rec := &importRecord{Memory: Memory{Text: text, Tags: looseTags(tags...), Importance: DefaultImportance, SourceProvider: provider}}
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
	rec.textOnly = rec.CreatedAt.IsZero()
	return []*importRecord{rec}, nil
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
