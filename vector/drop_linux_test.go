package vector

import (
	"bufio"
	"crypto/sha256"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestDropPages reads the builtin asset (all of it resident), drops its pages and checks that
// the mapping holding it lost about the asset's size of resident memory, and that the asset
// then reads back unchanged, from the executable.
func TestDropPages(t *testing.T) {
	sum := sha256.Sum256(builtinAsset) // reads every page
	before := residentAround(t, builtinAsset)
	dropPages(builtinAsset)
	after := residentAround(t, builtinAsset)
	page := os.Getpagesize()
	if want := int64(len(builtinAsset) - 2*page); before-after < want {
		t.Errorf("the mapping holding the asset kept %d of %d resident bytes; want at least %d (the asset's whole pages) dropped", after, before, want)
	}
	if sha256.Sum256(builtinAsset) != sum {
		t.Fatal("the asset reads back changed after its pages were dropped")
	}
	if _, err := decodeGlove(builtinAsset); err != nil {
		t.Fatalf("the asset does not decode after its pages were dropped: %v", err)
	}
	dropPages(nil)
	dropPages(builtinAsset[:1]) // no whole page: nothing to do
}

// residentAround returns the resident bytes (/proc/self/smaps, Rss) of the mapping that holds b.
func residentAround(t *testing.T, b []byte) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps here")
	}
	defer f.Close()
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping of /proc/self/smaps holds address %#x", addr)
	return 0
}

// mappingRange parses the address range of an smaps header line ("lo-hi perms ...").
func mappingRange(line string) (lo, hi uint64, ok bool) {
	r, _, found := strings.Cut(line, " ")
	a, z, dash := strings.Cut(r, "-")
	if !found || !dash || strings.Contains(r, ":") {
		return 0, 0, false
	}
	var err1, err2 error
	lo, err1 = strconv.ParseUint(a, 16, 64)
	hi, err2 = strconv.ParseUint(z, 16, 64)
	return lo, hi, err1 == nil && err2 == nil
}
