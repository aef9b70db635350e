// Package embedhttp holds the embedders that make HTTP calls: vector.Embedder implementations
// over an embedding service. Today that is OpenAI, a client of any OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, llama.cpp's server, vLLM, LocalAI). vector keeps the
// embedders that run in the process (Builtin, Model2Vec) and knows nothing of HTTP.
//
// The simplest use:
//
//	emb, err := embedhttp.NewOpenAI(embedhttp.OpenAIConfig{URL: "http://localhost:11434/v1", Model: "nomic-embed-text"})
//	vecs, err := emb.Embed(ctx, texts, vector.Document)
//
// # Caveats
//
//   - OpenAI retries only what can succeed later (network errors, timeouts, 429, 5xx) and
//     reports it as vector.ErrUnavailable; its errors never contain the API key.
//   - Model families trained with instruction prefixes (ModelPrefixes) get them in front of
//     each text, and the prefixes are part of the embedder's id, so vectors made without them
//     are rebuilt.
//   - NewOpenAI makes no request: the dimension, unless configured, is learned from the first
//     response.
package embedhttp
