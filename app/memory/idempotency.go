package memory

// Retries never store twice. Assistants and connectors retry a call whose answer they did not
// see; two rules answer the retry with the first call's memory instead of storing it again,
// and say so (Remembered.Replayed):
//
//   - An idempotency key (Draft.IdempotencyKey) names a write for IdempotencyTTL, per
//     principal (Origin.Principal: the OAuth client or token, or "stdio"). The same key again
//     with the same text answers with the first result; with another text it is refused
//     (*InputError on idempotency_key), as Stripe refuses a key reused with other parameters.
//     Keys live in a bucket of their own in the one file, with the time of the first write, so
//     they survive a restart; those past IdempotencyTTL are ignored, and removed by the first
//     write after each hour.
//   - Without a key, a memory with the same text and tags as one the same client (source_client)
//     wrote within RecentDuplicateWindow, still active, is that memory (not with DedupInsert,
//     which stores without looking, nor between the items of one call).
//
// Both are checked under the store's write lock against the file, the cache and the writes
// queued for the next group commit (commit.go), and recorded in the transaction that stores,
// so two identical calls at once store once.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
)

const (
	// IdempotencyTTL is how long an idempotency key answers for the write it named.
	IdempotencyTTL = 24 * time.Hour
	// RecentDuplicateWindow is how recent an exact duplicate by the same client must be to
	// answer for a write without a key.
	RecentDuplicateWindow = time.Minute
	// recentScan bounds how many of the newest memories the exact-duplicate check considers.
	recentScan = 1000
	// pruneEvery is how often a write removes expired keys.
	pruneEvery = time.Hour
)

// bucketIdempotency holds principal + "\x00" + key → JSON of idempotencyRecord. It is created
// by the first keyed write.
const bucketIdempotency = "idempotency"

// idempotencyRecord is the first write a key named.
type idempotencyRecord struct {
	At       time.Time `json:"at"`
	Sum      string    `json:"text_sha256"` // of the normalized text
	ID       uint64    `json:"memory_id"`
	Existing bool      `json:"existing,omitempty"` // skip_if_near answered with a stored memory
}

func idempotencyKey(principal, key string) []byte { return []byte(principal + "\x00" + key) }

func textSum(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// replayKeys answers the keyed items whose key a previous write within IdempotencyTTL used,
// refuses those whose key named another text, and points an item that repeats a key of an
// earlier item in the same call at it. The caller holds s.writeMu.
func (s *Store) replayKeys(items []*newMemory, results []insertResult, now time.Time) error {
	first := map[string]int{}
	// The queued keys first: a queued write leaves the queue only once it is in the file, so a
	// key not queued now is in the bucket if it was ever written.
	queued := map[string]idempotencyRecord{}
	s.mu.RLock()
	for _, r := range s.queued {
		for k, rec := range r.keys {
			queued[k] = rec
		}
	}
	s.mu.RUnlock()
	return s.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(bucketIdempotency)
		for i, it := range items {
			if it.Key == "" {
				continue
			}
			k := string(idempotencyKey(it.Principal, it.Key))
			sum := textSum(it.Text)
			if j, ok := first[k]; ok {
				if textSum(items[j].Text) != sum {
					results[i].Err = usedForOtherText()
				} else {
					results[i].sameAs = j + 1
				}
				continue
			}
			first[k] = i
			rec, ok := queued[k]
			if !ok {
				if b == nil {
					continue
				}
				v := b.Get([]byte(k))
				if v == nil {
					continue
				}
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("idempotency key: %w", err)
				}
			}
			if now.Sub(rec.At) >= IdempotencyTTL {
				continue
			}
			if rec.Sum != sum {
				results[i].Err = usedForOtherText()
				continue
			}
			results[i] = insertResult{ID: rec.ID, Skipped: rec.Existing, Replayed: true, keyHit: true}
		}
		return nil
	})
}

func usedForOtherText() error {
	return &InputError{Field: "idempotency_key", Reason: fmt.Sprintf("was used for different text within the last %d hours; use a new key for a new memory", int(IdempotencyTTL.Hours()))}
}

// rememberKeys records keys (idempotencyKey → its record) in tx, and with prune removes expired
// keys (once per pruneEvery, which the caller decides under s.writeMu).
func (s *Store) rememberKeys(tx *kv.Tx, keys map[string]idempotencyRecord, now time.Time, prune bool) error {
	var b *kv.Bucket
	for k, rec := range keys {
		if b == nil {
			var err error
			if b, err = tx.CreateBucketIfNotExists(bucketIdempotency); err != nil {
				return err
			}
		}
		v, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(k), v); err != nil {
			return err
		}
	}
	if !prune {
		return nil
	}
	if b == nil {
		if b = tx.Bucket(bucketIdempotency); b == nil {
			return nil
		}
	}
	var expired [][]byte
	if err := b.ForEach(func(k, v []byte) error {
		var rec idempotencyRecord
		if json.Unmarshal(v, &rec) != nil || now.Sub(rec.At) >= IdempotencyTTL {
			expired = append(expired, slices.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range expired {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// recentDuplicateLocked is the id of an active memory with m's text and tags that m's client
// wrote within RecentDuplicateWindow of now, or 0: among the writes queued for the next commit,
// then the memories stored within the window (s.recent). s.mu must be held.
func (s *Store) recentDuplicateLocked(m *Memory, now time.Time) uint64 {
	for i := len(s.queued) - 1; i >= 0; i-- {
		qs := s.queued[i].mems
		for j := len(qs) - 1; j >= 0; j-- {
			c := qs[j].m
			if c.SourceClient == m.SourceClient && c.Text == m.Text && slices.Equal(c.Tags, m.Tags) &&
				!c.Deleted() && !c.Expired(now) && now.Sub(c.CreatedAt) <= RecentDuplicateWindow && !c.CreatedAt.After(now) {
				return c.ID
			}
		}
	}
	ids := s.recent.byText[m.Text]
	for i := len(ids) - 1; i >= 0; i-- {
		c := s.mems[ids[i]]
		if c != nil && c.SourceClient == m.SourceClient && c.Text == m.Text && slices.Equal(c.Tags, m.Tags) &&
			!c.Deleted() && !c.Expired(now) && !c.superseded && now.Sub(c.CreatedAt) <= RecentDuplicateWindow && !c.CreatedAt.After(now) {
			return c.ID
		}
	}
	return 0
}

// recentIndex is the memories stored (or given their text) within the last
// RecentDuplicateWindow, by text, oldest first: the candidates of recentDuplicateLocked, found
// without reading the newest memories one by one.
type recentIndex struct {
	byText map[string][]uint64
	fifo   []recentEntry // by the time they were added
}

type recentEntry struct {
	id   uint64
	text string
	at   time.Time // when it was added, or its creation time if later
}

// add records that memory id has text since at (max(now, its created_at)), and drops the
// entries older than RecentDuplicateWindow before now, and the oldest beyond recentScan (as the
// check read at most the recentScan newest memories before). s.mu must be held for writing.
func (r *recentIndex) add(id uint64, text string, at, now time.Time) {
	for len(r.fifo) > 0 && (len(r.fifo) >= recentScan || now.Sub(r.fifo[0].at) > RecentDuplicateWindow) {
		e := r.fifo[0]
		r.fifo = r.fifo[1:]
		ids := slices.DeleteFunc(r.byText[e.text], func(x uint64) bool { return x == e.id })
		if len(ids) == 0 {
			delete(r.byText, e.text)
		} else {
			r.byText[e.text] = ids
		}
	}
	if r.byText == nil {
		r.byText = map[string][]uint64{}
	}
	r.byText[text] = append(r.byText[text], id)
	r.fifo = append(r.fifo, recentEntry{id: id, text: text, at: at})
}

// addRecentLocked adds m to s.recent. s.mu must be held for writing.
func (s *Store) addRecentLocked(m *Memory, now time.Time) {
	at := now
	if m.CreatedAt.After(at) {
		at = m.CreatedAt
	}
	s.recent.add(m.ID, m.Text, at, now)
}
