// Package importers reads memories from files, ownsona's own export and other memory servers'
// exports, into the store: it detects and unwraps the input (gzip, OpenMemory's zip), reads it
// a unit at a time within its bounds, turns each line, element or paragraph into
// memory.ImportRecords and hands them to the domain's typed import (memory.Store.NewImport),
// which checks, deduplicates and stores them. The operator's import command (app/ops) and
// uploads (app/uploads) are its callers.
//
// The simplest use:
//
//	st, err := importers.ImportFrom(ctx, store, f, importers.ImportOptions{
//		OnError: func(e memory.ImportError) { fmt.Fprintln(os.Stderr, e) },
//	})
//
// The formats are those of ImportFormats (formats.go names each one's source); Markdown and
// plain text are in text.go.
//
// # Caveats
//
// No input makes an import hold more than one unit of it at a time, expand without end or
// run for ever (SECURITY.md UP-01; ImportOptions' bounds). An import is not safe for
// concurrent use, but several may run at once, each with its own call; the store serializes
// their writes. What the readers accept is fuzzed (FuzzImport).
package importers
