// Package uploads serves large imports that cannot travel through a conversation: a client
// calls prepare_import_upload and gets a one-time URL and token, POSTs the file there (with
// curl), and follows the import with import_status while it runs in the background.
//
//	svc := uploads.New(uploads.Config{Memories: store, BaseURL: func() string { return "https://mem.example.com" }})
//	t, _ := svc.Prepare(uploads.Owner{Key: "oauth:abc", Name: "Claude"}, "export.jsonl", "")
//	// curl -H "Authorization: Bearer $TOKEN" --data-binary @export.jsonl $URL
//	jobs := svc.Jobs("oauth:abc")
//
// An upload token is 256 random bits ("osu_" and 43 base64url characters), bound to the
// principal that asked for it (the imported memories record that principal as their
// source_client), to its one URL, to one use and to ten minutes. Tokens are kept in memory
// only, as SHA-256 hashes: they live ten minutes, and a restart simply voids them (clients
// prepare another). Jobs too live in memory, the last hundred of them; the memories an import
// stored are in the file, like any other write.
//
// An import reads the file a unit at a time (importers.ImportFrom): no line, item or paragraph is
// held past what a memory may be, a compressed file expands to at most ExpansionFactor × the
// upload cap (every layer together, never past importers.MaxExpandedCeiling), one import reads
// at most importers.DefaultMaxImportItems items and runs at most Config.ImportTimeout; past a
// bound the job fails with an error that names it (SECURITY.md UP-01). At most two imports
// run at once.
//
// The HTTP side (app/web) checks the token and claims the URL before it reads a body
// (Begin: one transfer per URL at a time, SECURITY.md UP-02), reads the body within the size
// cap, and hands it over (Receive), which spends the token and starts the import. The package
// never sees HTTP.
package uploads
