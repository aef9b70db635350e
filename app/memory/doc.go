// Package memory is ownsona's domain: what a memory may hold, and what remember, update,
// confirm, forget, search, import and export do to the memories of the one file. It speaks
// Go types, not JSON-RPC or HTTP; the MCP tools (app/tools), the operator's commands (app/ops)
// and the console are adapters over it.
//
// The simplest use:
//
//	db, _ := kv.Open(path, kv.Options{Migrations: memory.Migrations})
//	s, _ := memory.Open(db, memory.Config{Embedder: vector.NewBuiltin()})
//	defer s.Close()
//	res, warning, err := s.Remember(ctx, []memory.Draft{{Text: "My son lives in Los Angeles", Tags: []string{"family"}}},
//		memory.Origin{Provider: "claude", Client: "stdio"})
//	found := s.Search(ctx, memory.Query{Text: "where does my son live?", Limit: 8})
//
// # What a memory may hold
//
// One validator serves Remember, Update and Import: the text is normalized by
// memtext.NormalizeText (at most Config.MaxTextChars characters) and refused with a
// *SecretError when memtext.DetectSecret finds a credential in it; tags are normalized by
// memtext.NormalizeTags (at most 32); importance is from 0 to 1; capture mode is explicit,
// inferred or import; a session id has at most 200 characters, a source provider 100, a
// forget reason 1000. Remember and Update also refuse an expiry that is not in the future.
// Refusals are *InputError with a field path ("tags[1]"); Prefix makes it "items[3].tags[1]"
// for callers that write several at once.
//
// # Nothing erased unasked
//
// Update never loses a text (SECURITY.md AG-01): a patch that changes a memory's text keeps
// the memory's id for the new text and keeps the old text, with the rest of the record as it
// was, as a new memory in the same transaction: forgotten (in the trash, replaced_by_id the
// updated memory) and superseded by the updated memory, which lists it in supersedes. So
// every adapter (the tools, the console, batch updates) keeps the history; get_memory, exports
// and the console show the chain of versions, an import restores it, and restoring a version
// from the trash makes it a memory of its own again. Only the owner's explicit erasures lose a
// text for good: a hard delete, emptying the trash.
//
// # Imports
//
// Store.NewImport takes typed records (ImportRecord: a memory as its source had it, its links
// in the source's ids) and stores them as remember would, skipping what is stored already and
// restoring the links once their ends are stored; the package app/importers reads files of
// ownsona's export and of other memory servers into it.
//
// # Quotas
//
// The file holds at most Config.MaxMemories memories (forgotten ones and kept previous texts
// included) and Config.MaxFileBytes of data (SECURITY.md ST-13). Remember, imports and updates
// of a text check both before they write and refuse past them with a *LimitError naming the
// setting ("max-memories", "max-file-mb"); forgetting, then emptying the trash, makes room.
// Store.Quota (and Stats.Quota) reports the use against the caps.
//
// # Errors
//
// ErrNotFound and ErrForgotten are wrapped with the memory's id ("memory 7 not found"); test
// them with errors.Is. Operations on several memories report each one's failure in its result
// (Remembered.Err, Updated.Err, Forgotten.Err) and store the rest; their own error return is a
// storage failure, after which nothing of that call was written.
//
// # Changes
//
// Every write goes through the store, which tells the functions registered with OnChange the
// ids it changed once the write is in the file: MCP resource notifications hang off it, so an
// import through the admin socket notifies subscribers as a remember does.
//
// # Caveats
//
// The bbolt file is the truth. The store keeps every memory record, the BM25 index, the word
// counts and the vector index in memory as a cache rebuilt by Open; each write commits (one
// transaction per call) before the cache changes, so a crash loses no acknowledged write and no
// index ever names a memory the file lacks. Writers are serialized; readers run concurrently
// with each other and with the background embedder, which fills in vectors that are missing
// (after an embedder change, or when the embedder failed at write time). Memories returned are
// copies the caller owns, except inside Each, whose callback must not keep them.
package memory
