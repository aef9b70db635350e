package ops

// `ownsona import [--format F] FILE|-`: memories from ownsona's export, the export_memories
// tool's output, the reference MCP memory server's knowledge graph, mcp-memory-service's and
// Mem0/OpenMemory's exports, or Markdown and text — the formats prepare_import_upload takes.
// Through the admin socket this process reads FILE and streams it to the server, whose store
// tells its subscribers what changed.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

func importCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("import", "import [--format FORMAT] FILE|- [--db PATH]",
		"Imports memories from FILE, or from standard input with -, in one of these formats\n"+
			"(detected from the content unless --format names it; gzip-compressed files too):\n"+
			"  ownsona             ownsona export, or the export_memories tool's output\n"+
			"  server-memory       the knowledge graph of @modelcontextprotocol/server-memory (memory.jsonl)\n"+
			"  mcp-memory-service  mcp-memory-service's JSON export\n"+
			"  mem0                Mem0's export (JSON or JSON Lines), OpenMemory's export zip\n"+
			"  markdown            Markdown or text: a memory per paragraph or list item, headings as tags\n"+
			"Each memory is checked as remember checks it; a bad line is reported with its number and\n"+
			"skipped. What is already stored is skipped too, so a re-import adds nothing twice. The\n"+
			"database is created if there is none. "+fmt.Sprintf("A compressed file expands to at most %d GiB, and one\n"+
			"import reads at most %d items (split larger files); a JSON item is at most %d MiB.",
			importers.DefaultMaxExpanded>>30, importers.DefaultMaxImportItems, importers.MaxItemBytes>>20))
	db := dbFlags(fs, env)
	format := fs.String("format", "auto", "the file's format: auto, "+strings.Join(importers.ImportFormats, ", "))
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return Usagef("import: name one FILE, or - for standard input (formats: %s)", strings.Join(importers.ImportFormats, ", "))
	}
	if _, err := importers.ParseImportFormat(*format); err != nil {
		return Usagef("import: --format: %v", err)
	}
	var in io.Reader
	var name string
	if operands[0] == "-" {
		in, name = env.Stdin, "standard input"
		if env.stdinName != "" {
			name = env.stdinName
		}
		if in == nil {
			in = eof{}
		}
	} else {
		name = env.path(operands[0])
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: forwardArgs(*format), StdinName: name}, in); handled {
		return err
	}
	store, done, err := env.memories(*db)
	if err != nil {
		return err
	}
	defer done()
	started := time.Now().UTC()
	st, err := importers.ImportFrom(ctx, store, in, importers.ImportOptions{Format: *format,
		OnError: func(e memory.ImportError) { fmt.Fprintln(env.Stderr, e.String()) }})
	if env.Live != nil && env.Live.OnImport != nil {
		env.Live.OnImport(cliImportJob(name, st, err, started, time.Now().UTC()))
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	if st.Format != "" {
		fmt.Fprintf(env.Stderr, "read %s as %s\n", name, st.Format)
	}
	fmt.Fprintf(env.Stdout, "imported %d of %s from %s (%d already stored, %s)\n",
		st.Imported, plural(st.Read, "memory", "memories"), name, st.Skipped, plural(st.Bad, "bad line", "bad lines"))
	if st.LinksSkipped > 0 {
		fmt.Fprintf(env.Stdout, "skipped %s the rules refuse (a cycle, or a memory with another current successor)\n",
			plural(st.LinksSkipped, "supersedes link", "supersedes links"))
	}
	if err := done(); err != nil {
		return err
	}
	if st.Bad > 0 {
		return fmt.Errorf("import: skipped %s (listed above)", plural(st.Bad, "bad line", "bad lines"))
	}
	return nil
}

// forwardArgs are the arguments the server runs for an import whose file this process
// streams to it.
func forwardArgs(format string) []string {
	if f, _ := importers.ParseImportFormat(format); f != "" {
		return []string{"import", "--format", f, "-"}
	}
	return []string{"import", "-"}
}

// memories is the memory store of the database at path: the running server's, or one opened
// over the file (created if missing) with env.OpenMemories. done closes what it opened.
func (env *Env) memories(path string) (store *memory.Store, done func() error, err error) {
	if env.Live != nil {
		return env.Live.Memories, func() error { return nil }, nil
	}
	db, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return nil, nil, OpenError(path, err)
	}
	open := env.OpenMemories
	if open == nil {
		open = func(db *kv.DB) (*memory.Store, error) { return memory.Open(db, memory.Config{Now: env.Now}) }
	}
	if store, err = open(db); err != nil {
		db.Close()
		return nil, nil, err
	}
	closed := false
	return store, func() error {
		if closed {
			return nil
		}
		closed = true
		err := store.Close()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// cliImportJob describes an import run from the command line, as the console lists imports.
func cliImportJob(name string, st memory.ImportStats, err error, started, finished time.Time) memory.ImportJob {
	j := memory.ImportJob{ID: "cli-" + started.Format("20060102T150405.000000000Z"), Filename: filepath.Base(name),
		Client: "ownsona import (command line)", State: "done", Format: st.Format, Read: st.Read, Imported: st.Imported,
		Skipped: st.Skipped, Failed: st.Bad, LinksSkipped: st.LinksSkipped, CreatedAt: started, StartedAt: &started, FinishedAt: &finished}
	if err != nil {
		j.State, j.Error = "failed", err.Error()
	}
	return j
}
