package vector

import (
	"context"
	"errors"
	"fmt"
)

// Kind says what a text is for. Some models embed questions and documents differently; an
// embedder that makes no difference ignores it.
type Kind int

const (
	Document Kind = iota // a memory being stored
	Query                // a question being searched for
)

// Info identifies an embedder. Its String form is stored with every vector, so that vectors
// made by another model or dimension are recognized and re-embedded.
type Info struct {
	Name  string // the embedder's kind, e.g. "openai"
	Model string // e.g. "nomic-embed-text"
	Dim   int    // the vectors' length; 0 while not yet known
}

// String is the form stored with vectors, e.g. "openai:nomic-embed-text:768".
func (i Info) String() string { return fmt.Sprintf("%s:%s:%d", i.Name, i.Model, i.Dim) }

// Embedder turns texts into vectors: one per text, in order, all of length Info().Dim.
// Implementations are safe for concurrent use.
type Embedder interface {
	Info() Info
	Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error)
}

// ErrUnavailable is wrapped by embedding errors that mean the service could not be used right
// now (unreachable, timed out, overloaded, rate limited, failing) as opposed to a request it
// refused. Callers typically fall back to lexical search and retry later.
var ErrUnavailable = errors.New("embedding service unavailable")
