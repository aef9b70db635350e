package kv

import (
	"path/filepath"
	"testing"
)

// TestDB_Durability pins SECURITY.md ST-05: every commit is synced (bbolt's NoSync and
// NoGrowSync stay false), so an acknowledged write survives power loss.
func TestDB_Durability(t *testing.T) {
	db := MustOpen(t, filepath.Join(t.TempDir(), "db"), Options{})
	if db.bolt.NoSync || db.bolt.NoGrowSync || db.bolt.NoFreelistSync {
		t.Errorf("NoSync=%v NoGrowSync=%v NoFreelistSync=%v; want all false", db.bolt.NoSync, db.bolt.NoGrowSync, db.bolt.NoFreelistSync)
	}
}
