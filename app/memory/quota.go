package memory

// Quotas (SECURITY.md ST-13): caps on how many memories the file holds and on how much data it
// holds, so that a client with a write token (a compromised one, a model in a loop) cannot fill
// the disk of a Raspberry Pi's SD card. Each write that adds memories or text checks them
// first, cheaply (a count the store keeps, a stat of the file and bbolt's free-page counter),
// and refuses with a *LimitError that names the cap and its setting. Writes that free room or
// change little (forget, confirm, tags, restore, delete) are never refused.

import (
	"fmt"
	"strconv"
	"strings"
)

// Defaults of Config.MaxMemories and Config.MaxFileBytes.
const (
	// DefaultMaxMemories is 2.5 times the 100,000 memories the README measures (a 144 MiB
	// file, 187 MiB resident): far more than a person writes, far less than fills a card.
	DefaultMaxMemories = 250_000
	// DefaultMaxFileBytes is 2 GiB on 64-bit systems; 1 GiB on 32-bit ones, where bbolt's
	// memory map cannot grow much past it (README: prefer a 64-bit OS).
	DefaultMaxFileBytes = int64(1<<30) << (strconv.IntSize / 64)
)

// Quota is the file's use against its caps, for the console's System page. A Max of 0 is no
// cap.
type Quota struct {
	// Memories counts every stored memory: forgotten ones and the previous texts updates keep
	// take room until the trash is emptied.
	Memories, MaxMemories int
	// FileBytes is the data the file holds (its pages of data less its free ones), FileSize
	// its size on disk (bbolt grows it ahead of the data; only compact shrinks it).
	FileBytes, FileSize, MaxFileBytes int64
}

// Quota reports the file's use against its caps.
func (s *Store) Quota() Quota {
	q := Quota{MaxMemories: max(s.maxMemories, 0), MaxFileBytes: max(s.maxFileBytes, 0)}
	if size, used, err := s.db.Usage(); err == nil {
		q.FileBytes, q.FileSize = used, size
	}
	s.mu.RLock()
	q.Memories = len(s.mems) + s.queuedLocked()
	s.mu.RUnlock()
	return q
}

// queuedLocked counts the memories queued for a commit and not yet in s.mems. s.mu must be
// held.
func (s *Store) queuedLocked() int {
	n := 0
	for _, r := range s.queued {
		n += len(r.mems)
	}
	return n
}

// fileFull is the *LimitError of a file whose data has reached MaxFileBytes, or nil. A file
// that cannot be measured is not refused: the write itself will fail if it must.
func (s *Store) fileFull() error {
	if s.maxFileBytes <= 0 {
		return nil
	}
	_, used, err := s.db.Usage()
	if err != nil || used < s.maxFileBytes {
		return nil
	}
	return &LimitError{Limit: "max-file-mb", Message: fmt.Sprintf("the database file holds %s of data, its cap (max-file-mb is %d): "+
		"nothing more is stored. Forget what is no longer needed and empty the trash (the console's Trash page), or raise max-file-mb",
		ByteSize(used), s.maxFileBytes>>20)}
}

// countFull is the *LimitError of a store that holds n memories, if n reaches MaxMemories; nil
// otherwise.
func (s *Store) countFull(n int) error {
	if s.maxMemories <= 0 || n < s.maxMemories {
		return nil
	}
	return &LimitError{Limit: "max-memories", Message: fmt.Sprintf("the database holds %d memories (forgotten ones and kept previous texts included), "+
		"its cap (max-memories): nothing more is stored. Forget what is no longer needed and empty the trash (the console's Trash page), or raise max-memories",
		n)}
}

// ByteSize writes n bytes for people, as the store's and the importers' messages do: "4 MiB",
// "1.5 GiB", "700 bytes".
func ByteSize(n int64) string {
	in := func(unit float64, name string) string {
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/unit, 'f', 1, 64), ".0") + " " + name
	}
	switch {
	case n >= 1<<30:
		return in(1<<30, "GiB")
	case n >= 1<<20:
		return in(1<<20, "MiB")
	case n >= 1<<10:
		return in(1<<10, "KiB")
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
