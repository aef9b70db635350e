package ops

import (
	"errors"
	"fmt"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
)

// checkContents is ownsona's own consistency check of a file, after bbolt's page check: the
// schema version is one this build knows, every memory decodes, every vector decodes and
// belongs to a memory, every personal access token hash points to a token, and every audit
// entry decodes. It returns a one-line summary, or every problem found (at most 20 named).
func checkContents(db *kv.DB) (string, error) {
	v, err := db.SchemaVersion()
	if err != nil {
		return "", err
	}
	if v > len(migrations) {
		return "", fmt.Errorf("schema version %d is newer than this ownsona (%d)", v, len(migrations))
	}
	var problems []error
	bad := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	var memories, vectors, pats int
	err = db.View(func(tx *kv.Tx) error {
		mb := tx.Bucket(bucketMemories)
		if mb == nil {
			bad("the memories bucket is missing")
			return nil
		}
		if err := mb.ForEach(func(k, v []byte) error {
			memories++
			m, err := decodeMemory(v)
			switch {
			case err != nil:
				bad("memory %d does not decode: %v", kv.ID(k), err)
			case m.ID != kv.ID(k):
				bad("memory under key %d says it is %d", kv.ID(k), m.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		if vb := tx.Bucket(bucketVectors); vb != nil {
			if err := vb.ForEach(func(k, v []byte) error {
				vectors++
				if mb.Get(k) == nil {
					bad("vector %d has no memory", kv.ID(k))
				}
				if _, _, err := decodeVector(v); err != nil {
					bad("vector %d does not decode: %v", kv.ID(k), err)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		hb, pb := tx.Bucket(oauth.BucketPATHashes), tx.Bucket(oauth.BucketPATs)
		if hb != nil && pb != nil {
			pats = pb.Stats()
			if err := hb.ForEach(func(_, id []byte) error {
				if pb.Get(id) == nil {
					bad("a personal access token hash points to the missing token %q", id)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if _, corrupt, err := audit.Query(db, audit.Filter{Limit: 0}); err != nil {
		bad("audit log: %v", err)
	} else if corrupt > 0 {
		bad("audit log: %d entries do not decode", corrupt)
	}
	if len(problems) > 0 {
		return "", errors.Join(problems...)
	}
	return fmt.Sprintf("schema %d, %d memories, %d vectors, %d personal access tokens", v, memories, vectors, pats), nil
}
