package tools

import (
	"context"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/mcp"
)

// forget and forget_batch: memories retired, with a tombstone or for good.

type forgetArgs struct {
	ID           uint64  `json:"id" schema:"required,id"`
	HardDelete   bool    `json:"hard_delete" desc:"erase the memory instead of keeping a tombstone"`
	Reason       string  `json:"reason" desc:"why it is forgotten" schema:"min=1,max=1000"`
	ReplacedByID *uint64 `json:"replaced_by_id" desc:"the memory that replaces this one" schema:"min=1,max=9223372036854775807"`
	dryRunArg
}

type forgetBatchArgs struct {
	IDs    []uint64 `json:"ids" schema:"required,id,min=1,max=200"`
	Reason string   `json:"reason" desc:"why they are forgotten" schema:"min=1,max=1000"`
	dryRunArg
}

type forgetPayload struct {
	OK             bool   `json:"ok"`
	MemoryID       uint64 `json:"memory_id" schema:"id"`
	DryRun         bool   `json:"dry_run"`
	AlreadyDeleted bool   `json:"already_deleted"`
	Message        string `json:"message"`
}

type forgetItemResult struct {
	InputIndex     int        `json:"input_index"`
	ID             uint64     `json:"id" schema:"id"`
	OK             bool       `json:"ok"`
	AlreadyDeleted bool       `json:"already_deleted"`
	Error          *toolError `json:"error,omitempty"`
}

type forgetBatchPayload struct {
	OK      bool               `json:"ok"`
	DryRun  bool               `json:"dry_run"`
	Results []forgetItemResult `json:"results"`
	Summary struct {
		Total          int `json:"total"`
		Deleted        int `json:"deleted"`
		AlreadyDeleted int `json:"already_deleted"`
		Errors         int `json:"errors"`
	} `json:"summary"`
	cutNote
}

func (p forgetBatchPayload) listLen() int { return len(p.Results) }

func (p forgetBatchPayload) trimmed(n, _ int) any {
	q := p
	q.Results = firstOf(p.Results, n)
	q.cutNote = newCut(len(p.Results), n, "The results of %d more items", batchRest, nil, 0)
	return q
}

func (s *Server) forgetTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[forgetArgs, forgetPayload]{
			name: "forget", title: "Forget a memory",
			desc:     "Forget a memory that is no longer true. By default a soft delete that keeps a tombstone (with reason and replaced_by_id, the memory that supersedes it); hard_delete erases it for good. dry_run previews.",
			ann:      writes(true, true),
			run:      s.forget,
			describe: s.describeForget,
		}),
		newTool(s, def[forgetBatchArgs, forgetBatchPayload]{
			name: "forget_batch", title: "Forget several memories",
			desc: "Soft-delete up to 200 memories by id; each id succeeds or fails on its own.",
			ann:  writes(true, true),
			run:  s.forgetBatch,
			describe: func(_ context.Context, in forgetBatchArgs, text bool) (string, error) {
				return "Forget " + s.memoryList(in.IDs, text) + "? Forgotten memories stay restorable from the trash.", nil
			},
		}),
	}
}

func (s *Server) forget(ctx context.Context, in forgetArgs) (forgetPayload, error) {
	m, err := s.mem.Get(in.ID)
	if err != nil {
		return forgetPayload{}, err
	}
	if err := in.check(); err != nil {
		return forgetPayload{}, err
	}
	p := forgetPayload{OK: true, MemoryID: in.ID, DryRun: in.DryRun, AlreadyDeleted: m.Deleted()}
	if in.HardDelete {
		p.Message = "Would hard delete"
		if !in.DryRun {
			if err := s.mem.Delete(in.ID); err != nil {
				return forgetPayload{}, err
			}
			p.Message = "Hard deleted"
		}
		return p, nil
	}
	res, err := s.mem.Forget([]uint64{in.ID}, memory.Forgetting{Reason: in.Reason, ReplacedBy: in.ReplacedByID, DryRun: in.DryRun})
	if err != nil {
		return forgetPayload{}, err
	}
	if res[0].Err != nil {
		return forgetPayload{}, res[0].Err
	}
	p.AlreadyDeleted = res[0].Already
	switch {
	case p.AlreadyDeleted:
		p.Message = "Already forgotten"
	case in.DryRun:
		p.Message = "Would soft-delete"
	default:
		p.Message = "Forgotten"
	}
	return p, nil
}

// check refuses arguments that contradict each other.
func (in *forgetArgs) check() error {
	if in.HardDelete && in.ReplacedByID != nil {
		return mcp.InvalidArgument("replaced_by_id", "cannot be combined with hard_delete: a hard delete keeps no tombstone")
	}
	return nil
}

// describeForget asks about a forget: "Forget memory 12 "My son Colby…" permanently?".
func (s *Server) describeForget(_ context.Context, in forgetArgs, text bool) (string, error) {
	m, err := s.mem.Get(in.ID)
	if err != nil {
		return "", err
	}
	if err := in.check(); err != nil {
		return "", err
	}
	what := memoryRef(m, text)
	switch {
	case in.HardDelete && m.Deleted():
		return "Erase " + what + ", now in the trash, permanently? It cannot be restored afterwards.", nil
	case in.HardDelete:
		return "Forget " + what + " permanently? A hard delete keeps no tombstone: it cannot be restored.", nil
	}
	return "Forget " + what + "? It stays restorable from the trash.", nil
}

func (s *Server) forgetBatch(ctx context.Context, in forgetBatchArgs) (forgetBatchPayload, error) {
	res, err := s.mem.Forget(in.IDs, memory.Forgetting{Reason: in.Reason, DryRun: in.DryRun})
	if err != nil {
		return forgetBatchPayload{}, err
	}
	p := forgetBatchPayload{OK: true, DryRun: in.DryRun, Results: make([]forgetItemResult, len(res))}
	for i, r := range res {
		out := &p.Results[i]
		out.InputIndex, out.ID = i, r.ID
		switch {
		case r.Err != nil:
			out.Error = payloadError(r.Err)
			p.Summary.Errors++
		case r.Already:
			out.OK, out.AlreadyDeleted = true, true
			p.Summary.AlreadyDeleted++
		default:
			out.OK = true
			p.Summary.Deleted++
		}
	}
	p.Summary.Total = len(in.IDs)
	return p, nil
}
