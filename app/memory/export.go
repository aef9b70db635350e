package memory

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// exportFormat names the JSON Lines export; its version changes when a line's shape does.
const exportFormat, exportVersion = "ownsona-export", 1

// exportHeader is the first line of an export.
type exportHeader struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	Count      int       `json:"count"`
}

// export writes every memory of the file at cfg.DB to w as JSON Lines, oldest first: a header
// line, then one memory per line with every field (tombstones too unless includeDeleted is
// false). It opens the file read-only, so it never changes it.
func export(cfg Config, w io.Writer, includeDeleted bool) error {
	db := (*kv.DB)(nil)
	if cfg.live != nil {
		db = cfg.live.db
	} else {
		var err error
		if db, err = kv.Open(cfg.DB, kv.Options{ReadOnly: true, Migrations: migrations}); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer db.Close()
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	var mems []*Memory
	err := db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketMemories)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			m, err := decodeMemory(v)
			if err != nil {
				return fmt.Errorf("memory %d: %w", kv.ID(k), err)
			}
			if includeDeleted || m.active(now()) {
				mems = append(mems, m)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Format: exportFormat, Version: exportVersion, ExportedAt: now().UTC(), Count: len(mems)}); err != nil {
		return err
	}
	for _, m := range mems {
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return bw.Flush()
}
