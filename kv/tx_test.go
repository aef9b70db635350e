package kv

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"testing"
)

// mustBucket creates bucket name in db.
func mustBucket(tb testing.TB, db *DB, name string) {
	tb.Helper()
	MustUpdate(tb, db, func(tx *Tx) error {
		_, err := tx.CreateBucketIfNotExists(name)
		return err
	})
}

func TestBucket_Get(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("b")
		if err != nil {
			return err
		}
		if _, err := b.CreateBucketIfNotExists("nested"); err != nil {
			return err
		}
		if err := b.Put([]byte("empty"), []byte{}); err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("value"))
	})

	t.Run("copy outlives the transaction", func(t *testing.T) {
		var got []byte
		MustView(t, db, func(tx *Tx) error {
			got = tx.Bucket("b").Get([]byte("k"))
			return nil
		})
		// Grow the file so that the old memory map would be replaced under a non-copy.
		MustUpdate(t, db, func(tx *Tx) error {
			b := tx.Bucket("b")
			for i := range 5000 {
				if err := b.Put(Key(uint64(i)), bytes.Repeat([]byte{'z'}, 200)); err != nil {
					return err
				}
			}
			return nil
		})
		if want := []byte("value"); !bytes.Equal(got, want) {
			t.Errorf("after the tx: %q, want %q", got, want)
		}
	})

	t.Run("copy may be modified", func(t *testing.T) {
		MustView(t, db, func(tx *Tx) error {
			b := tx.Bucket("b")
			v := b.Get([]byte("k")) // writing to bbolt's read-only map would crash
			v[0] = 'X'
			if got, want := b.Get([]byte("k")), []byte("value"); !bytes.Equal(got, want) {
				t.Errorf("stored value = %q after modifying the copy, want %q", got, want)
			}
			return nil
		})
	})

	t.Run("absent, empty and nested", func(t *testing.T) {
		MustView(t, db, func(tx *Tx) error {
			b := tx.Bucket("b")
			if got := b.Get([]byte("absent")); got != nil {
				t.Errorf("absent = %q, want nil", got)
			}
			if got := b.Get([]byte("empty")); got == nil || len(got) != 0 {
				t.Errorf("empty = %#v, want empty non-nil", got)
			}
			if got := b.Get([]byte("nested")); got != nil {
				t.Errorf("nested bucket key = %q, want nil", got)
			}
			return nil
		})
	})
}

func TestBucket_Put(t *testing.T) {
	db := MustOpen(t, "", Options{})
	mustBucket(t, db, "b")
	err := db.Update(func(tx *Tx) error { return tx.Bucket("b").Put(nil, []byte("v")) })
	if err == nil {
		t.Error("Put with an empty key succeeded")
	}
	MustUpdate(t, db, func(tx *Tx) error {
		b := tx.Bucket("b")
		if err := b.Put([]byte("k"), []byte("1")); err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("2"))
	})
	MustView(t, db, func(tx *Tx) error {
		if got, want := tx.Bucket("b").Get([]byte("k")), []byte("2"); !bytes.Equal(got, want) {
			t.Errorf("Get = %q, want %q", got, want)
		}
		return nil
	})
}

func TestBucket_Delete(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("b")
		if err != nil {
			return err
		}
		if err := b.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		if err := b.Delete([]byte("k")); err != nil {
			return err
		}
		return b.Delete([]byte("never there"))
	})
	MustView(t, db, func(tx *Tx) error {
		if got := tx.Bucket("b").Get([]byte("k")); got != nil {
			t.Errorf("Get after Delete = %q, want nil", got)
		}
		return nil
	})
}

func TestBucket_NextSequence(t *testing.T) {
	db := MustOpen(t, "", Options{})
	mustBucket(t, db, "b")

	t.Run("starts at 1", func(t *testing.T) {
		MustUpdate(t, db, func(tx *Tx) error {
			b := tx.Bucket("b")
			if got, want := b.Sequence(), uint64(0); got != want {
				t.Errorf("Sequence = %d, want %d", got, want)
			}
			id, err := b.NextSequence()
			if err != nil {
				return err
			}
			if got, want := id, uint64(1); got != want {
				t.Errorf("NextSequence = %d, want %d", got, want)
			}
			if got, want := b.Sequence(), uint64(1); got != want {
				t.Errorf("Sequence = %d, want %d", got, want)
			}
			return b.Put(Key(id), nil)
		})
	})

	t.Run("keys sort in id order across byte boundaries", func(t *testing.T) {
		var want []uint64
		MustUpdate(t, db, func(tx *Tx) error {
			b := tx.Bucket("b")
			for _, start := range []uint64{250, 65530, 1<<24 - 3, 1<<32 - 3, 1<<56 - 3, math.MaxUint64 - 5} {
				if err := b.SetSequence(start); err != nil {
					return err
				}
				for range 4 {
					id, err := b.NextSequence()
					if err != nil {
						return err
					}
					want = append(want, id)
					if err := b.Put(Key(id), nil); err != nil {
						return err
					}
				}
			}
			return nil
		})
		want = append([]uint64{1}, want...)
		var got []uint64
		MustView(t, db, func(tx *Tx) error {
			c := tx.Bucket("b").Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				got = append(got, ID(k))
			}
			return nil
		})
		if !slices.Equal(got, want) {
			t.Errorf("cursor order = %v, want %v", got, want)
		}
		if !slices.IsSorted(got) {
			t.Errorf("ids not ascending: %v", got)
		}
	})

	t.Run("never reused after delete", func(t *testing.T) {
		db := MustOpen(t, "", Options{})
		mustBucket(t, db, "c")
		var first uint64
		MustUpdate(t, db, func(tx *Tx) error {
			b := tx.Bucket("c")
			var err error
			if first, err = b.NextSequence(); err != nil {
				return err
			}
			if err := b.Put(Key(first), []byte("x")); err != nil {
				return err
			}
			return b.Delete(Key(first))
		})
		MustUpdate(t, db, func(tx *Tx) error {
			id, err := tx.Bucket("c").NextSequence()
			if err != nil {
				return err
			}
			if id <= first {
				t.Errorf("NextSequence after delete = %d, want > %d", id, first)
			}
			return nil
		})
	})

	t.Run("rolled back with the transaction", func(t *testing.T) {
		var before uint64
		MustView(t, db, func(tx *Tx) error { before = tx.Bucket("b").Sequence(); return nil })
		err := db.Update(func(tx *Tx) error {
			if _, err := tx.Bucket("b").NextSequence(); err != nil {
				return err
			}
			return errors.New("abort")
		})
		if err == nil {
			t.Fatal("Update succeeded, want abort")
		}
		MustView(t, db, func(tx *Tx) error {
			if got := tx.Bucket("b").Sequence(); got != before {
				t.Errorf("Sequence = %d, want %d", got, before)
			}
			return nil
		})
	})
}

func TestBucket_ForEach(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("b")
		if err != nil {
			return err
		}
		for _, k := range []string{"c", "a", "b"} {
			if err := b.Put([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		_, err = b.CreateBucketIfNotExists("d")
		return err
	})

	t.Run("in key order, nil value for nested buckets", func(t *testing.T) {
		var got []string
		MustView(t, db, func(tx *Tx) error {
			return tx.Bucket("b").ForEach(func(k, v []byte) error {
				if v == nil {
					got = append(got, string(k)+"/")
				} else {
					got = append(got, string(k)+"="+string(v))
				}
				return nil
			})
		})
		if want := []string{"a=va", "b=vb", "c=vc", "d/"}; !slices.Equal(got, want) {
			t.Errorf("ForEach = %v, want %v", got, want)
		}
	})

	t.Run("stops at the first error", func(t *testing.T) {
		stop := errors.New("stop")
		var n int
		err := db.View(func(tx *Tx) error {
			return tx.Bucket("b").ForEach(func(k, v []byte) error {
				n++
				return stop
			})
		})
		if !errors.Is(err, stop) {
			t.Errorf("err = %v, want stop", err)
		}
		if got, want := n, 1; got != want {
			t.Errorf("calls = %d, want %d", got, want)
		}
	})
}

func TestBucket_Stats(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("b")
		if err != nil {
			return err
		}
		for i := range 1000 {
			if err := b.Put(Key(uint64(i)), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	MustView(t, db, func(tx *Tx) error {
		if got, want := tx.Bucket("b").Stats(), 1000; got != want {
			t.Errorf("Stats = %d, want %d", got, want)
		}
		return nil
	})
}

func TestBucket_Bucket(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("outer")
		if err != nil {
			return err
		}
		in, err := b.CreateBucketIfNotExists("inner")
		if err != nil {
			return err
		}
		if err := in.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		again, err := b.CreateBucketIfNotExists("inner")
		if err != nil {
			return err
		}
		if got, want := again.Get([]byte("k")), []byte("v"); !bytes.Equal(got, want) {
			t.Errorf("CreateBucketIfNotExists on an existing bucket: Get = %q, want %q", got, want)
		}
		return nil
	})
	MustView(t, db, func(tx *Tx) error {
		outer := tx.Bucket("outer")
		if got := outer.Bucket("absent"); got != nil {
			t.Error("Bucket(absent) != nil")
		}
		if got, want := outer.Bucket("inner").Get([]byte("k")), []byte("v"); !bytes.Equal(got, want) {
			t.Errorf("nested Get = %q, want %q", got, want)
		}
		return nil
	})

	t.Run("delete", func(t *testing.T) {
		MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("outer").DeleteBucket("inner") })
		MustView(t, db, func(tx *Tx) error {
			if tx.Bucket("outer").Bucket("inner") != nil {
				t.Error("inner still there after DeleteBucket")
			}
			return nil
		})
		err := db.Update(func(tx *Tx) error { return tx.Bucket("outer").DeleteBucket("inner") })
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("DeleteBucket of an absent bucket = %v, want ErrNotFound", err)
		}
	})
}

func TestTx_Bucket(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustView(t, db, func(tx *Tx) error {
		if tx.Bucket("absent") != nil {
			t.Error("Bucket(absent) != nil")
		}
		return nil
	})
	mustBucket(t, db, "b")
	MustView(t, db, func(tx *Tx) error {
		if tx.Bucket("b") == nil {
			t.Error("Bucket(b) = nil after creating it")
		}
		return nil
	})
}

func TestTx_DeleteBucket(t *testing.T) {
	db := MustOpen(t, "", Options{})
	mustBucket(t, db, "b")
	MustUpdate(t, db, func(tx *Tx) error {
		if !tx.Writable() {
			t.Error("Writable() = false in Update")
		}
		return tx.DeleteBucket("b")
	})
	MustView(t, db, func(tx *Tx) error {
		if tx.Bucket("b") != nil {
			t.Error("bucket b still there")
		}
		return nil
	})
	err := db.Update(func(tx *Tx) error { return tx.DeleteBucket("b") })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	if err := db.Update(func(tx *Tx) error { _, err := tx.CreateBucketIfNotExists(""); return err }); err == nil {
		t.Error("CreateBucketIfNotExists(\"\") succeeded")
	}
}

func TestCursor(t *testing.T) {
	db := MustOpen(t, "", Options{})
	keys := []string{"apple", "apricot", "banana", "blueberry", "cherry"}
	MustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists("fruit")
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put([]byte(k), []byte(k+"!")); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("forward and backward", func(t *testing.T) {
		var fwd, back []string
		MustView(t, db, func(tx *Tx) error {
			c := tx.Bucket("fruit").Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if got, want := string(v), string(k)+"!"; got != want {
					t.Errorf("value of %q = %q, want %q", k, got, want)
				}
				fwd = append(fwd, string(k))
			}
			for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
				back = append(back, string(k))
			}
			return nil
		})
		if !slices.Equal(fwd, keys) {
			t.Errorf("forward = %v, want %v", fwd, keys)
		}
		want := slices.Clone(keys)
		slices.Reverse(want)
		if !slices.Equal(back, want) {
			t.Errorf("backward = %v, want %v", back, want)
		}
	})

	t.Run("seek prefix", func(t *testing.T) {
		for _, tt := range []struct {
			prefix string
			want   []string
		}{
			{"ap", []string{"apple", "apricot"}},
			{"b", []string{"banana", "blueberry"}},
			{"cherry", []string{"cherry"}},
			{"d", nil},
			{"a", []string{"apple", "apricot"}},
		} {
			t.Run(tt.prefix, func(t *testing.T) {
				var got []string
				MustView(t, db, func(tx *Tx) error {
					c := tx.Bucket("fruit").Cursor()
					p := []byte(tt.prefix)
					for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
						got = append(got, string(k))
					}
					return nil
				})
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			})
		}
	})

	t.Run("delete while walking", func(t *testing.T) {
		MustUpdate(t, db, func(tx *Tx) error {
			c := tx.Bucket("fruit").Cursor()
			for k, _ := c.Seek([]byte("b")); k != nil && k[0] == 'b'; k, _ = c.Seek([]byte("b")) {
				if err := c.Delete(); err != nil {
					return err
				}
			}
			return nil
		})
		var got []string
		MustView(t, db, func(tx *Tx) error {
			return tx.Bucket("fruit").ForEach(func(k, v []byte) error {
				got = append(got, string(k))
				return nil
			})
		})
		if want := []string{"apple", "apricot", "cherry"}; !slices.Equal(got, want) {
			t.Errorf("after deleting b*: %v, want %v", got, want)
		}
	})

	t.Run("delete in a read transaction", func(t *testing.T) {
		MustView(t, db, func(tx *Tx) error {
			c := tx.Bucket("fruit").Cursor()
			c.First()
			if err := c.Delete(); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Delete = %v, want ErrReadOnly", err)
			}
			return nil
		})
	})

	t.Run("empty bucket", func(t *testing.T) {
		mustBucket(t, db, "empty")
		MustView(t, db, func(tx *Tx) error {
			c := tx.Bucket("empty").Cursor()
			if k, v := c.First(); k != nil || v != nil {
				t.Errorf("First = %q, %q, want nil, nil", k, v)
			}
			if k, v := c.Last(); k != nil || v != nil {
				t.Errorf("Last = %q, %q, want nil, nil", k, v)
			}
			return nil
		})
	})
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		id   uint64
		want []byte
	}{
		{0, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{256, []byte{0, 0, 0, 0, 0, 0, 1, 0}},
		{math.MaxUint64, []byte{255, 255, 255, 255, 255, 255, 255, 255}},
	} {
		got := Key(tt.id)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("Key(%d) = %x, want %x", tt.id, got, tt.want)
		}
		if got, want := ID(got), tt.id; got != want {
			t.Errorf("ID(Key(%d)) = %d", want, got)
		}
	}
	if a, b := Key(255), Key(256); bytes.Compare(a, b) >= 0 {
		t.Errorf("Key(255) = %x sorts after Key(256) = %x", a, b)
	}
}

func TestID(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  []byte
		want uint64
	}{
		{"nil", nil, 0},
		{"short", []byte{1, 2, 3}, 0},
		{"long", make([]byte, 9), 0},
		{"eight bytes", []byte{0, 0, 0, 0, 0, 0, 0x12, 0x34}, 0x1234},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ID(tt.key); got != tt.want {
				t.Errorf("ID(%x) = %d, want %d", tt.key, got, tt.want)
			}
		})
	}
}

// TestBucket_SetFillPercent: a bucket written in ascending key order with its pages filled
// takes about its data's room in the file, where bbolt's default leaves the pages half empty.
// The file's size is its high-water mark, which Backup writes in full.
func TestBucket_SetFillPercent(t *testing.T) {
	size := func(fill float64) int64 {
		db := MustOpen(t, "", Options{})
		mustBucket(t, db, "log")
		value := bytes.Repeat([]byte("v"), 200)
		for range 40 {
			MustUpdate(t, db, func(tx *Tx) error {
				b := tx.Bucket("log")
				if fill > 0 {
					b.SetFillPercent(fill)
				}
				for range 100 {
					id, err := b.NextSequence()
					if err != nil {
						return err
					}
					if err := b.Put(Key(id), value); err != nil {
						return err
					}
				}
				return nil
			})
		}
		n, err := db.Backup(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	half, full := size(0), size(1)
	if float64(full) > 0.75*float64(half) {
		t.Errorf("file of 4000 ascending 200-byte values: %d bytes with SetFillPercent(1), %d without; want at most 3/4", full, half)
	}
	t.Logf("%d bytes with SetFillPercent(1), %d with bbolt's default", full, half)
}

// TestDB_Commits counts the Updates that committed, not those that failed.
func TestDB_Commits(t *testing.T) {
	db := MustOpen(t, "", Options{})
	mustBucket(t, db, "b")
	before := db.Commits()
	MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("b").Put([]byte("k"), []byte("v")) })
	_ = db.Update(func(tx *Tx) error { return errors.New("no") })
	if got := db.Commits() - before; got != 1 {
		t.Errorf("Commits grew by %d, want 1", got)
	}
}
