package tools

import (
	"context"
	"fmt"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
)

// remember and remember_batch: new memories.

type dedupArg struct {
	DedupPolicy memory.DedupPolicy `json:"dedup_policy" desc:"ask (default): store and report near duplicates; insert: no check; skip_if_near: return the existing memory instead" schema:"enum=ask|insert|skip_if_near"`
}

type rememberArgs struct {
	Text            string   `json:"text" desc:"the fact to remember, in one self-contained sentence" schema:"required,min=1,max=100000"`
	Tags            tagsArg  `json:"tags"`
	SourceProvider  string   `json:"source_provider" desc:"who is writing, e.g. claude or chatgpt; defaults to the client's name" schema:"min=1,max=100"`
	Importance      *float64 `json:"importance" desc:"0 to 1, default 0.5" schema:"min=0,max=1"`
	CaptureMode     string   `json:"capture_mode" desc:"explicit when the user asked to remember, inferred when you chose to" schema:"enum=explicit|inferred"`
	SessionID       string   `json:"session_id" desc:"conversation id, if any" schema:"min=1,max=200"`
	ExpiresAt       *string  `json:"expires_at" desc:"when the fact stops being true" schema:"time"`
	LastConfirmedAt *string  `json:"last_confirmed_at" desc:"when the fact was last known true; default now" schema:"time"`
	Supersedes      []uint64 `json:"supersedes" desc:"ids of memories this one corrects (at most 50): they leave recall and lists but stay readable with get_memory. Only when the user confirms the old fact is no longer true" schema:"id,min=1,max=50"`
	IdempotencyKey  string   `json:"idempotency_key" desc:"a key of your choice for this write (e.g. a UUID); a retry with the same key within 24 hours returns the first result with replayed: true instead of storing again" schema:"min=1,max=200"`
	dedupArg
}

type rememberBatchArgs struct {
	Items          batch[rememberArgs] `json:"items" schema:"required,min=1,max=200"`
	SourceProvider string              `json:"source_provider" desc:"default source_provider of the items" schema:"min=1,max=100"`
	dedupArg
}

// draft reads the arguments into a memory draft; prefix names the item inside a batch.
func (in *rememberArgs) draft(prefix string, defPolicy memory.DedupPolicy) (memory.Draft, error) {
	d := memory.Draft{Text: in.Text, Importance: in.Importance, CaptureMode: in.CaptureMode, SessionID: in.SessionID,
		SourceProvider: in.SourceProvider, Dedup: in.DedupPolicy, Supersedes: in.Supersedes, IdempotencyKey: in.IdempotencyKey}
	if d.Dedup == "" {
		d.Dedup = defPolicy
	}
	var err error
	if d.Tags, err = memtext.ParseTags([]byte(in.Tags)); err != nil {
		return d, memory.Prefix(prefix, err)
	}
	if d.ExpiresAt, err = parseTime(prefix+"expires_at", in.ExpiresAt); err != nil {
		return d, err
	}
	d.LastConfirmedAt, err = parseTime(prefix+"last_confirmed_at", in.LastConfirmedAt)
	return d, err
}

// rememberPayload is remember's. (Struct tags take no constants: the descriptions of replayed
// and possible_contradictions are rememberItemResult's too, word for word.)
type rememberPayload struct {
	OK             bool            `json:"ok"`
	MemoryID       uint64          `json:"memory_id" schema:"id"`
	Message        string          `json:"message"`
	Replayed       bool            `json:"replayed,omitempty" desc:"true when nothing was stored: an earlier call with the same idempotency_key, or the same text and tags written by this client within the last minute, answered"`
	NearDuplicates []nearDuplicate `json:"near_duplicates,omitempty"`
	Contradictions []nearDuplicate `json:"possible_contradictions,omitempty" desc:"stored memories similar to this one but with other details (a place, a number, a name, a negation): ask the user whether the new memory replaces them, and if so call update_memory with supersedes"`
	Warning        string          `json:"warning,omitempty"`
}

type rememberItemResult struct {
	InputIndex     int             `json:"input_index"`
	OK             bool            `json:"ok"`
	MemoryID       uint64          `json:"memory_id,omitempty" schema:"id"`
	Message        string          `json:"message,omitempty"`
	Replayed       bool            `json:"replayed,omitempty" desc:"true when nothing was stored: an earlier call with the same idempotency_key, or the same text and tags written by this client within the last minute, answered"`
	Error          *toolError      `json:"error,omitempty"`
	NearDuplicates []nearDuplicate `json:"near_duplicates,omitempty"`
	Contradictions []nearDuplicate `json:"possible_contradictions,omitempty" desc:"stored memories similar to this one but with other details (a place, a number, a name, a negation): ask the user whether the new memory replaces them, and if so call update_memory with supersedes"`
}

type rememberBatchPayload struct {
	OK      bool                 `json:"ok"`
	Results []rememberItemResult `json:"results"`
	Summary struct {
		Total     int `json:"total"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
	} `json:"summary"`
	Warning string `json:"warning,omitempty"`
	cutNote
}

func (p rememberBatchPayload) listLen() int { return len(p.Results) }

// trimmed keeps the first n results; with textMax, the texts of the near duplicates and
// possible contradictions of the first are cut.
func (p rememberBatchPayload) trimmed(n, textMax int) any {
	q := p
	q.Results = firstOf(p.Results, n)
	var cut []uint64
	if textMax >= 0 && n > 0 {
		r := &q.Results[0]
		r.NearDuplicates, cut = cutNear(r.NearDuplicates, textMax, cut)
		r.Contradictions, cut = cutNear(r.Contradictions, textMax, cut)
	}
	q.cutNote = newCut(len(p.Results), n, "The results of %d more items", batchRest, cut, textMax)
	return q
}

// batchRest says what became of the items of a batch whose results were left out.
const batchRest = "those items were processed all the same (summary counts them); list_memories and get_memory show the memories as they are now"

// cutNear is dups with their texts cut to max characters, appending the ids of those cut to cut.
func cutNear(dups []nearDuplicate, max int, cut []uint64) ([]nearDuplicate, []uint64) {
	if len(dups) == 0 {
		return dups, cut
	}
	out := make([]nearDuplicate, len(dups))
	for i, d := range dups {
		var was bool
		if d.Text, was = cutText(d.Text, max); was {
			cut = append(cut, d.ID)
		}
		out[i] = d
	}
	return out, cut
}

func (s *Server) rememberTools() []*mcp.Tool {
	item := itemSchema[rememberArgs]()
	return []*mcp.Tool{
		newTool(s, def[rememberArgs, rememberPayload]{
			name: "remember", title: "Remember a fact",
			desc: "Store one durable fact about the user (a preference, a person, a plan, a decision) as a self-contained sentence with tags. Near duplicates are stored and reported unless dedup_policy says otherwise. When the fact corrects a stored one, name it in supersedes; possible_contradictions lists stored facts with other details, for you to ask the user about. Give an idempotency_key so that a retry never stores twice. Text that looks like a secret is refused.",
			ann:  writes(false, false),
			run:  s.remember,
			describe: func(_ context.Context, in rememberArgs, text bool) (string, error) {
				if kind, found := memtext.DetectSecret(in.Text); found {
					return "", &memory.SecretError{Kind: kind} // refused anyway: never quoted in a question
				}
				return "Remember " + excerpt(in.Text) + "?" + s.supersedesNote(in.Supersedes, text), nil // the caller's own text
			},
			hides: func(in rememberArgs, _ expiryWindow) bool { return len(in.Supersedes) > 0 }, // its expiry is its own
		}),
		newTool(s, def[rememberBatchArgs, rememberBatchPayload]{
			name: "remember_batch", title: "Remember several facts",
			desc:      "Store up to 200 facts in one call; each item takes remember's arguments and succeeds or fails on its own (results[i].input_index). source_provider and dedup_policy given here are the items' defaults.",
			ann:       writes(false, false),
			batchProp: "items",
			run: func(ctx context.Context, in rememberBatchArgs) (rememberBatchPayload, error) {
				return s.rememberBatch(ctx, in, item)
			},
			describe: func(_ context.Context, in rememberBatchArgs, text bool) (string, error) {
				return fmt.Sprintf("Remember %d new memories?", len(in.Items)) + s.supersedesNote(supersededIn(in.Items), text), nil
			},
			hides: func(in rememberBatchArgs, _ expiryWindow) bool { return len(supersededIn(in.Items)) > 0 },
		}),
	}
}

func (s *Server) remember(ctx context.Context, in rememberArgs) (rememberPayload, error) {
	d, err := in.draft("", "")
	if err != nil {
		return rememberPayload{}, err
	}
	res, warning, err := s.mem.Remember(ctx, []memory.Draft{d}, writer(ctx, ""))
	if err != nil {
		return rememberPayload{}, err
	}
	if res[0].Err != nil {
		return rememberPayload{}, res[0].Err
	}
	p := rememberPayload{OK: true, MemoryID: res[0].ID, Message: "Ok", Replayed: res[0].Replayed, NearDuplicates: nearOf(res[0].NearDuplicates),
		Contradictions: nearOf(res[0].Contradictions), Warning: warning}
	if res[0].Existing {
		p.Message = "Already remembered"
	}
	return p, nil
}

func (s *Server) rememberBatch(ctx context.Context, in rememberBatchArgs, item *mcp.Schema) (rememberBatchPayload, error) {
	n := float64(len(in.Items))
	mcp.Progress(ctx, 0, n, "checking")
	p := rememberBatchPayload{OK: true, Results: make([]rememberItemResult, len(in.Items))}
	var drafts []memory.Draft
	var idx []int
	for i, raw := range in.Items {
		p.Results[i].InputIndex = i
		prefix := fmt.Sprintf("items[%d].", i)
		args, err := decodeItem[rememberArgs](item, i, raw)
		var d memory.Draft
		if err == nil {
			d, err = args.draft(prefix, in.DedupPolicy)
		}
		if err != nil {
			p.Results[i].Error = payloadError(err)
			continue
		}
		drafts = append(drafts, d)
		idx = append(idx, i)
	}
	mcp.Progress(ctx, n/2, n, "storing")
	res, warning, err := s.mem.Remember(ctx, drafts, writer(ctx, in.SourceProvider))
	if err != nil {
		return rememberBatchPayload{}, err
	}
	p.Warning = warning
	for j, i := range idx {
		r := &p.Results[i]
		if res[j].Err != nil {
			r.Error = payloadError(memory.Prefix(fmt.Sprintf("items[%d].", i), res[j].Err))
			continue
		}
		r.OK, r.MemoryID, r.Message, r.NearDuplicates = true, res[j].ID, "Ok", nearOf(res[j].NearDuplicates)
		r.Replayed, r.Contradictions = res[j].Replayed, nearOf(res[j].Contradictions)
		if res[j].Existing {
			r.Message = "Already remembered"
		}
	}
	for _, r := range p.Results {
		if r.OK {
			p.Summary.Succeeded++
		} else {
			p.Summary.Failed++
		}
	}
	p.Summary.Total = len(in.Items)
	mcp.Progress(ctx, n, n, "done")
	return p, nil
}

// writer is origin with the principal that owns idempotency keys: the OAuth client or personal
// access token (oauth.Principal.Key), or the transport.
func writer(ctx context.Context, declared string) memory.Origin {
	o := origin(ctx, declared)
	o.Principal = o.Client
	if p, ok := oauth.PrincipalFrom(ctx); ok {
		o.Principal = p.Key()
	}
	return o
}
