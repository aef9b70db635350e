//go:build linux

package kv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDB_ReleasePages: once every record has been read, the file's pages are resident in the
// process (its mapping's Rss in /proc/self/smaps); ReleasePages takes them out, and every
// record still reads back the same.
func TestDB_ReleasePages(t *testing.T) {
	db := MustOpen(t, "", Options{})
	mustBucket(t, db, "b")
	value := bytes.Repeat([]byte("v"), 1000)
	MustUpdate(t, db, func(tx *Tx) error {
		for i := range 4000 {
			if err := tx.Bucket("b").Put(Key(uint64(i+1)), append(value, fmt.Sprint(i)...)); err != nil {
				return err
			}
		}
		return nil
	})
	readAll := func() {
		n := 0
		MustView(t, db, func(tx *Tx) error {
			return tx.Bucket("b").ForEach(func(k, v []byte) error {
				if want := append(value, fmt.Sprint(ID(k)-1)...); !bytes.Equal(v, want) {
					t.Fatalf("record %d changed", ID(k))
				}
				n++
				return nil
			})
		})
		if n != 4000 {
			t.Fatalf("read %d records, want 4000", n)
		}
	}
	readAll()
	before := mappedRSS(t, db.Path())
	if before < 2<<20 {
		t.Fatalf("the file's mapping holds %d bytes after reading 4 MB of records; want them resident", before)
	}
	if err := db.ReleasePages(); err != nil {
		t.Fatal(err)
	}
	if after := mappedRSS(t, db.Path()); after > before/10 {
		t.Errorf("the file's mapping holds %d bytes after ReleasePages, %d before; want almost none", after, before)
	}
	readAll()
	MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("b").Put(Key(5000), value) })
	MustView(t, db, func(tx *Tx) error {
		if !bytes.Equal(tx.Bucket("b").Get(Key(5000)), value) {
			t.Error("a write after ReleasePages does not read back")
		}
		return nil
	})
}

// mappedRSS sums the resident bytes of this process's mappings of path.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps here")
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			total += kb << 10
		}
	}
	return total
}
