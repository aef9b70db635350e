package memory

import (
	"fmt"

	"github.com/ownsona/ownsona/kv"
)

// Checked is what Check read.
type Checked struct {
	Memories, Vectors int
	// Embedders counts the vectors by the embedder that made them ("builtin:glove-wink-100:100"),
	// and Dims by their length: after a change of embedder, re-embedding is done when every
	// vector is the new one's.
	Embedders map[string]int
	Dims      map[int]int
	// Problems are what does not hold, at most 20 of them: a memory that does not decode or sits
	// under another id's key, a vector that does not decode or has no memory, a missing bucket.
	Problems []error
}

// Check reads every memory and vector of db in one read transaction and reports what is
// inconsistent. err is a failure to read at all.
func Check(db *kv.DB) (Checked, error) {
	c := Checked{Embedders: map[string]int{}, Dims: map[int]int{}}
	bad := func(format string, args ...any) {
		if len(c.Problems) < 20 {
			c.Problems = append(c.Problems, fmt.Errorf(format, args...))
		}
	}
	err := db.View(func(tx *kv.Tx) error {
		mb := tx.Bucket(bucketMemories)
		if mb == nil {
			bad("the memories bucket is missing")
			return nil
		}
		if err := mb.ForEach(func(k, v []byte) error {
			c.Memories++
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
		vb := tx.Bucket(bucketVectors)
		if vb == nil {
			return nil
		}
		return vb.ForEach(func(k, v []byte) error {
			c.Vectors++
			if mb.Get(k) == nil {
				bad("vector %d has no memory", kv.ID(k))
			}
			embedder, vec, err := decodeVector(v)
			if err != nil {
				bad("vector %d does not decode: %v", kv.ID(k), err)
				return nil
			}
			c.Embedders[embedder]++
			c.Dims[len(vec)]++
			return nil
		})
	})
	return c, err
}
