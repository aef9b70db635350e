package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

// lastPage pages through a list with Handle and returns the raw result of its last page (the
// first whose nextCursor is absent or "").
func lastPage(t *testing.T, s *Server, method, meta string) json.RawMessage {
	t.Helper()
	cursor := ""
	for range 20 {
		params := `{` + meta + `}`
		if cursor != "" {
			sep := ","
			if meta == "" {
				sep = ""
			}
			params = `{"cursor":"` + cursor + `"` + sep + meta + `}`
		}
		out := s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.Error != nil {
			t.Fatalf("%s: %s", method, out)
		}
		var page struct {
			NextCursor *string `json:"nextCursor"`
		}
		json.Unmarshal(resp.Result, &page)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return resp.Result
		}
		cursor = *page.NextCursor
	}
	t.Fatalf("%s: no last page in 20", method)
	return nil
}

func TestServer_SetEmptyLastCursor(t *testing.T) {
	f := MustOpenFixture(t) // pages of 2: every list but prompts has several
	lists := []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name  string
		on    bool
		meta  string
		empty bool // the last page says "nextCursor":""
	}{
		{"off, legacy", false, "", false},
		{"off, 2026-07-28", false, modernMeta, false},
		{"on, legacy", true, "", true},
		{"on, 2026-07-28", true, modernMeta, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.SetEmptyLastCursor(tc.on)
			for _, method := range lists {
				res := string(lastPage(t, f.Server, method, tc.meta))
				if got := strings.Contains(res, `"nextCursor":""`); got != tc.empty {
					t.Errorf("%s: last page %s; want nextCursor \"\" %v", method, res, tc.empty)
				}
				if !tc.empty && strings.Contains(res, `"nextCursor"`) {
					t.Errorf("%s: last page %s carries nextCursor", method, res)
				}
			}
		})
	}
	t.Run("pages before the last keep their cursor", func(t *testing.T) {
		f.SetEmptyLastCursor(true)
		out := string(f.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
		if !strings.Contains(out, `"nextCursor":"b2Zmc2V0OjI"`) {
			t.Errorf("first page %s", out)
		}
	})
	t.Run("safe for concurrent use", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				for j := range 50 {
					if i == 0 {
						f.SetEmptyLastCursor(j%2 == 0)
						continue
					}
					f.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`))
				}
			})
		}
		wg.Wait()
	})
}
