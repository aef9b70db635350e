package memory

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

// Buckets of the one file that belong to the memory store.
const (
	bucketMemories = "memories" // Key(id) → JSON of record
	bucketVectors  = "vectors"  // Key(id) → encodeVector(embedder id, vector)
)

// fillPercent is how full the pages of the memories and vectors buckets are written: both take
// their keys mostly in ascending id order, so full pages keep the file about the size of its
// data (bbolt's default, 0.5, left it twice that).
const fillPercent = 1.0

// writeBuckets opens the memories and vectors buckets in a write transaction, filling their
// pages (fillPercent).
func writeBuckets(tx *kv.Tx) (mb, vb *kv.Bucket) {
	mb, vb = tx.Bucket(bucketMemories), tx.Bucket(bucketVectors)
	mb.SetFillPercent(fillPercent)
	vb.SetFillPercent(fillPercent)
	return mb, vb
}

// Migrations is the ordered list of schema changes of the one file, run by kv.Open. Append only.
var Migrations = []kv.Migration{
	{Version: 1, Name: "create memory buckets", Up: func(tx *kv.Tx) error {
		for _, name := range []string{bucketMemories, bucketVectors} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	}},
}

// Memory is one remembered fact: the domain's value, which every operation takes and returns. The
// store keeps it as a record (JSON in the memories bucket, record.go) and its vector apart;
// adapters show it in payload types of their own. Times are UTC.
type Memory struct {
	ID              uint64
	Text            string
	Tags            []string
	Importance      float64
	CreatedAt       time.Time
	UpdatedAt       time.Time
	LastConfirmedAt time.Time
	ExpiresAt       *time.Time
	SourceProvider  string
	SourceClient    string
	CaptureMode     string
	SessionID       string
	DeletedAt       *time.Time
	ForgetReason    string
	ReplacedByID    *uint64
	// Supersedes are the memories this one corrects (remember's and update_memory's
	// supersedes), oldest link first; SupersededBy is the memory that corrects this one. Both
	// directions are stored and kept in step by the store (supersede.go).
	Supersedes   []uint64
	SupersededBy *uint64

	// superseded caches whether SupersededBy names a memory that is not forgotten: then this
	// one has left searches and lists. The store keeps it; it is not stored.
	superseded bool
}

// Deleted reports whether m is soft-deleted (forgotten).
func (m *Memory) Deleted() bool { return m.DeletedAt != nil }

// Expired reports whether m's expiry has passed at now.
func (m *Memory) Expired(now time.Time) bool {
	return m.ExpiresAt != nil && !m.ExpiresAt.After(now)
}

// Active reports whether m is neither forgotten nor expired at now.
func (m *Memory) Active(now time.Time) bool { return !m.Deleted() && !m.Expired(now) }

// Superseded reports whether m is corrected by a memory that is not forgotten, as the store saw
// it when it handed m out: such a memory stays (get_memory, export, the console) but leaves
// searches and lists unless Filter.IncludeSuperseded asks for it. A memory whose successor is
// forgotten is current again (and superseded again if the successor is restored).
func (m *Memory) Superseded() bool { return m.superseded }

// Clone returns a deep copy: memories handed out never share slices with the store.
func (m *Memory) Clone() *Memory {
	c := *m
	c.Tags = append([]string(nil), m.Tags...)
	if c.Tags == nil {
		c.Tags = []string{}
	}
	c.Supersedes = slices.Clone(m.Supersedes)
	if m.SupersededBy != nil {
		by := *m.SupersededBy
		c.SupersededBy = &by
	}
	return &c
}

// record is a memory as the memories bucket holds it: one JSON object with these keys, which
// every file written so far holds, so they never change (TestEncodeMemory pins the bytes;
// recordDecoder reads the same keys). Export writes the same object per line (export.go). It
// is the store's alone: Memory is the domain's value, and adapters show it in shapes of their
// own.
type record struct {
	ID              uint64     `json:"id"`
	Text            string     `json:"text"`
	Tags            []string   `json:"tags"`
	Importance      float64    `json:"importance"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	LastConfirmedAt time.Time  `json:"last_confirmed_at"`
	ExpiresAt       *time.Time `json:"expires_at,omitempty"`
	SourceProvider  string     `json:"source_provider"`
	SourceClient    string     `json:"source_client"`
	CaptureMode     string     `json:"capture_mode"`
	SessionID       string     `json:"session_id,omitempty"`
	DeletedAt       *time.Time `json:"deleted_at,omitempty"`
	ForgetReason    string     `json:"forget_reason,omitempty"`
	ReplacedByID    *uint64    `json:"replaced_by_id,omitempty"`
	Supersedes      []uint64   `json:"supersedes,omitempty"`
	SupersededBy    *uint64    `json:"superseded_by,omitempty"`
}

// recordOf is m's record; it shares m's slices and pointers.
func recordOf(m *Memory) *record {
	return &record{ID: m.ID, Text: m.Text, Tags: m.Tags, Importance: m.Importance, CreatedAt: m.CreatedAt,
		UpdatedAt: m.UpdatedAt, LastConfirmedAt: m.LastConfirmedAt, ExpiresAt: m.ExpiresAt,
		SourceProvider: m.SourceProvider, SourceClient: m.SourceClient, CaptureMode: m.CaptureMode,
		SessionID: m.SessionID, DeletedAt: m.DeletedAt, ForgetReason: m.ForgetReason,
		ReplacedByID: m.ReplacedByID, Supersedes: m.Supersedes, SupersededBy: m.SupersededBy}
}

// memory is r's memory; it shares r's slices and pointers.
func (r *record) memory() *Memory {
	return &Memory{ID: r.ID, Text: r.Text, Tags: r.Tags, Importance: r.Importance, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, LastConfirmedAt: r.LastConfirmedAt, ExpiresAt: r.ExpiresAt,
		SourceProvider: r.SourceProvider, SourceClient: r.SourceClient, CaptureMode: r.CaptureMode,
		SessionID: r.SessionID, DeletedAt: r.DeletedAt, ForgetReason: r.ForgetReason,
		ReplacedByID: r.ReplacedByID, Supersedes: r.Supersedes, SupersededBy: r.SupersededBy}
}

// encodeMemory is m's record, as the memories bucket holds it.
func encodeMemory(m *Memory) ([]byte, error) { return json.Marshal(recordOf(m)) }

// decodeMemory reads a record with encoding/json: every record encoding/json accepts, where
// recordDecoder declines.
func decodeMemory(b []byte) (*Memory, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode memory: %w", err)
	}
	m := r.memory()
	if m.Tags == nil {
		m.Tags = []string{}
	}
	return m, nil
}

// loadMemories decodes every memory of the memories bucket b and hands them to each in id
// order, a chunk at a time. The calling goroutine walks the bucket and copies the records
// (bbolt's bytes live only as long as the transaction) in chunks, which the cores decode
// meanwhile (recordDecoder, else encoding/json); each runs on a goroutine of its own as soon as
// a chunk and every chunk before it are decoded, so that indexing overlaps decoding. With
// analyze, the cores also read each text for the indexes (vector.Analysis, one per memory,
// handed to each beside it); they read each text's mentions of times against its creation time
// in loc too (handed to each beside it, nil for a memory that mentions none).
//
// It returns when the walk is done, with the ids walked, in order, and wait, which returns
// once each has returned for the last chunk, with the walk's error or the first record that
// would not decode (each sees no chunk from that one on).
func loadMemories(b *kv.Bucket, loc *time.Location, analyze func(string) vector.Analysis, each func([]*Memory, []vector.Analysis, [][]mention)) (ids []uint64, wait func() error) {
	const chunk = 1024
	type part struct {
		ids  []uint64
		raw  [][]byte
		mems []*Memory
		ans  []vector.Analysis
		ment [][]mention
		err  error
		done chan struct{}
	}
	// Both queues are deep enough that the walk rarely waits: the records are copied all the
	// same, and a worker stuck on the embedder's first load (analyze) must not stop the walk.
	work := make(chan *part, 64)
	ordered := make(chan *part, 64)
	for range runtime.GOMAXPROCS(0) {
		go func() {
			var dec recordDecoder
			for p := range work {
				p.mems = make([]*Memory, len(p.raw))
				p.ment = make([][]mention, len(p.raw))
				for i, raw := range p.raw {
					m, ok := dec.decode(raw)
					if !ok { // not a record as encodeMemory writes it: encoding/json decides
						var err error
						if m, err = decodeMemory(raw); err != nil {
							p.err = fmt.Errorf("memory %d: %w", p.ids[i], err)
							break
						}
					}
					p.mems[i] = m
					p.ment[i] = mentionsOf(m.Text, m.CreatedAt, loc)
					if analyze != nil {
						p.ans = append(p.ans, analyze(m.Text))
					}
				}
				p.raw = nil
				close(p.done)
			}
		}()
	}
	var firstErr error
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		for p := range ordered {
			<-p.done
			if firstErr == nil && p.err != nil {
				firstErr = p.err
			}
			if firstErr == nil {
				each(p.mems, p.ans, p.ment)
			}
		}
	}()
	// The records are copied into a few large buffers rather than one allocation each: the
	// copies die after decoding, and small ones would be scattered among the memories that
	// live on, leaving their spans half empty for as long as the process runs.
	var buf []byte
	copyOf := func(v []byte) []byte {
		if cap(buf)-len(buf) < len(v) {
			buf = make([]byte, 0, max(256<<10, len(v)))
		}
		buf = append(buf, v...)
		return buf[len(buf)-len(v) : len(buf) : len(buf)]
	}
	cur := &part{done: make(chan struct{})}
	send := func() {
		work <- cur
		ordered <- cur
		cur = &part{done: make(chan struct{})}
	}
	walkErr := b.ForEach(func(k, v []byte) error {
		ids = append(ids, kv.ID(k))
		cur.ids = append(cur.ids, kv.ID(k))
		cur.raw = append(cur.raw, copyOf(v))
		if len(cur.raw) == chunk {
			send()
		}
		return nil
	})
	if len(cur.raw) > 0 {
		send()
	}
	close(work)
	close(ordered)
	return ids, func() error {
		<-indexed
		if walkErr != nil {
			return walkErr
		}
		return firstErr
	}
}

// encodeVector stores the embedder id with the vector: a 2-byte length, the id, then
// little-endian float32s.
func encodeVector(embedder string, v []float32) []byte {
	b := make([]byte, 2+len(embedder)+4*len(v))
	binary.BigEndian.PutUint16(b, uint16(len(embedder)))
	copy(b[2:], embedder)
	p := b[2+len(embedder):]
	for i, f := range v {
		binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) (embedder string, v []float32, err error) {
	return decodeVectorInto(b, nil)
}

// decodeVectorInto is decodeVector into buf's storage when it is large enough: v is valid
// until the next call with the same buf.
func decodeVectorInto(b []byte, buf []float32) (embedder string, v []float32, err error) {
	if len(b) < 2 {
		return "", nil, fmt.Errorf("decode vector: short record")
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n || (len(b)-2-n)%4 != 0 {
		return "", nil, fmt.Errorf("decode vector: bad length %d", len(b))
	}
	embedder = string(b[2 : 2+n])
	p := b[2+n:]
	if cap(buf) >= len(p)/4 {
		v = buf[:len(p)/4]
	} else {
		v = make([]float32, len(p)/4)
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return embedder, v, nil
}
