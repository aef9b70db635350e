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
// Both are checked and recorded under the store's write lock, in the transaction that stores,
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
	// recentScan bounds how many of the newest memories the exact-duplicate check reads.
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
			if b == nil {
				continue
			}
			v := b.Get([]byte(k))
			if v == nil {
				continue
			}
			var rec idempotencyRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("idempotency key: %w", err)
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

// rememberKeys records the keys of the items that succeeded without a key answering for them,
// in tx, and removes expired keys once per pruneEvery.
func (s *Store) rememberKeys(tx *kv.Tx, items []*newMemory, results []insertResult, now time.Time) error {
	var b *kv.Bucket
	for i, it := range items {
		r := results[i]
		if it.Key == "" || r.Err != nil || r.keyHit {
			continue // refused, or its key is recorded already
		}
		if b == nil {
			var err error
			if b, err = tx.CreateBucketIfNotExists(bucketIdempotency); err != nil {
				return err
			}
		}
		v, err := json.Marshal(idempotencyRecord{At: now, Sum: textSum(it.Text), ID: r.ID, Existing: r.Skipped})
		if err != nil {
			return err
		}
		if err := b.Put(idempotencyKey(it.Principal, it.Key), v); err != nil {
			return err
		}
	}
	if now.Sub(s.prunedAt) < pruneEvery {
		return nil
	}
	s.prunedAt = now
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
// wrote within RecentDuplicateWindow of now, or 0. s.mu must be held.
func (s *Store) recentDuplicateLocked(m *Memory, now time.Time) uint64 {
	for i, n := len(s.ids)-1, 0; i >= 0 && n < recentScan; i, n = i-1, n+1 {
		c := s.mems[s.ids[i]]
		if c.CaptureMode != CaptureImport && now.Sub(c.CreatedAt) > RecentDuplicateWindow {
			return 0 // written in order: the rest is older
		}
		if c.SourceClient == m.SourceClient && c.Text == m.Text && slices.Equal(c.Tags, m.Tags) &&
			!c.Deleted() && !c.Expired(now) && !c.superseded && now.Sub(c.CreatedAt) <= RecentDuplicateWindow && !c.CreatedAt.After(now) {
			return c.ID
		}
	}
	return 0
}
