package rank

import (
	"fmt"

	"github.com/ownsona/ownsona/vector"
)

// Params are the ranking's tuned knobs. Default gives the shipped ones; the evaluation
// (cmd/evalsvc) measures others and chooses among them by leave-one-conversation-out
// cross-validation.
type Params struct {
	// ContextLexical is the share of a neighbour's BM25 score credited to a memory, and
	// ContextSoft the discount of a neighbour's soft term match (the memory's context: the
	// memories written with it). 0 and 0: no context.
	ContextLexical, ContextSoft float32
	// Who is the share of its score a memory loses when it names none of the people a
	// question names, and WhoSelf when its subject is another person while the question asks
	// about the user (who.go): 0 keeps it all.
	Who, WhoSelf float32
	// Floor is the relevance floor relative to the best match: a memory scoring less than
	// Floor times the best one's score is left out of the answer. 0 keeps every candidate.
	Floor float32
}

// Default returns the shipped knobs, measured by make eval (cmd/evalsvc) on LoCoMo's
// turns and facts stored today and at the time, and by the golden set of testdata/recall:
// Who 0.2 leaves recall@10 within ±0.003 of none and lifts the questions about several things
// (category 1) by 0.02 to 0.03; 0.3 costs 0.01. WhoSelf 0.5 puts "I work as…" above "Colby
// works as…" for "what do I do for work?"; LoCoMo's questions name people, so it never fires
// there. Floor 0.4 costs 0 to 0.003 of recall@10 (0.3 costs at most 0.001, 0.5 up to 0.009)
// and keeps a small store's unrelated memories out of an answer.
func Default() Params {
	return Params{
		ContextLexical: vector.ContextLexicalWeight,
		ContextSoft:    vector.ContextSoftWeight,
		Who:            0.2,
		WhoSelf:        0.5,
		Floor:          0.4,
	}
}

// String reads "context 0.5/0.8".
func (p Params) String() string {
	return fmt.Sprintf("context %.2g/%.2g, who %.2g/%.2g, floor %.2g", p.ContextLexical, p.ContextSoft, p.Who, p.WhoSelf, p.Floor)
}
