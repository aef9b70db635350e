package audit

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Bucket is the audit log's bucket in the database file: 16-byte keys (the entry's time in
// Unix nanoseconds, big-endian, then the bucket's NextSequence, big-endian) → the encoded
// entry. Open creates it.
const Bucket = "mcp_audit"

// RefusedBucket keeps the refusals (Entry.Refusal), aggregated per address, outcome and minute,
// in the same layout as Bucket and under bounds of their own (Config.MaxRefused), so that no
// flood of refused requests can push the record of real use out of Bucket.
const RefusedBucket = "mcp_audit_refused"

// Defaults. See Config.
const (
	DefaultMaxAge        = 90 * 24 * time.Hour
	DefaultMaxEntries    = 100_000
	DefaultMaxRefused    = 20_000
	maxAggregates        = 10_000 // refusal groups of the current minutes kept in memory
	DefaultBufferSize    = 4096
	DefaultBatchSize     = 256
	DefaultFlushInterval = time.Second
)

// minPrune is how many old entries one write may delete at least; it deletes up to twice the
// entries it adds when more are due, so pruning always outpaces recording.
const minPrune = 1024

// ErrClosed: Flush or Query on a Log after Close.
var ErrClosed = errors.New("audit log is closed")

// Config configures a Log. The zero value is usable.
type Config struct {
	// Now is the clock, for entries recorded without a time and for pruning by age. If nil,
	// time.Now.
	Now func() time.Time
	// MaxAge: entries older than this are deleted. If zero, DefaultMaxAge (90 days); if
	// negative, entries are kept whatever their age.
	MaxAge time.Duration
	// MaxEntries: beyond this many entries the oldest are deleted. If zero, DefaultMaxEntries
	// (100,000); if negative, no bound on the count.
	MaxEntries int
	// MaxRefused bounds the aggregated refusals in RefusedBucket the same way. If zero,
	// DefaultMaxRefused (20,000); if negative, no bound on the count.
	MaxRefused int
	// BufferSize is how many recorded entries may wait in memory for the writer; Record drops
	// (and counts) an entry that finds the buffer full. If zero, DefaultBufferSize (4096).
	BufferSize int
	// BatchSize: the writer commits once this many entries wait. If zero, DefaultBatchSize
	// (256).
	BatchSize int
	// FlushInterval: the writer commits what waits at least this often. If zero,
	// DefaultFlushInterval (1s).
	FlushInterval time.Duration
	// OnError, if set, is called from the writer's goroutine with each failed write (its
	// entries are lost and counted in Stats.Failed). If nil, failures are only counted. It
	// must not call the Log's Flush, Query or Close, which wait for that goroutine.
	OnError func(error)
}

// withDefaults returns c with its defaults filled in, or an error naming the setting that is
// out of range.
func (c Config) withDefaults() (Config, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.BufferSize < 0:
		return c, fmt.Errorf("buffer size %d is negative", c.BufferSize)
	case c.BatchSize < 0:
		return c, fmt.Errorf("batch size %d is negative", c.BatchSize)
	case c.FlushInterval < 0:
		return c, fmt.Errorf("flush interval %v is negative", c.FlushInterval)
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.MaxRefused == 0 {
		c.MaxRefused = DefaultMaxRefused
	}
	if c.BufferSize == 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	return c, nil
}

// Log is the audit log: Record buffers, one goroutine writes. It is safe for concurrent use.
// A nil *Log records nothing. Close it before closing the database.
type Log struct {
	db  *kv.DB
	cfg Config

	mu     sync.RWMutex // Record holds it to send, Close to set closed
	closed bool
	queue  chan Entry
	flush  chan chan error
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	err    error // the final write's, set before done is closed

	written, dropped, failed, pruned, folded atomic.Uint64

	aggMu sync.Mutex
	agg   map[aggKey]*Entry // refusals of the minutes not yet written, by group

	// The writer's own (stored is read by Stats too).
	batch   []Entry
	entries shelf // Bucket
	refused shelf // RefusedBucket
}

// shelf is what the writer keeps in memory of one bucket: how many entries it holds and the
// time of its first, so that pruning is decided without touching the file.
type shelf struct {
	bucket    string
	max       int
	stored    atomic.Int64
	oldest    int64 // key time of the first entry, if hasOldest
	hasOldest bool
}

// aggKey groups refusals: the minute, the address (IPv6 by /64, as the rate limits count
// them), who, how and how it ended.
type aggKey struct {
	minute    int64
	prefix    netip.Prefix
	client    string
	transport Transport
	method    string
	outcome   Outcome
	status    int
}

// Stats are a Log's counters since Open.
type Stats struct {
	Written uint64 // entries committed to the file
	Dropped uint64 // entries Record could not buffer (buffer full, or the Log closed)
	Failed  uint64 // entries lost because the write of their batch failed
	Pruned  uint64 // entries deleted for age or count
	Stored  int    // entries in Bucket after the last write
	Refused int    // aggregated refusals in RefusedBucket after the last write
	Folded  uint64 // refusals counted into an aggregate rather than stored one by one
}

// Open returns the audit log kept in db, creating its bucket, and starts its writer. It reads
// the number of stored entries once (a walk of the bucket's pages).
func Open(db *kv.DB, cfg Config) (*Log, error) {
	l, err := open(db, cfg)
	if err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// open is Open without starting the writer.
func open(db *kv.DB, cfg Config) (*Log, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	l := &Log{
		db:    db,
		cfg:   cfg,
		queue: make(chan Entry, cfg.BufferSize),
		flush: make(chan chan error),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		agg:   map[aggKey]*Entry{},
	}
	l.entries.bucket, l.entries.max = Bucket, cfg.MaxEntries
	l.refused.bucket, l.refused.max = RefusedBucket, cfg.MaxRefused
	err = db.Update(func(tx *kv.Tx) error {
		for _, sh := range []*shelf{&l.entries, &l.refused} {
			b, err := tx.CreateBucketIfNotExists(sh.bucket)
			if err != nil {
				return err
			}
			sh.stored.Store(int64(b.Stats()))
			sh.oldest, sh.hasOldest = firstTime(b)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return l, nil
}

// Record queues e for the writer and returns at once: it never waits for the disk or for
// other callers. A zero e.Time is set to Config.Now(). When the buffer is full, or the Log is
// closed, e is dropped and counted in Stats.Dropped. A refusal (Entry.Refusal) is counted into
// its minute's aggregate instead, written to RefusedBucket once the minute is over.
func (l *Log) Record(e Entry) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.cfg.Now()
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	if e.Refusal() {
		l.fold(e)
		return
	}
	select {
	case l.queue <- e:
	default:
		l.dropped.Add(1)
	}
}

// fold counts a refusal into its group's aggregate: one entry per address, outcome and minute,
// whatever the flood. Beyond maxAggregates groups at once (a flood from that many addresses in
// a minute), further new groups are dropped and counted.
func (l *Log) fold(e Entry) {
	minute := e.Time.Truncate(time.Minute)
	k := aggKey{minute: minute.UnixNano(), client: e.Client, transport: e.Transport, method: e.Method, outcome: e.Outcome, status: e.Status}
	if ip := e.RemoteIP.Unmap(); ip.Is6() {
		k.prefix, _ = ip.WithZone("").Prefix(64)
	} else if ip.IsValid() {
		k.prefix, _ = ip.Prefix(32)
	}
	l.aggMu.Lock()
	defer l.aggMu.Unlock()
	a := l.agg[k]
	if a == nil {
		if len(l.agg) >= maxAggregates {
			l.dropped.Add(1)
			return
		}
		a = &e
		a.Time, a.Count = minute, 0
		l.agg[k] = a
	} else {
		a.RequestBytes += e.RequestBytes
		a.ResponseBytes += e.ResponseBytes
		a.Duration = max(a.Duration, e.Duration)
		l.folded.Add(1)
	}
	a.Count += max(e.Count, 1)
}

// ripe takes the aggregates of the minutes that are over (all of them when all is set).
func (l *Log) ripe(now time.Time, all bool) []Entry {
	l.aggMu.Lock()
	defer l.aggMu.Unlock()
	current := now.Truncate(time.Minute).UnixNano()
	var out []Entry
	for k, a := range l.agg {
		if all || k.minute < current {
			out = append(out, *a)
			delete(l.agg, k)
		}
	}
	// In a stable order: entries of one minute share their time, and keys order by it.
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(a.Time.Compare(b.Time), a.RemoteIP.Compare(b.RemoteIP), strings.Compare(string(a.Outcome), string(b.Outcome)),
			strings.Compare(a.Client, b.Client), strings.Compare(a.Method, b.Method))
	})
	return out
}

// Flush commits every entry recorded before it was called (and prunes, if due), and returns
// that write's error. It fails with ErrClosed after Close.
func (l *Log) Flush() error {
	if l == nil {
		return nil
	}
	reply := make(chan error, 1)
	select {
	case l.flush <- reply:
		return <-reply
	case <-l.done:
		return fmt.Errorf("flush audit log: %w", ErrClosed)
	}
}

// Close stops the writer after it has committed what was recorded before, and returns that
// last write's error. Later Records are dropped. It does not close the database. It may be
// called on a nil Log and more than once; later calls return nil.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	first := false
	l.once.Do(func() {
		first = true
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		close(l.stop)
	})
	if !first {
		return nil
	}
	<-l.done
	return l.err
}

// Stats returns the Log's counters.
func (l *Log) Stats() Stats {
	if l == nil {
		return Stats{}
	}
	return Stats{
		Written: l.written.Load(),
		Dropped: l.dropped.Load(),
		Failed:  l.failed.Load(),
		Pruned:  l.pruned.Load(),
		Stored:  int(l.entries.stored.Load()),
		Refused: int(l.refused.stored.Load()),
		Folded:  l.folded.Load(),
	}
}

// Query flushes, then returns the entries that match f, as the package function Query does.
func (l *Log) Query(f Filter) (entries []Entry, corrupt int, err error) {
	if err := l.Flush(); err != nil {
		return nil, 0, fmt.Errorf("query audit log: %w", err)
	}
	return Query(l.db, f)
}

// run is the writer: it gathers entries into batches and commits each in one Update.
func (l *Log) run() {
	defer close(l.done)
	tick := time.NewTicker(l.cfg.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case e := <-l.queue:
			l.batch = append(l.batch, e)
			if len(l.batch) >= l.cfg.BatchSize {
				_ = l.write(false)
			}
		case <-tick.C:
			_ = l.write(false)
		case reply := <-l.flush:
			l.drain()
			reply <- l.write(true)
		case <-l.stop:
			l.drain() // Close holds no more senders: the queue is final
			l.err = l.write(true)
			return
		}
	}
}

// drain moves what waits in the queue now into the batch.
func (l *Log) drain() {
	for n := len(l.queue); n > 0; n-- {
		l.batch = append(l.batch, <-l.queue)
	}
}

// write commits the batch, the refusal aggregates of the minutes that are over (all of them
// when all is set: Flush and Close), and prunes both buckets, in one Update. With nothing to
// write it touches the file only when pruning is due, so an idle log stays off the disk.
func (l *Log) write(all bool) error {
	now := l.cfg.Now()
	batch := l.batch
	defer func() { clear(batch); l.batch = batch[:0] }()
	refused := l.ripe(now, all)
	if len(batch) == 0 && len(refused) == 0 && !l.pruneDue(&l.entries, now) && !l.pruneDue(&l.refused, now) {
		return nil
	}
	type result struct {
		removed   int
		oldest    int64
		hasOldest bool
	}
	var res [2]result
	err := l.db.Update(func(tx *kv.Tx) error {
		for i, w := range []struct {
			sh      *shelf
			entries []Entry
		}{{&l.entries, batch}, {&l.refused, refused}} {
			b, err := tx.CreateBucketIfNotExists(w.sh.bucket)
			if err != nil {
				return err
			}
			for _, e := range w.entries {
				seq, err := b.NextSequence()
				if err != nil {
					return err
				}
				e = clean(e)
				if err := b.Put(entryKey(e.Time.UnixNano(), seq), encodeEntry(e)); err != nil {
					return err
				}
			}
			if res[i].removed, err = l.prune(w.sh, b, now, len(w.entries)); err != nil {
				return err
			}
			res[i].oldest, res[i].hasOldest = firstTime(b)
		}
		return nil
	})
	if err != nil {
		n := len(batch) + len(refused)
		l.failed.Add(uint64(n))
		err = fmt.Errorf("write audit log: %d entries lost: %w", n, err)
		if l.cfg.OnError != nil {
			l.cfg.OnError(err)
		}
		return err
	}
	l.written.Add(uint64(len(batch) + len(refused)))
	for i, w := range []struct {
		sh    *shelf
		added int
	}{{&l.entries, len(batch)}, {&l.refused, len(refused)}} {
		l.pruned.Add(uint64(res[i].removed))
		w.sh.stored.Add(int64(w.added - res[i].removed))
		w.sh.oldest, w.sh.hasOldest = res[i].oldest, res[i].hasOldest
	}
	return nil
}

// pruneDue reports whether a bucket holds more entries than allowed, or one older than allowed.
func (l *Log) pruneDue(sh *shelf, now time.Time) bool {
	return sh.max > 0 && sh.stored.Load() > int64(sh.max) ||
		l.cfg.MaxAge > 0 && sh.hasOldest && sh.oldest < l.cutoff(now)
}

// cutoff is the time, in Unix nanoseconds, before which entries are too old.
func (l *Log) cutoff(now time.Time) int64 {
	n, d := now.UnixNano(), int64(l.cfg.MaxAge)
	if d > n {
		return -1 // before every key
	}
	return n - d
}

// prune deletes the oldest entries while there are too many or they are too old, at most
// max(minPrune, 2×added) of them: each step is a seek to the first key, never a scan.
func (l *Log) prune(sh *shelf, b *kv.Bucket, now time.Time, added int) (removed int, err error) {
	count := sh.stored.Load() + int64(added)
	cutoff := l.cutoff(now)
	budget := max(minPrune, 2*added)
	c := b.Cursor()
	for k, _ := c.First(); k != nil && removed < budget; k, _ = c.First() {
		tooMany := sh.max > 0 && count > int64(sh.max)
		tooOld := l.cfg.MaxAge > 0 && keyTime(k) < cutoff
		if !tooMany && !tooOld {
			break
		}
		if err := c.Delete(); err != nil {
			return removed, fmt.Errorf("prune: %w", err)
		}
		removed++
		count--
	}
	return removed, nil
}

// entryKey is an entry's key: its time, clamped at the Unix epoch, then seq.
func entryKey(unixNano int64, seq uint64) []byte {
	k := make([]byte, 0, 16)
	k = binary.BigEndian.AppendUint64(k, uint64(max(unixNano, 0)))
	return binary.BigEndian.AppendUint64(k, seq)
}

// keyTime is the time in a key, in Unix nanoseconds; 0 for a key of the wrong length.
func keyTime(k []byte) int64 {
	if len(k) != 16 {
		return 0
	}
	return int64(min(binary.BigEndian.Uint64(k), 1<<63-1))
}

// firstTime is the time of the bucket's first key, if any.
func firstTime(b *kv.Bucket) (int64, bool) {
	k, _ := b.Cursor().First()
	if k == nil {
		return 0, false
	}
	return keyTime(k), true
}
