package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestRun_Export(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	a := MustOpen(t, cfg)
	keep := mustOK(t, a, "remember", map[string]any{"text": "Keeps bees", "tags": "hobby", "importance": 0.8})
	gone := mustOK(t, a, "remember", map[string]any{"text": "Parks on level 3"})
	mustOK(t, a, "forget", map[string]any{"id": id(gone), "reason": "moved"})
	want := mustOK(t, a, "export_memories", map[string]any{})["memories"].([]any)
	a.Close()

	getenv := func(k string) string { return map[string]string{"OWNSONA_DB": cfg.DB}[k] }
	for _, tc := range []struct {
		args []string
		ids  []uint64
	}{
		{[]string{"export"}, []uint64{id(keep), id(gone)}},
		{[]string{"export", "--active-only"}, []uint64{id(keep)}},
	} {
		var out bytes.Buffer
		if err := Run(context.Background(), tc.args, getenv, nil, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var head struct {
			Format  string `json:"format"`
			Version int    `json:"version"`
			Count   int    `json:"count"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Format != "ownsona-export" || head.Version != 1 || head.Count != len(tc.ids) {
			t.Fatalf("%v: header %q (%v)", tc.args, lines[0], err)
		}
		if len(lines) != 1+len(tc.ids) {
			t.Fatalf("%v: %d lines, want %d", tc.args, len(lines), 1+len(tc.ids))
		}
		for i, line := range lines[1:] {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || uint64(m["id"].(float64)) != tc.ids[i] {
				t.Errorf("%v: line %d = %s", tc.args, i+1, line)
			}
			// Every field the tool shows is in the line, tombstones included.
			wantJSON, _ := json.Marshal(want[i])
			gotJSON, _ := json.Marshal(m)
			if string(wantJSON) != string(gotJSON) {
				t.Errorf("%v: line %d = %s, export_memories shows %s", tc.args, i+1, gotJSON, wantJSON)
			}
		}
	}
}
