package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/mcp"
)

// update_memory, update_memory_batch and confirm: memories corrected.

// nullableTime is an argument that may be absent, null (clear it) or an RFC 3339 timestamp.
type nullableTime struct {
	set, null bool
	value     string
}

func (t *nullableTime) UnmarshalJSON(b []byte) error {
	t.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		t.null = true
		return nil
	}
	return json.Unmarshal(b, &t.value)
}

func (nullableTime) describe(desc string, _ map[string]string) schema {
	s := orNull(schema{"type": "string", "format": "date-time"})
	s["description"] = desc
	return s
}

type updateItemArgs struct {
	ID              uint64       `json:"id" schema:"required,id"`
	Text            *string      `json:"text" desc:"new text" schema:"min=1,max=100000"`
	Tags            tagsArg      `json:"tags"`
	Importance      *float64     `json:"importance" desc:"0 to 1" schema:"min=0,max=1"`
	ExpiresAt       nullableTime `json:"expires_at" desc:"new expiry (RFC 3339), or null to clear it"`
	LastConfirmedAt *string      `json:"last_confirmed_at" desc:"when the fact was last known true" schema:"time"`
	Supersedes      []uint64     `json:"supersedes" desc:"ids of memories this one corrects, added to those it already does (at most 50): they leave recall and lists but stay readable with get_memory" schema:"id,min=1,max=50"`
}

type dryRunArg struct {
	DryRun bool `json:"dry_run" desc:"preview without writing"`
}

type updateArgs struct {
	updateItemArgs
	dryRunArg
}

type updateBatchArgs struct {
	Items batch[updateItemArgs] `json:"items" schema:"required,min=1,max=200"`
	dryRunArg
}

// fields names the fields the arguments would change.
func (in *updateItemArgs) fields() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"text", in.Text != nil}, {"tags", in.Tags != nil}, {"importance", in.Importance != nil},
		{"expires_at", in.ExpiresAt.set}, {"last_confirmed_at", in.LastConfirmedAt != nil}, {"supersedes", len(in.Supersedes) > 0}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	if out == nil {
		out = []string{"nothing"}
	}
	return out
}

// hides reports whether the update takes memories out of recall and lists at once: it
// supersedes some, or sets an expiry within w.
func (in *updateItemArgs) hides(w expiryWindow) bool {
	return len(in.Supersedes) > 0 || in.ExpiresAt.set && !in.ExpiresAt.null && w.soon(in.ExpiresAt.value)
}

// expiryNote tells a person asked about the update when the memory would expire.
func (in *updateItemArgs) expiryNote() string {
	if !in.ExpiresAt.set || in.ExpiresAt.null {
		return ""
	}
	return " It expires at " + in.ExpiresAt.value + ", then leaves recall and lists."
}

// patch reads the arguments into a patch; prefix names the item inside a batch.
func (in *updateItemArgs) patch(prefix string) (memory.Patch, error) {
	p := memory.Patch{ID: in.ID, Text: in.Text, Importance: in.Importance, Supersedes: in.Supersedes}
	if in.Tags != nil {
		tags, err := memtext.ParseTags([]byte(in.Tags))
		if err != nil {
			return p, memory.Prefix(prefix, err)
		}
		p.Tags = &tags
	}
	var err error
	switch {
	case in.ExpiresAt.null:
		p.ClearExpiry = true
	case in.ExpiresAt.set:
		if p.ExpiresAt, err = parseTime(prefix+"expires_at", &in.ExpiresAt.value); err != nil {
			return p, err
		}
	}
	p.LastConfirmedAt, err = parseTime(prefix+"last_confirmed_at", in.LastConfirmedAt)
	return p, err
}

type updatePayload struct {
	OK            bool     `json:"ok"`
	MemoryID      uint64   `json:"memory_id" schema:"id"`
	DryRun        bool     `json:"dry_run"`
	ChangedFields []string `json:"changed_fields"`
	Message       string   `json:"message"`
}

// confirmPayload is confirm's.
type confirmPayload struct {
	OK              bool      `json:"ok"`
	MemoryID        uint64    `json:"memory_id" schema:"id"`
	LastConfirmedAt time.Time `json:"last_confirmed_at"`
}

type updateItemResult struct {
	InputIndex    int        `json:"input_index"`
	ID            uint64     `json:"id,omitempty" schema:"id"`
	OK            bool       `json:"ok"`
	ChangedFields []string   `json:"changed_fields,omitempty"`
	Error         *toolError `json:"error,omitempty"`
}

type updateBatchPayload struct {
	OK      bool               `json:"ok"`
	DryRun  bool               `json:"dry_run"`
	Results []updateItemResult `json:"results"`
	Summary struct {
		Total   int `json:"total"`
		Updated int `json:"updated"`
		Errors  int `json:"errors"`
	} `json:"summary"`
	cutNote
}

func (p updateBatchPayload) listLen() int { return len(p.Results) }

func (p updateBatchPayload) trimmed(n, _ int) any {
	q := p
	q.Results = firstOf(p.Results, n)
	q.cutNote = newCut(len(p.Results), n, "The results of %d more items", batchRest, nil, 0)
	return q
}

func (s *Server) updateTools() []*mcp.Tool {
	item := itemSchema[updateItemArgs]()
	return []*mcp.Tool{
		newTool(s, def[updateArgs, updatePayload]{
			name: "update_memory", title: "Update a memory",
			desc: "Change a memory's text, tags, importance, expiry (null clears it) or last confirmation, or name the memories it corrects (supersedes: they leave recall and lists); omitted fields stay as they are. changed_fields lists what changed; dry_run previews.",
			ann:  writes(false, true),
			run:  s.updateMemory,
			describe: func(_ context.Context, in updateArgs, text bool) (string, error) {
				m, err := s.mem.Get(in.ID)
				if err != nil {
					return "", err
				}
				return "Change " + memoryRef(m, text) + " (" + strings.Join(in.fields(), ", ") + ")?" +
					s.supersedesNote(in.Supersedes, text) + in.expiryNote(), nil
			},
			hides: func(in updateArgs, w expiryWindow) bool { return in.hides(w) },
		}),
		newTool(s, def[updateBatchArgs, updateBatchPayload]{
			name: "update_memory_batch", title: "Update several memories",
			desc:      "Apply up to 200 updates (each as update_memory) in one call; each item succeeds or fails on its own.",
			ann:       writes(false, true),
			batchProp: "items",
			run: func(ctx context.Context, in updateBatchArgs) (updateBatchPayload, error) {
				return s.updateMemoryBatch(ctx, in, item)
			},
			describe: func(_ context.Context, in updateBatchArgs, text bool) (string, error) {
				var ids []uint64
				for _, raw := range in.Items {
					var it struct{ ID uint64 }
					if json.Unmarshal(raw, &it) == nil {
						ids = append(ids, it.ID)
					}
				}
				return "Change " + s.memoryList(ids, text) + "?" + s.supersedesNote(supersededIn(in.Items), text), nil
			},
			hides: func(in updateBatchArgs, w expiryWindow) bool {
				for _, raw := range in.Items {
					var it updateItemArgs
					if json.Unmarshal(raw, &it) == nil && it.hides(w) {
						return true
					}
				}
				return false
			},
		}),
		newTool(s, def[idArgs, confirmPayload]{
			name: "confirm", title: "Confirm a memory",
			desc: "Record that a memory is still true now (sets last_confirmed_at), e.g. when the user reaffirms it.",
			ann:  writes(false, true),
			run:  s.confirm,
			describe: func(_ context.Context, in idArgs, text bool) (string, error) {
				m, err := s.mem.Get(in.ID)
				if err != nil {
					return "", err
				}
				return "Confirm " + memoryRef(m, text) + " as still true?", nil
			},
		}),
	}
}

func (s *Server) updateMemory(ctx context.Context, in updateArgs) (updatePayload, error) {
	p, err := in.patch("")
	if err != nil {
		return updatePayload{}, err
	}
	res, err := s.mem.Update(ctx, []memory.Patch{p}, in.DryRun)
	if err != nil {
		return updatePayload{}, err
	}
	if res[0].Err != nil {
		return updatePayload{}, res[0].Err
	}
	out := updatePayload{OK: true, MemoryID: p.ID, DryRun: in.DryRun, ChangedFields: nonNil(res[0].Changed), Message: "Ok"}
	if in.DryRun {
		out.Message = "Would update"
	}
	return out, nil
}

func (s *Server) updateMemoryBatch(ctx context.Context, in updateBatchArgs, item *mcp.Schema) (updateBatchPayload, error) {
	out := updateBatchPayload{OK: true, DryRun: in.DryRun, Results: make([]updateItemResult, len(in.Items))}
	var patches []memory.Patch
	var idx []int
	for i, raw := range in.Items {
		out.Results[i].InputIndex = i
		args, err := decodeItem[updateItemArgs](item, i, raw)
		var p memory.Patch
		if err == nil {
			p, err = args.patch(fmt.Sprintf("items[%d].", i))
		}
		if err != nil {
			out.Results[i].Error = payloadError(err)
			continue
		}
		out.Results[i].ID = p.ID
		patches = append(patches, p)
		idx = append(idx, i)
	}
	res, err := s.mem.Update(ctx, patches, in.DryRun)
	if err != nil {
		return updateBatchPayload{}, err
	}
	for j, i := range idx {
		r := &out.Results[i]
		if res[j].Err != nil {
			r.Error = payloadError(memory.Prefix(fmt.Sprintf("items[%d].", i), res[j].Err))
			continue
		}
		r.OK, r.ChangedFields = true, nonNil(res[j].Changed)
	}
	out.Summary.Total = len(out.Results)
	for _, r := range out.Results {
		switch {
		case !r.OK:
			out.Summary.Errors++
		case len(r.ChangedFields) > 0:
			out.Summary.Updated++
		}
	}
	return out, nil
}

func (s *Server) confirm(ctx context.Context, in idArgs) (confirmPayload, error) {
	at, err := s.mem.Confirm(in.ID)
	if err != nil {
		return confirmPayload{}, err
	}
	return confirmPayload{OK: true, MemoryID: in.ID, LastConfirmedAt: at}, nil
}
