package backup

import (
	"fmt"
	"os"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

// Restore replaces the database at db by a checked copy of the backup at src, for a server
// that is stopped (the caller makes sure; Restore holds db's lock while it swaps, so that no
// server starts meanwhile). It checks src first, as `ownsona check FILE` does, and changes
// nothing if that fails; it keeps the current file, if any, as db.bak-TIME (now, UTC) and
// returns that path. A crash at any moment leaves the old or the new file whole.
//
// held, if not nil, rewrites an error of a file another process holds (kv.ErrInUse) into one
// that names the process; it is given the file's path.
func Restore(db, src string, now time.Time, held func(path string, err error) error) (bak string, err error) {
	if held == nil {
		held = func(_ string, err error) error { return err }
	}
	if err := CheckFile(src); err != nil {
		return "", fmt.Errorf("%s does not check, nothing changed: %w", src, held(src, err))
	}
	if _, err := os.Stat(db); err == nil {
		cur, err := kv.Open(db, kv.Options{Migrations: memory.Migrations})
		if err != nil {
			return "", held(db, err)
		}
		defer cur.Close()
		bak = fmt.Sprintf("%s.bak-%s", db, now.UTC().Format(stampLayout))
		if err := kv.CopyFile(db, bak); err != nil {
			return "", fmt.Errorf("keeping the current file: %w", err)
		}
	}
	if err := kv.CopyFile(src, db); err != nil {
		return bak, err
	}
	return bak, nil
}
