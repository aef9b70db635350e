// Package vector is ownsona's similarity core: a tokenizer, a BM25 lexical index, an exact
// cosine index over one contiguous matrix, an HNSW graph (our own, after Malkov & Yashunin),
// Dense (exact until a graph is built in the background, then the graph alone), score fusion,
// Analyze (a text read once for BM25, WordCounts and the soft match), and embedders that turn
// text into vectors in the process: Builtin (GloVe word vectors compiled in, with SoftMatch, a
// soft term match that re-ranks candidates, weighted by a store's WordCounts) and Model2Vec;
// Embedder is also the interface embedhttp's HTTP embedders implement. It knows nothing of
// bbolt, HTTP or MCP: uint64 ids in, scored ids out.
//
// The simplest use:
//
//	lex := vector.NewBM25()
//	lex.Add(1, "I prefer dark roast coffee")
//	lex.Add(2, "My son Colby lives in Los Angeles")
//	hits := lex.Search("coffee", 8, nil) // [{1 0.71}]: best first, scores > 0
//
// and with an embedder:
//
//	emb := vector.NewBuiltin()
//	vecs, _ := emb.Embed(ctx, texts, vector.Document)
//	dense := vector.NewExact(len(vecs[0]))
//	dense.Add(1, vecs[0])
//	ranked := vector.Fuse(lex.Search(q, 50, f), dense.Search(qvec, 50, f), 0.5, 0.5, 8)
//
// # Caveats
//
//   - The indexes and WordCounts are caches. The caller owns the truth (the database) and
//     rebuilds them at startup; nothing here is persisted.
//   - BM25 and Exact are safe for concurrent use: many searches run at once, writes take an
//     exclusive lock. A Filter runs while the index's read lock is held, so it must not call
//     into the same index (not even Search: a waiting writer would deadlock it).
//   - A Filter is applied during the scan, before the top-k cut: a selective filter never
//     starves the result of matches that pass it. But it is asked lazily: once k candidates
//     passed, only about a candidate that would enter the top k, so a search that passes most
//     asks about a few hundred ids, not every one. The result is what asking about every
//     candidate first would give; a Filter must therefore be a pure predicate (no counting, no
//     side effects that later code relies on).
//   - Rankings are deterministic: higher score first, and on equal scores the higher id first.
//   - Scores of different indexes are not comparable (BM25 is unbounded, cosine is in [-1, 1]);
//     Fuse normalizes them before combining.
//   - Exact.Add keeps a normalized copy of its argument and Get returns a copy; the vectors
//     Embed returns belong to the caller.
//   - Memory: BM25 keeps 8 bytes per distinct term per document plus its dictionary and a
//     score accumulator of 4 bytes per document for each concurrent search; Exact keeps
//     4·dim bytes per vector.
//   - HNSW is approximate: at the default EfSearch (72) recall@10 is about 0.98 on clustered
//     data. Build holds its write lock for the whole build, which is why Dense keeps serving
//     from Exact until a background build is done and then replays the changes made meanwhile.
//     A filtered HNSW search estimates the filter's selectivity from a sample and scans
//     exactly when that is cheaper, so selective filters lose nothing. Remove leaves a
//     tombstone; past a fifth of the nodes the graph is repaired. Memory: 2·dim + about 190
//     bytes per vector at M 16. Dense holds each vector once: in Exact until the graph serves,
//     then in the graph (and, until a background goroutine inserts them, in a small exact tail).
package vector

import "errors"

// Scored is an id with its score; higher is better.
type Scored struct {
	ID    uint64
	Score float32
}

// Filter admits an id into a search; a nil Filter admits every id. It is called at most once
// per candidate, often for few of them (see the package's caveats), and runs under the index's
// read lock.
type Filter func(id uint64) bool

// ErrDimension is returned (wrapped) when a vector's length differs from the index's dimension,
// or when an embedding service answers with vectors of the wrong length.
var ErrDimension = errors.New("vector dimension mismatch")
