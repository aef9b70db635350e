package policy

import (
	"net/netip"
	"testing"
)

func TestIsLoopbackHost_Table(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST", true},
		{"localhost.", true},
		{"app.localhost", true},
		{"app.localhost.", true},
		{"127.0.0.1", true},
		{"127.1", true},
		{"2130706433", true},
		{"0x7f.1", true},
		{"0x7f000001", true},
		{"0177.0.0.1", true},
		{"127.0.0.1.", true},
		{"127.255.255.254", true},
		{"%31%32%37.0.0.1", true},
		{"%6c%6f%63%61%6c%68%6f%73%74", true},
		{"::1", true},
		{"[::1]", true},
		{"[0:0:0:0:0:0:0:1]", true},
		{"::ffff:127.0.0.1", true},
		{"[::ffff:7f00:1]", true},
		{"0.0.0.0", true},
		{"0", true},
		{"0x", true},
		{"::", true},

		{"", false},
		{"claude.ai", false},
		{"localhost.evil.example", false},
		{"localhostx", false},
		{"evillocalhost", false},
		{"localhost..", false},
		{"127.0.0.1.nip.io", false},
		{"128.0.0.1", false},
		{"126.255.255.255", false},
		{"192.0.2.1", false},
		{"256.0.0.1", false},
		{"1.2.3.4.5", false},
		{"4294967296", false},
		{"08", false},
		{"127.0.0.1:80", false},
		{"[::1", false},
		{"::2", false},
		{"[::ffff:192.0.2.1]", false},
		{"fe80::1", false},
		{"ｌｏｃａｌｈｏｓｔ", false}, // UTS #46 maps it to localhost; see IsLoopbackHost
		{"local host", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := IsLoopbackHost(tt.host); got != tt.want {
				t.Errorf("IsLoopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

// TestParseBrowserHost_Table pins the URL Standard's host parser for http
// and https, mostly with cases from the web-platform-tests
// (url/resources/urltestdata.json), the rest worked out from the standard.
func TestParseBrowserHost_Table(t *testing.T) {
	tests := []struct {
		host, want string // want "" means a browser refuses the host
	}{
		{"example.com", "example.com"},
		{"EXAMPLE.com", "example.com"},
		{"example.com.", "example.com."},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"0x7f.0.0.0x7f", "127.0.0.127"},
		{"0x7f.0.0.0x7g", "0x7f.0.0.0x7g"},
		{"192.168.257", "192.168.1.1"},
		{"192.168.0.257", ""},
		{"192.168.0x100", "192.168.1.0"},
		{"0xc0.0250.01", "192.168.0.1"},
		{"%30%78%63%30%2e%30%32%35%30.01", "192.168.0.1"},
		{"%30%78%63%30%2e%30%32%35%30.01%2e", "192.168.0.1"},
		{"4294967295", "255.255.255.255"},
		{"0xffffffff", "255.255.255.255"},
		{"1.2.3.4.", "1.2.3.4"},
		{"0x", "0.0.0.0"},
		{"0x.0x.0", "0.0.0.0"},
		{"00", "0.0.0.0"},
		{"1.0x", "1.0.0.0"},
		{"4294967296", ""},
		{"0xffffffff1", ""},
		{"10000000000", ""},
		{"0999999999999999999", ""},
		{"256.256.256.256", ""},
		{"256.256.256.256.256", ""},
		{"0x100.2.3.4", ""},
		{"1.2.3.08", ""},
		{"1.2.3.09", ""},
		{"09.2.3.4", ""},
		{"1.2.3.4.5", ""},
		{"foo.09", ""},
		{"foo.0x4", ""},
		{"foo.09.", ""},
		{"foo.0x", ""},
		{"foo.0XFfFfFfFfFfFfFfFfFfAcE123", ""},
		{"foo.09..", "foo.09.."},
		{"1.2.3.4.5.", ""},
		{"0..0x300", ""},
		{"0..0x300.", ""},
		{"a%2fb", ""},
		{"a%25b", ""},
		{"", ""},
		{"[::127.0.0.1]", "[::7f00:1]"},
		{"[0:0:0:0:0:0:13.1.68.3]", "[::d01:4403]"},
		{"[::ffff:127.0.0.1]", "[::ffff:7f00:1]"},
		{"[1:0::]", "[1::]"},
		{"[0::]", "[::]"},
		{"[0:0::0:0:8]", "[::8]"},
		{"[2001:DB8:0:0:1:0:0:1]", "[2001:db8::1:0:0:1]"},
		{"[2001:db8:0:1:1:1:1:1]", "[2001:db8:0:1:1:1:1:1]"},
		{"[1:0:0:2:0:0:0:3]", "[1:0:0:2::3]"},
		{"[::127.0.0.1.]", ""},
		{"[::1.2.3.]", ""},
		{"[1.2.3.4]", ""},
		{"[fe80::1%25eth0]", ""},
		{"[::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, addr, reason := parseBrowserHost(tt.host)
			if tt.want == "" {
				if reason == "" {
					t.Errorf("parseBrowserHost(%q) = %q, want refusal", tt.host, got)
				}
				return
			}
			if reason != "" || got != tt.want {
				t.Errorf("parseBrowserHost(%q) = %q, %q, want %q", tt.host, got, reason, tt.want)
			}
			if _, err := netip.ParseAddr(trimBrackets(tt.want)); (err == nil) != addr.IsValid() {
				t.Errorf("parseBrowserHost(%q) address = %v, want one only for an IP literal", tt.host, addr)
			}
		})
	}
}

func trimBrackets(s string) string {
	if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

// FuzzIsLoopbackHost checks parseBrowserHost against the standard library:
// whatever it reads as an IP address is one netip reads the same way from
// the serialization, a canonical host parses to itself, and IsLoopbackHost
// never panics.
func FuzzIsLoopbackHost(f *testing.F) {
	for _, s := range []string{"localhost", "localhost.", "127.1", "2130706433", "0x7f.1", "0177.0.0.1",
		"[::1]", "::ffff:127.0.0.1", "[0:0::1]", "claude.ai", "foo.09", "%31.1", "0x", "1.2.3.4."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		IsLoopbackHost(host)
		got, addr, reason := parseBrowserHost(host)
		if reason != "" {
			return
		}
		if addr.IsValid() {
			a, err := netip.ParseAddr(trimBrackets(got))
			if err != nil || a.Unmap() != addr.Unmap() {
				t.Fatalf("parseBrowserHost(%q) = %q, %v; netip reads %v, %v", host, got, addr, a, err)
			}
			if addr.Is4() && got != a.String() {
				t.Fatalf("parseBrowserHost(%q) = %q, want dotted decimal %q", host, got, a.String())
			}
		}
		again, addr2, reason2 := parseBrowserHost(got)
		if reason2 != "" || again != got || addr2 != addr {
			t.Fatalf("parseBrowserHost(%q) = %q, which parses to %q, %v, %q", host, got, again, addr2, reason2)
		}
	})
}
