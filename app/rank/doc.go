// Package rank is recall's ranking pipeline: given the candidates the indexes propose for a
// question (BM25, the embedder's cosine), it fuses them with the soft term match, the words of
// each memory's context and the question's time words into one ranking, and cuts it at a
// relevance floor. It knows memories only through the Corpus the store hands it, under the
// store's lock; it keeps no state between searches but its scratch space.
package rank
