// Package tools is what the model sees of ownsona: the MCP tools of TOOLS.md, the resources,
// the prompts and their completions, with their schemas and payloads, as an rpc.Server over
// the memory store. It knows memories only through app/memory's typed API and never touches
// the file.
//
// The simplest use, as app wires it:
//
//	srv, err := tools.New(tools.Config{Memories: store, Version: "1.0"})
//	_ = srv.RPC.ServeStdio(ctx, os.Stdin, os.Stdout)
//
// # One file per family
//
// remember.go (remember, remember_batch), recall.go (recall, search_memory,
// build_context_prompt), read.go (list_memories, get_memory, text_search, export_memories),
// update.go (update_memory, update_memory_batch, confirm), forget.go (forget, forget_batch),
// stats.go (find_near_duplicates, count_memories, memory_stats, list_tags), resources.go,
// prompts.go. Each holds a tool's argument type, its handler and its payload together.
//
// # Arguments described once
//
// A tool's input schema is derived from its argument type (schema.go: json names, desc and
// schema tags), so the schema clients validate against and the struct the handler decodes
// cannot disagree. rpc validates arguments against the schema before the handler runs; batch
// tools validate each item themselves, so one bad item fails alone.
//
// # Errors
//
// payloadError is the one table from errors to payload codes: INVALID_INPUT (memory's
// *InputError, rpc's *ArgError), SECRET_REJECTED, NOT_FOUND (memory.ErrNotFound and
// ErrForgotten), LIMIT_EXCEEDED, and DATABASE_ERROR for anything else, whose details go to the
// log only. An invalid argument of the call itself goes back to rpc, which answers -32602 or an
// isError result by protocol version. JSON-RPC codes come from rpc.
//
// # Scopes and notifications
//
// Read-only tools need memories:read, the rest memories:write (Server.Scope); rpc.Server.Permit
// enforces it per message, and the allowlist (Config.Allowlist) hides tools from everyone.
// Resource notifications hang off memory.Store.OnChange, so every writer triggers them.
package tools
