package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/kv"
)

// Scheduled copies are named ownsona-20261122T030000Z.db, locally and off site: the UTC time
// they were taken, so that names sort by time.
const (
	filePrefix  = "ownsona-"
	stampLayout = "20060102T150405Z"
)

// Options configure a Scheduler.
type Options struct {
	// Dir receives the local copies; made (mode 0700) when missing. Required.
	Dir string
	// Every is the interval between copies; the first is taken an interval after Run starts.
	// If zero, 24h.
	Every time.Duration
	// Keep is how many local copies stay; older ones of ours are deleted. If zero, 7.
	Keep int
	// Offsite, if not nil, receives a copy of each local one after it is written and checked.
	Offsite *Remote
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Log hears of each copy and each failure; never of a credential. If zero, silent.
	Log zerolog.Logger
}

// Result is the outcome of the last attempt at a copy.
type Result struct {
	At  time.Time // when it ended; zero: never tried
	OK  bool
	Err string // why it failed; empty when OK. Holds no credential
	Key string // what was written: the local file's path, or the object's s3:// URL
	// LastOK is when an attempt last succeeded since the server started, kept across the
	// failures after it; zero: none has.
	LastOK time.Time
}

// Status is what the last scheduled backup did, locally and off site.
type Status struct {
	Local   Result
	Offsite Result
	// Target is the off-site prefix (s3://BUCKET/PREFIX/); empty without one.
	Target string
}

// File is one local copy, as Files lists it.
type File struct {
	Name string    // ownsona-20261122T030000Z.db
	Size int64     // bytes
	Time time.Time // when it was taken, from its name
}

// Scheduler takes a checked copy of the database into a directory at an interval, keeps the
// newest few, and sends each to an S3 bucket when one is configured; a failed upload leaves the
// local copy and is recorded in Status. Safe for concurrent use; copies are taken one at a
// time.
type Scheduler struct {
	db   *kv.DB
	opts Options

	run    sync.Mutex // one copy at a time
	mu     sync.Mutex
	status Status
}

// NewScheduler returns a Scheduler of db's copies.
func NewScheduler(db *kv.DB, o Options) *Scheduler {
	if o.Every == 0 {
		o.Every = 24 * time.Hour
	}
	if o.Keep == 0 {
		o.Keep = 7
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Scheduler{db: db, opts: o}
	if o.Offsite != nil {
		s.status.Target = o.Offsite.url(o.Offsite.prefix())
	}
	return s
}

// Run takes a copy every Every until ctx is done.
func (s *Scheduler) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.BackupNow(ctx)
		}
	}
}

// Status is what the last copy did.
func (s *Scheduler) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// BackupNow takes one copy: it writes and checks the local file (ToFile), deletes our oldest
// beyond Keep, then uploads the file when an off-site bucket is configured, bounded by the
// interval. It returns the local file's path (empty if none was written) and the first
// failure; the local copy stays whatever the upload does. Each outcome is logged and kept for
// Status.
func (s *Scheduler) BackupNow(ctx context.Context) (string, error) {
	s.run.Lock()
	defer s.run.Unlock()
	path, err := s.local()
	s.record(func(st *Status) { st.Local = s.result(st.Local, path, err) })
	if err != nil {
		s.opts.Log.Error().Err(err).Msg("scheduled backup failed")
		return "", err
	}
	s.opts.Log.Info().Str("file", path).Msg("scheduled backup written")
	if s.opts.Offsite == nil {
		return path, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Every)
	defer cancel()
	key, err := s.opts.Offsite.Upload(ctx, path)
	s.record(func(st *Status) { st.Offsite = s.result(st.Offsite, key, err) })
	if err != nil {
		err = fmt.Errorf("off-site copy: %w", err)
		s.opts.Log.Error().Err(err).Str("kept", path).Msg("scheduled backup not copied off site; the local copy is kept")
		return path, err
	}
	s.opts.Log.Info().Str("object", key).Msg("scheduled backup copied off site")
	return path, nil
}

// result is the outcome of an attempt that ended now, after prev.
func (s *Scheduler) result(prev Result, key string, err error) Result {
	r := Result{At: s.opts.Now(), OK: err == nil, Key: key, LastOK: prev.LastOK}
	if err != nil {
		r.Err = err.Error()
	} else {
		r.LastOK = r.At
	}
	return r
}

func (s *Scheduler) record(f func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.status)
}

// local writes one local copy and prunes the oldest beyond Keep.
func (s *Scheduler) local() (string, error) {
	dir := s.opts.Dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("backup dir: %w", err)
	}
	path := filepath.Join(dir, filePrefix+s.opts.Now().UTC().Format(stampLayout)+".db")
	if _, err := ToFile(s.db, path); err != nil {
		return "", err
	}
	files, err := s.Files()
	if err != nil {
		return path, err
	}
	for _, f := range files[min(s.opts.Keep, len(files)):] {
		if err := os.Remove(filepath.Join(dir, f.Name)); err != nil {
			return path, err
		}
	}
	return path, nil
}

// Files lists the local copies in Dir, newest first; none while Dir does not exist yet. Other
// files in Dir are left out.
func (s *Scheduler) Files() ([]File, error) {
	entries, err := os.ReadDir(s.opts.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range slices.Backward(entries) { // ReadDir sorts by name: the time, oldest first
		stamp, ok := stampOf(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // pruned meanwhile
		}
		at, err := time.Parse(stampLayout, stamp)
		if err != nil {
			at = fi.ModTime()
		}
		out = append(out, File{Name: e.Name(), Size: fi.Size(), Time: at})
	}
	return out, nil
}
