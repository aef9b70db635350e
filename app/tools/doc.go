// Package tools is what the model sees of ownsona: the MCP tools of TOOLS.md, the resources,
// the prompts and their completions, with their schemas and payloads, as an mcp.Server over
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
// stats.go (find_near_duplicates, count_memories, memory_stats, list_tags), connectors.go
// (OpenAI's search and fetch, for ChatGPT connectors and deep research, in OpenAI's payload
// shapes), resources.go, prompts.go, compat.go (the opt-in compatibility modes' tools and
// resources: once, komcp, sophon; Compat, SetCompat). Each holds a tool's argument type, its handler and its
// payload together. payload.go holds what several payloads share (a memory, a near duplicate,
// a tag count): the payloads are types of this package, converted from app/memory's, so that
// the wire shape is declared here and the store's own record never leaks into it. mcpapp.go is the MCP App (io.modelcontextprotocol/ui): the ui:// resource
// embedded from ui/memories.html that recall, search_memory and list_memories name in their
// _meta, and the extension in the capabilities.
//
// # Arguments and payloads described once
//
// A tool is a def[In, Out]: its input schema is derived from its argument type In and its
// output schema from its payload type Out (schema.go: json names, desc and schema tags), so the
// schemas clients see and the structs the handler decodes and encodes cannot disagree. Output
// schemas are open objects that require "ok" and declare "error" (errorPayload, a failed
// call's); TestServer_outputSchemas calls every listed tool and checks each payload against
// its outputSchema, every object closed, so that an undeclared field fails too. A schema names one type at a time (anyOf branches for tags and nullable
// times), which clients with a single-type schema dialect accept. Every tool's annotations
// carry its title and all four hints. mcp validates arguments against the schema before the handler runs; batch
// tools validate each item themselves, so one bad item fails alone.
//
// # Answers fit the hosts
//
// budget.go caps every answer of a tool, resource or prompt at Config.MaxResultChars
// characters (40,000 by default, within Claude Code's 50,000): a longer one is cut at a whole
// item by one mechanism (fit over a trimmable payload), and says so itself (truncated,
// omitted, a note; where the tool pages, a cursor that continues right after the last item).
//
// # Errors
//
// The store's errors take their payload codes from memory.ErrorCode, the one table of them that
// the console uses too: INVALID_INPUT (memory's *InputError), SECRET_REJECTED, NOT_FOUND
// (memory.ErrNotFound and ErrForgotten), LIMIT_EXCEEDED, and DATABASE_ERROR for anything else,
// whose details go to the log only. payloadError adds the tools' own: mcp's *ArgError as
// INVALID_INPUT, and a *toolError as it is. An invalid argument of the call itself goes back to mcp, which answers -32602 or an
// isError result by protocol version. JSON-RPC codes come from jsonrpc and mcp.
//
// # Scopes and notifications
//
// Read-only tools need memories:read, the rest memories:write (Server.Scope); mcp.Server.Permit
// enforces it per message, and the allowlist (Config.Allowlist) hides tools from everyone.
// Resources, resource templates, prompts and completions that show a tool's data (readsWith)
// follow its place in the allowlist, through mcp.Server.Visible. SetAllowlist changes the
// allowlist while the server runs (the console's settings): from the next request on, and
// connected clients are told with notifications/tools/list_changed, and prompts/list_changed
// and resources/list_changed when those lists change too, which is why the capabilities say
// listChanged: true. Resource notifications hang off memory.Store.OnChange, so every writer
// triggers them.
//
// # The approval gate
//
// gate.go holds calls that the approval policy names (Config.Approval, SetApproval;
// OWNSONA_APPROVAL) until the owner approves them: hard-delete is forget with hard_delete,
// destructive every call that takes a memory out of recall at once (a tool annotated
// destructiveHint, a write naming supersedes, an update whose expiry comes within the approval
// timeout: def.hides), writes every tool that is not read-only; dry runs never wait. Such a
// call is described for a person (def.describe: "Forget memory 12 "My son Colby…"
// permanently?") and waits in the approval.Queue (the console's Approvals list) as a request of
// its own (SECURITY.md AG-02: identical calls made at the same time each ask, and one approval
// runs one call), filed under a key that digests the principal, the tool and the arguments. At
// the same time the client is asked when it can: elicitation/create on the request's stream in
// the legacy era, while the call waits with keep-alives and progress; an input_required result
// in 2026-07-28, whose retry carries the answer to the question approval-<request ID> and so
// finds its own request among those under the key, so that a console decision between the
// rounds counts and the first round's deadline holds. The answer is accept with {"approve":
// true}, or anything else for no. The first answer wins. Approved, the tool runs (nothing ran
// before); otherwise the call ends with an isError payload APPROVAL_REJECTED or, past the
// deadline, APPROVAL_TIMED_OUT. An approval serves the call it was given for only. Under
// approval.ByOwner (Config.Approvers, SetApprovers) the client is never asked and an answer it
// sends does not count: only the console decides. Without a console (Config.AskOnly) a call
// whose client cannot be asked, or may not answer, is refused at once.
package tools
