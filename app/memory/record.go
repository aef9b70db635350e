package memory

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Buckets of the one file that belong to the memory store.
const (
	bucketMemories = "memories" // Key(id) → JSON of storedMemory
	bucketVectors  = "vectors"  // Key(id) → encodeVector(embedder id, vector)
)

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

// Memory is one remembered fact, as stored (JSON in the memories bucket) and as shown to clients;
// its vector is kept apart and never shown. Times are UTC.
type Memory struct {
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
	// Supersedes are the memories this one corrects (remember's and update_memory's
	// supersedes), oldest link first; SupersededBy is the memory that corrects this one. Both
	// directions are stored and kept in step by the store (supersede.go).
	Supersedes   []uint64 `json:"supersedes,omitempty"`
	SupersededBy *uint64  `json:"superseded_by,omitempty"`

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

func encodeMemory(m *Memory) ([]byte, error) { return json.Marshal(m) }

func decodeMemory(b []byte) (*Memory, error) {
	var m Memory
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode memory: %w", err)
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	return &m, nil
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
	if len(b) < 2 {
		return "", nil, fmt.Errorf("decode vector: short record")
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n || (len(b)-2-n)%4 != 0 {
		return "", nil, fmt.Errorf("decode vector: bad length %d", len(b))
	}
	embedder = string(b[2 : 2+n])
	p := b[2+n:]
	v = make([]float32, len(p)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return embedder, v, nil
}
