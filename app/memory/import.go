package memory

// Import: memories from ownsona's export, the export_memories tool's output, or the knowledge
// graph of the reference MCP memory server.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memtext"
)

// importBatch is how many memories one transaction stores.
const importBatch = 200

// ImportStats is what an import did.
type ImportStats struct {
	Read     int // memories read from the input
	Imported int // stored
	Skipped  int // already stored (a re-import adds nothing twice)
	Bad      int // lines or items that could not be read or were refused, each reported
}

// importRecord is one memory to import, with the id it had in the source (0 if none).
type importRecord struct {
	Memory
	oldID    uint64
	oldRepBy *uint64
	line     int
	textOnly bool // a foreign record without times of its own: the same text is the same memory
}

// Import reads memories from r and stores those not stored yet. It takes ownsona's export
// (JSON Lines with a header, see Export), the export_memories tool's output (a document with
// "memories", or an MCP tool result with it in structuredContent), and the knowledge graph of
// @modelcontextprotocol/server-memory (JSON Lines of entities and relations). Each memory is
// checked as remember checks it; a bad line is reported on log with its number and skipped,
// and the rest goes in. Ownsona records keep every field (times, tombstones, expiry, source);
// ids are re-assigned and replaced_by_id follows them. A memory with the same text and creation
// time (for graph records, the same text) is already stored and skipped. Progress of large
// inputs goes to log too. err is an input that cannot be read at all, or a storage failure.
func (s *Store) Import(r io.Reader, log io.Writer) (ImportStats, error) {
	recs, st, err := s.parseImport(r, log)
	if err != nil {
		return st, err
	}
	// Idempotence: what is stored already (same text, same creation time) is skipped; its id
	// still maps the source's, so replaced_by_id links to it.
	seen := map[string]uint64{}
	s.Each(Filter{IncludeDeleted: true}, func(m *Memory) bool {
		seen[importKey(m)] = m.ID
		seen["\x00"+m.Text] = m.ID
		return true
	})
	newID := map[uint64]uint64{}
	var todo []*importRecord
	for _, rec := range recs {
		key := importKey(&rec.Memory)
		if rec.textOnly {
			key = "\x00" + rec.Text
		}
		if id, ok := seen[key]; ok {
			st.Skipped++
			if rec.oldID != 0 && id != 0 {
				newID[rec.oldID] = id
			}
			continue
		}
		seen[key] = 0 // the same memory twice in one file is imported once
		todo = append(todo, rec)
	}
	for start := 0; start < len(todo); start += importBatch {
		batch := todo[start:min(start+importBatch, len(todo))]
		items := make([]*newMemory, len(batch))
		for i, rec := range batch {
			items[i] = &newMemory{Memory: rec.Memory, Policy: DedupInsert}
		}
		res, err := s.insert(items)
		if err != nil {
			return st, err
		}
		for i, rec := range batch {
			if rec.oldID != 0 {
				newID[rec.oldID] = res[i].ID
			}
			rec.ID = res[i].ID
		}
		st.Imported += len(batch)
		if len(todo) > importBatch {
			fmt.Fprintf(log, "imported %d/%d\n", st.Imported, len(todo))
		}
	}
	// Tombstones that named their replacement point to its new id.
	links := map[uint64]uint64{}
	for _, rec := range todo {
		if rec.oldRepBy == nil {
			continue
		}
		if to, ok := newID[*rec.oldRepBy]; ok {
			links[rec.ID] = to
		}
	}
	if len(links) > 0 {
		ids := make([]uint64, 0, len(links))
		for id := range links {
			ids = append(ids, id)
		}
		if _, err := s.modify(ids, func(m *Memory) (bool, error) {
			to := links[m.ID]
			m.ReplacedByID = &to
			return true, nil
		}, nil); err != nil {
			return st, err
		}
	}
	return st, nil
}

// importKey identifies a memory across imports.
func importKey(m *Memory) string { return m.CreatedAt.UTC().Format(time.RFC3339Nano) + "\x00" + m.Text }

// checkImported fills what a foreign record lacks and checks the memory with the one validator
// remember and update use.
func (s *Store) checkImported(m *Memory) error {
	now := s.now().UTC()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
		if m.Importance == 0 {
			m.Importance = 0.5
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

// parseImport reads every record of r in whichever format it is.
func (s *Store) parseImport(r io.Reader, log io.Writer) ([]*importRecord, ImportStats, error) {
	var st ImportStats
	br := bufio.NewReaderSize(r, 1<<20)
	if isDocument(br) {
		return s.parseDocument(br, log)
	}
	var recs []*importRecord
	sc := bufio.NewScanner(br)
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
		var probe struct {
			Format string `json:"format"`
			Type   string `json:"type"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			st.Bad++
			fmt.Fprintf(log, "line %d: not JSON: %v\n", n, err)
			continue
		}
		switch {
		case probe.Format != "":
			if probe.Format != exportFormat {
				return nil, st, fmt.Errorf("line %d: format %q is not %s", n, probe.Format, exportFormat)
			}
		case probe.Type == "entity" || probe.Type == "relation":
			rs, err := graphRecords(line, probe.Type)
			for _, rec := range rs {
				if err == nil {
					err = s.checkImported(&rec.Memory)
				}
			}
			if err != nil {
				st.Bad++
				fmt.Fprintf(log, "line %d: %v\n", n, err)
				continue
			}
			for _, rec := range rs {
				rec.line = n
				st.Read++
				recs = append(recs, rec)
			}
		default:
			rec, err := s.memoryRecord(line)
			if err != nil {
				st.Bad++
				fmt.Fprintf(log, "line %d: %v\n", n, err)
				continue
			}
			rec.line = n
			st.Read++
			recs = append(recs, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("line %d: %w", n+1, err)
	}
	return recs, st, nil
}

// isDocument reports whether the input is one JSON document (export_memories output, possibly
// pretty-printed) rather than JSON Lines: its first line is not a whole JSON value, or is one
// with a "memories" list.
func isDocument(br *bufio.Reader) bool {
	b, _ := br.Peek(1 << 20)
	b = bytes.TrimPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("\ufeff"))
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(first, &probe); err != nil {
		return len(b) > 0 && b[0] == '{'
	}
	_, mems := probe["memories"]
	_, sc := probe["structuredContent"]
	return mems || sc
}

// parseDocument reads export_memories output: {"memories": [...]} or an MCP tool result with
// it in structuredContent.
func (s *Store) parseDocument(r io.Reader, log io.Writer) ([]*importRecord, ImportStats, error) {
	var st ImportStats
	var doc struct {
		Memories          []json.RawMessage `json:"memories"`
		StructuredContent *struct {
			Memories []json.RawMessage `json:"memories"`
		} `json:"structuredContent"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<30)).Decode(&doc); err != nil {
		return nil, st, fmt.Errorf("not an export_memories document: %w", err)
	}
	items := doc.Memories
	if items == nil && doc.StructuredContent != nil {
		items = doc.StructuredContent.Memories
	}
	if items == nil {
		return nil, st, errors.New(`not an export_memories document: no "memories" list`)
	}
	var recs []*importRecord
	for i, raw := range items {
		rec, err := s.memoryRecord(raw)
		if err != nil {
			st.Bad++
			fmt.Fprintf(log, "memory %d: %v\n", i+1, err)
			continue
		}
		rec.line = i + 1
		st.Read++
		recs = append(recs, rec)
	}
	return recs, st, nil
}

// memoryRecord reads one ownsona memory, checking it as remember would.
func (s *Store) memoryRecord(raw []byte) (*importRecord, error) {
	var m Memory
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not an ownsona memory: %v", err)
	}
	rec := &importRecord{Memory: m, oldID: m.ID, oldRepBy: m.ReplacedByID}
	rec.ID, rec.ReplacedByID = 0, nil
	if err := s.checkImported(&rec.Memory); err != nil {
		return nil, err
	}
	return rec, nil
}

// graphRecords turns a knowledge-graph line into memories: an entity's observations, tagged by
// its type and name, or a relation as a sentence tagged by both ends.
func graphRecords(line []byte, kind string) ([]*importRecord, error) {
	var e struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
		From         string   `json:"from"`
		To           string   `json:"to"`
		RelationType string   `json:"relationType"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("not a knowledge-graph %s: %v", kind, err)
	}
	tags := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if t, err := memtext.NormalizeTag(n); err == nil && t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	var recs []*importRecord
	switch kind {
	case "entity":
		if e.Name == "" {
			return nil, errors.New("an entity without a name")
		}
		for _, o := range e.Observations {
			recs = append(recs, &importRecord{Memory: Memory{Text: e.Name + ": " + o, Tags: tags(e.EntityType, e.Name), SourceProvider: "server-memory"}, textOnly: true})
		}
	case "relation":
		if e.From == "" || e.To == "" || e.RelationType == "" {
			return nil, errors.New("a relation needs from, to and relationType")
		}
		text := e.From + " " + strings.ReplaceAll(e.RelationType, "_", " ") + " " + e.To
		recs = append(recs, &importRecord{Memory: Memory{Text: text, Tags: tags(e.From, e.To), SourceProvider: "server-memory"}, textOnly: true})
	}
	return recs, nil
}
