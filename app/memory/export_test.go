package memory

import "github.com/ownsona/ownsona/app/rank"

// Neighbours is memory id's context as the store derived it (forgotten neighbours included;
// search skips them), for tests.
func (s *Store) Neighbours(id uint64) []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.neighboursLocked(nil, id)
}

// SetContextWeights changes how much context counts in search (lexical, soft), for
// benchmarks that compare with and without it on one store.
func (s *Store) SetContextWeights(lexical, soft float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.ranker.Params()
	p.ContextLexical, p.ContextSoft = lexical, soft
	s.ranker = rank.New(s.emb, p)
}
