package tools

import (
	"slices"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// The pieces that several payloads share, as the tools show them (TOOLS.md): the wire shape is
// declared here, in the adapter, and converted from the store's types, so that a change of the
// store's own record never changes what clients read, and the output schemas are derived from
// these types (schema.go).

// memoryOut is a memory in a payload: TOOLS.md's memory, tombstone and supersedes links
// included; a search's match adds its score.
type memoryOut struct {
	ID              uint64     `json:"id" schema:"required,id"`
	Text            string     `json:"text" schema:"required"`
	Tags            []string   `json:"tags" schema:"required"`
	Importance      float64    `json:"importance"`
	CreatedAt       time.Time  `json:"created_at" schema:"required"`
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
	Supersedes      []uint64   `json:"supersedes,omitempty" schema:"id"`
	SupersededBy    *uint64    `json:"superseded_by,omitempty" schema:"id"`
	// Score is a search's relevance of the memory (recall); absent elsewhere.
	Score *float32 `json:"score,omitempty"`
}

// memoryOf is m in a payload; it shares nothing with m, which may be the store's own (Each).
func memoryOf(m *memory.Memory) memoryOut {
	out := memoryOut{ID: m.ID, Text: m.Text, Tags: slices.Clone(m.Tags), Importance: m.Importance,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, LastConfirmedAt: m.LastConfirmedAt, ExpiresAt: clonePtr(m.ExpiresAt),
		SourceProvider: m.SourceProvider, SourceClient: m.SourceClient, CaptureMode: m.CaptureMode, SessionID: m.SessionID,
		DeletedAt: clonePtr(m.DeletedAt), ForgetReason: m.ForgetReason, ReplacedByID: clonePtr(m.ReplacedByID),
		Supersedes: slices.Clone(m.Supersedes), SupersededBy: clonePtr(m.SupersededBy)}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out
}

// memoriesOf is mems in a payload: [] for none.
func memoriesOf(mems []*memory.Memory) []memoryOut {
	out := make([]memoryOut, len(mems))
	for i, m := range mems {
		out[i] = memoryOf(m)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// nearDuplicate is a stored memory close to one written: remember's near_duplicates and
// possible_contradictions.
type nearDuplicate struct {
	ID    uint64  `json:"id" schema:"id"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
}

// nearOf is dups in a payload; nil for none, which the payloads omit.
func nearOf(dups []memory.NearDuplicate) []nearDuplicate {
	if len(dups) == 0 {
		return nil
	}
	out := make([]nearDuplicate, len(dups))
	for i, d := range dups {
		out[i] = nearDuplicate{ID: d.ID, Text: d.Text, Score: d.Score}
	}
	return out
}

// tagCount is a tag and how many memories carry it.
type tagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// tagCountsOf is counts in a payload: [] for none.
func tagCountsOf(counts []memory.TagCount) []tagCount {
	out := make([]tagCount, len(counts))
	for i, c := range counts {
		out[i] = tagCount{Tag: c.Tag, Count: c.Count}
	}
	return out
}
