package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// ExportFormat names the JSON Lines export (its header's "format"); exportVersion changes when
// a line's shape does.
const ExportFormat, exportVersion = "ownsona-export", 1

// exportHeader is the first line of an export.
type exportHeader struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	Count      int       `json:"count"`
}

// Export writes every memory of db to w as JSON Lines, oldest first: a header line (format
// "ownsona-export", version, time, count), then one memory per line with every field (tombstones
// and expired memories too, unless includeDeleted is false). It reads in one read transaction,
// so the export is consistent while writers go on, and never changes db; it needs no Store, so
// it serves a file no server holds as well as the running server's. app/importers reads it
// back (ParseExported).
func Export(db *kv.DB, w io.Writer, includeDeleted bool, now time.Time) error {
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
			if includeDeleted || m.Active(now) {
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
	if err := enc.Encode(exportHeader{Format: ExportFormat, Version: exportVersion, ExportedAt: now.UTC(), Count: len(mems)}); err != nil {
		return err
	}
	for _, m := range mems {
		if err := enc.Encode(recordOf(m)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Export writes the store's file as the package's Export does, at the store's time.
func (s *Store) Export(w io.Writer, includeDeleted bool) error {
	return Export(s.db, w, includeDeleted, s.now())
}

// ParseExported reads one memory as Export writes it (a line after the header; an item of the
// export_memories tool's output): the keys of a stored record, no other. Its ids are the
// source's.
func ParseExported(b []byte) (Memory, error) {
	var r record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Memory{}, err
	}
	return *r.memory(), nil
}
