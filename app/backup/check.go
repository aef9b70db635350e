package backup

import (
	"errors"
	"fmt"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
)

// CheckFile checks a database file that no process has open, read-only: bbolt's page check,
// then CheckContents.
func CheckFile(path string) error {
	_, err := CheckFileSummary(path)
	return err
}

// CheckFileSummary is CheckFile with CheckContents's summary. A file another process holds fails
// with kv.ErrInUse (heldError names the process).
func CheckFileSummary(path string) (string, error) {
	if err := kv.CheckFile(path); err != nil {
		return "", err
	}
	db, err := kv.Open(path, kv.Options{ReadOnly: true, Migrations: memory.Migrations, Timeout: -1})
	if err != nil {
		return "", err
	}
	defer db.Close()
	return CheckContents(db)
}

// CheckContents is ownsona's own consistency check of an open file, after bbolt's page check:
// the schema version is one this build knows, every memory and vector decodes and every vector
// belongs to a memory (memory.Check), every personal access token hash points to a token, and
// every audit entry decodes. It returns a one-line summary ("schema 1, 2 memories, 2 vectors,
// 1 personal access token"), or every problem found (at most 20 named), joined.
func CheckContents(db *kv.DB) (string, error) {
	v, err := db.SchemaVersion()
	if err != nil {
		return "", err
	}
	if v > len(memory.Migrations) {
		return "", fmt.Errorf("schema version %d is newer than this ownsona (%d)", v, len(memory.Migrations))
	}
	mc, err := memory.Check(db)
	if err != nil {
		return "", err
	}
	problems := mc.Problems
	bad := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	var pats int
	err = db.View(func(tx *kv.Tx) error {
		hb, pb := tx.Bucket(oauth.BucketPATHashes), tx.Bucket(oauth.BucketPATs)
		if hb == nil || pb == nil {
			return nil
		}
		pats = pb.Stats()
		return hb.ForEach(func(_, id []byte) error {
			if pb.Get(id) == nil {
				bad("a personal access token hash points to the missing token %q", id)
			}
			return nil
		})
	})
	if err != nil {
		return "", err
	}
	if _, corrupt, err := audit.Query(db, audit.Filter{Limit: 0}); err != nil {
		bad("audit log: %v", err)
	} else if corrupt > 0 {
		bad("audit log: cannot decode %s", plural(corrupt, "entry", "entries"))
	}
	if len(problems) > 0 {
		return "", errors.Join(problems...)
	}
	return fmt.Sprintf("schema %d, %s, %s, %s", v, plural(mc.Memories, "memory", "memories"), plural(mc.Vectors, "vector", "vectors"),
		plural(pats, "personal access token", "personal access tokens")), nil
}

// plural is "1 memory" or "2 memories".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
