package ops

// `ownsona import FILE|-`: memories from an export, the export_memories tool's output, or the
// knowledge graph of the reference MCP memory server. Through the admin socket this process
// reads FILE and streams it to the server, whose store tells its subscribers what changed.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

func importCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("import", "import FILE|- [--db PATH]",
		"Imports memories from FILE, or from standard input with -: ownsona's export, the\n"+
			"export_memories tool's output, or the knowledge graph of @modelcontextprotocol/server-memory.\n"+
			"Each memory is checked as remember checks it; a bad line is reported with its number and\n"+
			"skipped. What is already stored is skipped too, so a re-import adds nothing twice. The\n"+
			"database is created if there is none.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return Usagef("import: name one FILE, or - for standard input (ownsona export, export_memories output, or a server-memory knowledge graph)")
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
	if handled, err := env.forward(ctx, *db, request{Args: []string{"import", "-"}, StdinName: name}, in); handled {
		return err
	}
	store, done, err := env.memories(*db)
	if err != nil {
		return err
	}
	defer done()
	st, err := store.Import(in, env.Stderr)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	fmt.Fprintf(env.Stdout, "imported %d of %s from %s (%d already stored, %s)\n",
		st.Imported, plural(st.Read, "memory", "memories"), name, st.Skipped, plural(st.Bad, "bad line", "bad lines"))
	if err := done(); err != nil {
		return err
	}
	if st.Bad > 0 {
		return fmt.Errorf("import: skipped %s (listed above)", plural(st.Bad, "bad line", "bad lines"))
	}
	return nil
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
