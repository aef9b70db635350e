package login

import (
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Device cookie names, like the session cookie's: __Host- over https, without it on plain-http
// loopback.
const (
	DeviceCookieSecure = "__Host-ownsona_device"
	DeviceCookiePlain  = "ownsona_device"
)

// DeviceTTL is how long a device cookie is honoured after the sign-in that set it. Each sign-in
// sets a new one.
const DeviceTTL = 365 * 24 * time.Hour

// maxDevices bounds the devices remembered; past it, the one whose cookie expires soonest (the
// one signed in with least recently) is forgotten. Only a right password adds a device.
const maxDevices = 100

// devices are the browsers the owner has signed in with (OWASP "Slow Down Online Guessing
// Attacks with Device Cookies"): the SHA-256 digests of their device cookies and when each
// expires, in memory and, with a database, in the nested bucket "devices" of Bucket (digest →
// expiry in Unix seconds, 8 bytes big-endian), written at each sign-in. It is safe for
// concurrent use.
type devices struct {
	db  *kv.DB // nil: memory only
	now func() time.Time

	mu sync.Mutex
	m  map[string]time.Time // digest (hex) → expiry
}

// openDevices loads the devices kept in db (none without a db), forgetting expired ones.
func openDevices(db *kv.DB, now func() time.Time) (*devices, error) {
	d := &devices{db: db, now: now, m: make(map[string]time.Time)}
	if db == nil {
		return d, nil
	}
	t := now()
	err := db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(Bucket)
		if b == nil {
			return nil
		}
		if b = b.Bucket(bucketDevices); b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return nil
			}
			if exp := time.Unix(int64(binary.BigEndian.Uint64(v)), 0); t.Before(exp) {
				d.m[hex.EncodeToString(k)] = exp
			}
			return nil
		})
	})
	return d, err
}

// valid returns the digest of the device cookie value if it names a remembered device, or "".
func (d *devices) valid(value string) string {
	if value == "" {
		return ""
	}
	dg := digest(value)
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.m[dg]
	if !ok || !d.now().Before(exp) {
		return ""
	}
	return dg
}

// issue remembers a new device, forgetting old (a device digest, or ""), and returns the new
// device cookie value and its digest. It is called only after a right password.
func (d *devices) issue(old string) (value, dg string, err error) {
	value = newSecret()
	dg = digest(value)
	now := d.now()
	exp := now.Add(DeviceTTL)
	d.mu.Lock()
	defer d.mu.Unlock()
	m := make(map[string]time.Time, len(d.m)+1) // the new state, installed once written
	for k, e := range d.m {
		if k != old && now.Before(e) {
			m[k] = e
		}
	}
	for len(m) >= maxDevices {
		var soonest string
		for k, e := range m {
			if soonest == "" || e.Before(m[soonest]) {
				soonest = k
			}
		}
		delete(m, soonest)
	}
	m[dg] = exp
	if d.db != nil {
		err = d.db.Update(func(tx *kv.Tx) error {
			parent, err := tx.CreateBucketIfNotExists(Bucket)
			if err != nil {
				return err
			}
			if parent.Bucket(bucketDevices) != nil {
				if err := parent.DeleteBucket(bucketDevices); err != nil {
					return err
				}
			}
			b, err := parent.CreateBucketIfNotExists(bucketDevices)
			if err != nil {
				return err
			}
			for k, e := range m {
				key, _ := hex.DecodeString(k)
				if err := b.Put(key, binary.BigEndian.AppendUint64(nil, uint64(e.Unix()))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", "", err
		}
	}
	d.m = m
	return value, dg, nil
}
