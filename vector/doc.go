// Package vector is ownsona's similarity core: a tokenizer, a BM25 lexical index, an exact
// cosine index over a contiguous matrix, score fusion, and embedders that turn text into
// vectors. It knows nothing of bbolt, HTTP or MCP: IDs in, scored IDs out.
//
// The simplest use:
//
//	lex := vector.NewBM25()
//	lex.Add(1, "I prefer dark roast coffee")
//	hits := lex.Search("coffee", 8, nil) // []Scored, best first
//
// Indexes are caches: the caller owns the truth and rebuilds them at startup. They are safe for
// concurrent use (many readers, one writer). Filters run during the scan, before the top-k cut,
// so a selective filter never starves the result.
package vector

import "errors"

// Scored is an id with its score; higher is better.
type Scored struct {
	ID    uint64
	Score float32
}

// Filter admits an id into a search; nil admits every id.
type Filter func(id uint64) bool

// ErrDimension is returned when a vector's length differs from the index's dimension.
var ErrDimension = errors.New("vector dimension mismatch")
