package certs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/ownsona/ownsona/kv"
	"github.com/rs/zerolog"
)

// The buckets this package owns in the kv file.
const (
	// bucketTLS holds certmagic's keys (ACME account, certificates, keys, metadata) and the
	// local CA, each value prefixed by its modification time (see putRecord).
	bucketTLS = "tls"
	// bucketLocks holds one lockRecord per held lock name.
	bucketLocks = "tls_locks"
)

// Lock timing, as in certmagic's FileStorage: a held lock's record is refreshed every
// lockRefresh, and a record not refreshed for lockStale is taken to belong to a holder that
// died (the previous process, since the kv file has one process at a time).
const (
	lockRefresh = 5 * time.Second
	lockStale   = 3 * lockRefresh
	lockPoll    = time.Second
)

var errNotLocked = errors.New("not locked")

// storage is a certmagic.Storage on the kv file. Keys are '/'-separated paths in bucketTLS;
// "directories" are implied by the keys under them, as certmagic's contract says. A key cannot
// be both a file and a directory: Store refuses to create one under a file or over a directory,
// as a file system would.
//
// Locks are records in bucketLocks, refreshed by a goroutine while held and stale after
// lockStale, so that a holder that died cannot block issuance forever. Waiters poll every
// s.poll and are woken at once by an Unlock on the same storage.
//
// A storage is safe for concurrent use.
type storage struct {
	db  *kv.DB
	id  string // owner id written into the lock records of this storage
	log zerolog.Logger

	now     func() time.Time
	poll    time.Duration
	refresh time.Duration
	stale   time.Duration

	mu   sync.Mutex
	held map[string]*heldLock // locks taken by this storage, with their refreshers
	wake chan struct{}        // closed and replaced by every Unlock
}

var (
	_ certmagic.Storage   = (*storage)(nil)
	_ certmagic.TryLocker = (*storage)(nil)
)

// heldLock is the refresher of one lock this storage holds.
type heldLock struct {
	stop chan struct{}
	done chan struct{}
}

// lockRecord is the value of a lock in bucketLocks.
type lockRecord struct {
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

func newStorage(db *kv.DB, now func() time.Time, log zerolog.Logger) *storage {
	if now == nil {
		now = time.Now
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	return &storage{
		db:      db,
		id:      hex.EncodeToString(id[:]),
		log:     log,
		now:     now,
		poll:    lockPoll,
		refresh: lockRefresh,
		stale:   lockStale,
		held:    map[string]*heldLock{},
		wake:    make(chan struct{}),
	}
}

func (s *storage) String() string { return "kv:" + s.db.Path() }

// cleanKey turns a key into its canonical form: no leading, trailing or repeated slashes, no
// "." or ".." components. The root is "".
func cleanKey(key string) string {
	return strings.TrimPrefix(path.Clean("/"+key), "/")
}

// dirPrefix is the byte prefix of the keys under directory key ("" is the root).
func dirPrefix(key string) []byte {
	if key == "" {
		return nil
	}
	return []byte(key + "/")
}

// putRecord stores data at key with its modification time: 8 bytes of big-endian Unix
// nanoseconds, then the data.
func putRecord(b *kv.Bucket, key string, data []byte, mod time.Time) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(data)), uint64(mod.UnixNano()))
	return b.Put([]byte(key), append(v, data...))
}

// getRecord returns the data and modification time stored at key; ok is false when there is
// none. b may be nil (the bucket does not exist yet).
func getRecord(b *kv.Bucket, key string) (data []byte, mod time.Time, ok bool, err error) {
	if b == nil {
		return nil, time.Time{}, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return nil, time.Time{}, false, nil
	}
	if len(v) < 8 {
		return nil, time.Time{}, false, fmt.Errorf("corrupt record %q: %d bytes", key, len(v))
	}
	return v[8:], time.Unix(0, int64(binary.BigEndian.Uint64(v))), true, nil
}

// children calls fn for every key strictly under directory dir, in key order, until fn
// returns false. k and v are valid only during fn.
func children(b *kv.Bucket, dir string, fn func(k, v []byte) bool) {
	if b == nil {
		return
	}
	prefix := dirPrefix(dir)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if !fn(k, v) {
			return
		}
	}
}

// isDir reports whether some key lies under dir.
func isDir(b *kv.Bucket, dir string) bool {
	found := false
	children(b, dir, func(_, _ []byte) bool { found = true; return false })
	return found
}

// Store puts value at key, replacing any value there. It fails for the empty key, for a key
// that is a directory, and for a key under a file.
func (s *storage) Store(ctx context.Context, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := cleanKey(key)
	if k == "" {
		return fmt.Errorf("store %q: %w", key, fs.ErrInvalid)
	}
	err := s.db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketTLS)
		if err != nil {
			return err
		}
		if isDir(b, k) {
			return fmt.Errorf("%q is a directory", k)
		}
		for dir := path.Dir(k); dir != "."; dir = path.Dir(dir) {
			if b.Get([]byte(dir)) != nil {
				return fmt.Errorf("%q is a file", dir)
			}
		}
		return putRecord(b, k, value, s.now())
	})
	if err != nil {
		return fmt.Errorf("store %q: %w", key, err)
	}
	return nil
}

// Load returns the value at key, or an error wrapping fs.ErrNotExist.
func (s *storage) Load(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var data []byte
	var ok bool
	err := s.db.View(func(tx *kv.Tx) error {
		var err error
		data, _, ok, err = getRecord(tx.Bucket(bucketTLS), cleanKey(key))
		return err
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("load %q: %w", key, err)
	case !ok:
		return nil, fmt.Errorf("load %q: %w", key, fs.ErrNotExist)
	}
	return data, nil
}

// Delete removes key and, if it is a directory, every key under it. A missing key is not an
// error. The empty key (everything) is refused.
func (s *storage) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := cleanKey(key)
	if k == "" {
		return fmt.Errorf("delete %q: %w", key, fs.ErrInvalid)
	}
	err := s.db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketTLS)
		if b == nil {
			return nil
		}
		if err := b.Delete([]byte(k)); err != nil {
			return err
		}
		var under [][]byte
		children(b, k, func(k, _ []byte) bool { under = append(under, bytes.Clone(k)); return true })
		for _, u := range under {
			if err := b.Delete(u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	return nil
}

// Exists reports whether key is a file or a directory.
func (s *storage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// List returns the keys under prefix: its immediate children (files and directories) or, if
// recursive, every file and directory below it. It returns an error wrapping fs.ErrNotExist
// when prefix does not exist, and nothing for a file. The root ("") always exists.
func (s *storage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := cleanKey(prefix)
	var keys []string
	var file bool
	err := s.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketTLS)
		if p != "" && b != nil && b.Get([]byte(p)) != nil {
			file = true
			return nil
		}
		base := len(dirPrefix(p))
		seen := map[string]bool{}
		children(b, p, func(k, _ []byte) bool {
			rest := string(k[base:])
			for i := 0; i <= len(rest); i++ {
				if i < len(rest) && rest[i] != '/' {
					continue
				}
				name := path.Join(p, rest[:i])
				if !seen[name] {
					seen[name] = true
					keys = append(keys, name)
				}
				if !recursive {
					break
				}
			}
			return true
		})
		return nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	case file:
		return nil, nil
	case len(keys) == 0 && p != "":
		return nil, fmt.Errorf("list %q: %w", prefix, fs.ErrNotExist)
	}
	slices.Sort(keys)
	return keys, nil
}

// Stat describes key: a file with its size and modification time, or a directory
// (IsTerminal false) whose modification time is the latest of the files under it. A missing
// key gives an error wrapping fs.ErrNotExist.
func (s *storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return certmagic.KeyInfo{}, err
	}
	k := cleanKey(key)
	info := certmagic.KeyInfo{Key: k}
	var found bool
	err := s.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketTLS)
		data, mod, ok, err := getRecord(b, k)
		if err != nil || ok {
			info.IsTerminal, info.Size, info.Modified, found = true, int64(len(data)), mod, ok
			return err
		}
		children(b, k, func(_, v []byte) bool {
			found = true
			if len(v) >= 8 {
				if mod := time.Unix(0, int64(binary.BigEndian.Uint64(v))); mod.After(info.Modified) {
					info.Modified = mod
				}
			}
			return true
		})
		return nil
	})
	switch {
	case err != nil:
		return certmagic.KeyInfo{}, fmt.Errorf("stat %q: %w", key, err)
	case !found:
		return certmagic.KeyInfo{}, fmt.Errorf("stat %q: %w", key, fs.ErrNotExist)
	}
	return info, nil
}

// Lock takes the lock name, waiting while another holder (in this process, or a previous one
// whose record is not yet stale) has it, until ctx is done. While held, the lock's record is
// refreshed in the background; Unlock releases it.
func (s *storage) Lock(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("lock: empty name: %w", fs.ErrInvalid)
	}
	var timer *time.Timer
	for {
		s.mu.Lock()
		wake := s.wake // taken before trying, so that an Unlock in between is not missed
		s.mu.Unlock()
		ok, err := s.TryLock(ctx, name)
		if err != nil || ok {
			return err
		}
		if timer == nil {
			timer = time.NewTimer(s.poll)
			defer timer.Stop()
		} else {
			timer.Reset(s.poll)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lock %q: %w", name, ctx.Err())
		case <-wake:
		case <-timer.C:
		}
	}
}

// TryLock takes the lock name if it is free or stale, and reports whether it did.
func (s *storage) TryLock(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("lock %q: %w", name, err)
	}
	if name == "" {
		return false, fmt.Errorf("lock: empty name: %w", fs.ErrInvalid)
	}
	// A look first, so that waiters polling a held lock do not write.
	var held bool
	err := s.db.View(func(tx *kv.Tx) error {
		if b := tx.Bucket(bucketLocks); b != nil {
			var rec lockRecord
			v := b.Get([]byte(name))
			held = v != nil && json.Unmarshal(v, &rec) == nil && s.now().Sub(rec.Updated) <= s.stale
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("lock %q: %w", name, err)
	}
	if held {
		return false, nil
	}
	var took bool
	var stale *lockRecord
	err = s.db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLocks)
		if err != nil {
			return err
		}
		now := s.now()
		if v := b.Get([]byte(name)); v != nil {
			var rec lockRecord
			if err := json.Unmarshal(v, &rec); err == nil && now.Sub(rec.Updated) <= s.stale {
				return nil // held
			}
			stale = &rec
		}
		v, err := json.Marshal(lockRecord{Owner: s.id, Created: now, Updated: now})
		if err != nil {
			return err
		}
		took = true
		return b.Put([]byte(name), v)
	})
	if err != nil {
		return false, fmt.Errorf("lock %q: %w", name, err)
	}
	if !took {
		return false, nil
	}
	if stale != nil {
		s.log.Info().Str("lock", name).Time("updated", stale.Updated).Msg("took over a stale lock")
	}
	h := &heldLock{stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	old := s.held[name] // a refresher for a lock of ours that was taken over as stale
	s.held[name] = h
	s.mu.Unlock()
	if old != nil {
		close(old.stop)
		<-old.done
	}
	go s.keepFresh(name, h)
	return true, nil
}

// keepFresh refreshes the record of lock name every s.refresh until h.stop is closed or the
// record is no longer ours.
func (s *storage) keepFresh(name string, h *heldLock) {
	defer close(h.done)
	t := time.NewTicker(s.refresh)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		var ours bool
		err := s.db.Update(func(tx *kv.Tx) error {
			b := tx.Bucket(bucketLocks)
			if b == nil {
				return nil
			}
			var rec lockRecord
			if v := b.Get([]byte(name)); v == nil || json.Unmarshal(v, &rec) != nil || rec.Owner != s.id {
				return nil
			}
			ours = true
			rec.Updated = s.now()
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			return b.Put([]byte(name), v)
		})
		if err != nil || !ours {
			if err != nil {
				s.log.Error().Err(err).Str("lock", name).Msg("refresh lock")
			}
			return
		}
	}
}

// Unlock releases the lock name. It fails if no one holds it or if its record belongs to
// another holder (another storage, or a taker-over after this one was stale).
func (s *storage) Unlock(_ context.Context, name string) error {
	s.mu.Lock()
	h := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if h != nil {
		close(h.stop)
		<-h.done
	}
	err := s.db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketLocks)
		if b == nil {
			return errNotLocked
		}
		v := b.Get([]byte(name))
		if v == nil {
			return errNotLocked
		}
		var rec lockRecord
		if err := json.Unmarshal(v, &rec); err != nil || rec.Owner != s.id {
			return errors.New("held by another owner")
		}
		return b.Delete([]byte(name))
	})
	if err != nil {
		return fmt.Errorf("unlock %q: %w", name, err)
	}
	s.mu.Lock()
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
	return nil
}
