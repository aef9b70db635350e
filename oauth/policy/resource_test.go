package policy

import "testing"

func TestCanonicalResource_Table(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string // "" means an invalid_target error
	}{
		{"canonical", "https://mem.example/mcp", "https://mem.example/mcp"},
		{"uppercase scheme and host", "HTTPS://MEM.Example/mcp", "https://mem.example/mcp"},
		{"default port", "https://mem.example:443/mcp", "https://mem.example/mcp"},
		{"other port kept", "https://mem.example:8443/mcp", "https://mem.example:8443/mcp"},
		{"root slash dropped", "https://mem.example/", "https://mem.example"},
		{"no path", "https://mem.example", "https://mem.example"},
		{"default port and root slash", "https://mem.example:443/", "https://mem.example"},
		{"trailing slash on path kept", "https://mem.example/mcp/", "https://mem.example/mcp/"},
		{"path case kept", "https://mem.example/MCP", "https://mem.example/MCP"},
		{"query kept", "https://mem.example/mcp?t=1", "https://mem.example/mcp?t=1"},
		{"empty query dropped", "https://mem.example/mcp?", "https://mem.example/mcp"},
		{"loopback http", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"loopback http default port", "http://LOCALHOST:80/mcp", "http://localhost/mcp"},
		{"loopback ipv6", "http://[::1]:8080/mcp", "http://[::1]:8080/mcp"},
		{"http non-loopback", "http://mem.example/mcp", ""},
		{"fragment", "https://mem.example/mcp#x", ""},
		{"empty fragment", "https://mem.example/mcp#", ""},
		{"relative", "/mcp", ""},
		{"no scheme", "mem.example/mcp", ""},
		{"urn", "urn:example:mcp", ""},
		{"no host", "https:///mcp", ""},
		{"userinfo", "https://me@mem.example/mcp", ""},
		{"dot segment", "https://mem.example/a/../mcp", ""},
		{"empty port", "https://mem.example:/mcp", ""},
		{"bad escape", "https://mem.example/%zz", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalResource(tt.raw)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("CanonicalResource(%q) = %q, want error", tt.raw, got)
				}
				if c := CodeOf(err); c != CodeInvalidTarget {
					t.Errorf("code = %q, want %q", c, CodeInvalidTarget)
				}
				return
			}
			if err != nil {
				t.Fatalf("CanonicalResource(%q): %v", tt.raw, err)
			}
			if got != tt.want {
				t.Errorf("CanonicalResource(%q) = %q, want %q", tt.raw, got, tt.want)
			}
			again, err := CanonicalResource(got)
			if err != nil || again != got {
				t.Errorf("CanonicalResource(%q) = %q, %v; want it unchanged", got, again, err)
			}
		})
	}
}

func TestSameResource_Table(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://mem.example/mcp", "https://mem.example/mcp", true},
		{"https://mem.example/mcp", "HTTPS://Mem.Example:443/mcp", true},
		{"https://mem.example", "https://mem.example/", true},
		{"https://mem.example/mcp", "https://mem.example/mcp/", false},
		{"https://mem.example/mcp", "https://other.example/mcp", false},
		{"https://mem.example/mcp", "https://mem.example", false},
		{"https://mem.example/mcp", "http://mem.example/mcp", false},
		{"https://mem.example/mcp#a", "https://mem.example/mcp#a", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := SameResource(tt.a, tt.b); got != tt.want {
			t.Errorf("SameResource(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func FuzzCanonicalResource(f *testing.F) {
	for _, s := range []string{"https://mem.example/mcp", "HTTP://[::1]:80/", "https://a@b/#", "https://x:443"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CanonicalResource(raw)
		if err != nil {
			return
		}
		again, err := CanonicalResource(got)
		if err != nil || again != got {
			t.Fatalf("CanonicalResource(%q) = %q, then %q, %v", raw, got, again, err)
		}
	})
}
