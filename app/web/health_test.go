package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ownsona/ownsona/app/web"
)

// TestServer_ServerCardName: the server card's name is the public host's labels reversed for a
// domain name, and the address itself for an IP address, v4 or v6 (never its octets reversed).
func TestServer_ServerCardName(t *testing.T) {
	for _, tc := range []struct{ publicURL, want string }{
		{"https://mem.example.com", "com.example.mem/mcp"},
		{"https://192.0.2.7", "192.0.2.7/mcp"},
		{"https://198.51.100.20:8443", "198.51.100.20/mcp"},
		{"https://[2001:db8::1]", "2001:db8::1/mcp"},
		{"http://127.0.0.1:8080", "127.0.0.1/mcp"},
		{"http://localhost:8080", "localhost/mcp"},
	} {
		t.Run(tc.publicURL, func(t *testing.T) {
			f := MustOpenServer(t, func(c *web.Config) { c.PublicURL = tc.publicURL })
			w := httptest.NewRecorder()
			f.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.publicURL+"/.well-known/mcp/server-card.json", nil))
			var card struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &card); w.Code != http.StatusOK || err != nil || card.Name != tc.want {
				t.Errorf("%d name %q (%v), want %q: %s", w.Code, card.Name, err, tc.want, w.Body)
			}
		})
	}
}
