package rank

import (
	"fmt"

	"github.com/ownsona/ownsona/vector"
)

// Params are the ranking's tuned knobs. Default gives the shipped ones; the evaluation
// (app/internal/evalsvc) measures others and chooses among them by leave-one-conversation-out
// cross-validation.
type Params struct {
	// ContextLexical is the share of a neighbour's BM25 score credited to a memory, and
	// ContextSoft the discount of a neighbour's soft term match (the memory's context: the
	// memories written with it). 0 and 0: no context.
	ContextLexical, ContextSoft float32
}

// Default returns the shipped knobs.
func Default() Params {
	return Params{
		ContextLexical: vector.ContextLexicalWeight,
		ContextSoft:    vector.ContextSoftWeight,
	}
}

// String reads "context 0.5/0.8".
func (p Params) String() string {
	return fmt.Sprintf("context %.2g/%.2g", p.ContextLexical, p.ContextSoft)
}
