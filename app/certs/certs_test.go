package certs

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestNew_invalid(t *testing.T) {
	db := kvtest.Open(t)
	for _, tt := range []struct {
		name string
		cfg  Config
		want string // in the error
	}{
		{"unknown mode", Config{Mode: "tls"}, `"tls"`},
		{"acme without db", Config{Mode: ModeACME, Names: []string{"a.example"}}, "database"},
		{"acme without names", Config{Mode: ModeACME, DB: db}, "names"},
		{"acme wildcard", Config{Mode: ModeACME, DB: db, Names: []string{"*.example.com"}}, "*.example.com"},
		{"acme bad name", Config{Mode: ModeACME, DB: db, Names: []string{"a b"}}, `"a b"`},
		{"acme http directory", Config{Mode: ModeACME, DB: db, Names: []string{"a.example"}, ACMEDirectory: "http://ca/dir"}, "https"},
		{"acme bad port", Config{Mode: ModeACME, DB: db, Names: []string{"a.example"}, ChallengeHTTPPort: 70000}, "port"},
		{"local without db", Config{Mode: ModeLocal}, "database"},
		{"local bad name", Config{Mode: ModeLocal, DB: db, Names: []string{"mem/x"}}, `"mem/x"`},
		{"files without key", Config{Mode: ModeFiles, CertFile: "c.pem"}, "key"},
		{"https port", Config{HTTPSPort: -1}, "port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.cfg)
			if err == nil {
				m.Close()
				t.Fatal("got nil error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestManager_TLSConfig(t *testing.T) {
	db := kvtest.Open(t)
	for _, tt := range []struct {
		cfg   Config
		nil   bool
		proto []string
	}{
		{Config{}, true, nil},
		{Config{Mode: ModeOff}, true, nil},
		{Config{Mode: ModeLocal, DB: db}, false, []string{"h2", "http/1.1"}},
		{Config{Mode: ModeFiles, CertFile: "c", KeyFile: "k"}, false, []string{"h2", "http/1.1"}},
		{Config{Mode: ModeACME, DB: db, Names: []string{"a.example"}}, false, []string{"h2", "http/1.1", "acme-tls/1"}},
	} {
		t.Run(string(tt.cfg.Mode), func(t *testing.T) {
			m, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			got := m.TLSConfig()
			if (got == nil) != tt.nil {
				t.Fatalf("got %v, want nil: %v", got, tt.nil)
			}
			if got == nil {
				return
			}
			if got.MinVersion != tls.VersionTLS12 || got.GetCertificate == nil || !slices.Equal(got.NextProtos, tt.proto) {
				t.Errorf("got MinVersion %x, NextProtos %q; want %x, %q and a GetCertificate",
					got.MinVersion, got.NextProtos, tls.VersionTLS12, tt.proto)
			}
		})
	}
}

func TestManager_HTTPHandler(t *testing.T) {
	db := kvtest.Open(t)
	for _, tt := range []struct {
		name      string
		httpsPort int
		method    string
		host      string
		target    string
		code      int
		location  string
	}{
		{"get", 0, "GET", "mem.example.com", "/mcp?x=1&y=%2F", 308, "https://mem.example.com/mcp?x=1&y=%2F"},
		{"head", 443, "HEAD", "mem.example.com", "/", 308, "https://mem.example.com/"},
		{"port dropped", 0, "GET", "mem.example.com:80", "/a", 308, "https://mem.example.com/a"},
		{"https port", 8443, "GET", "mem.example.com:8080", "/a", 308, "https://mem.example.com:8443/a"},
		{"loopback ipv4", 0, "GET", "127.0.0.1", "/", 308, "https://127.0.0.1/"},
		{"localhost", 0, "GET", "localhost:80", "/", 308, "https://localhost/"},
		{"name in upper case", 0, "GET", "MEM.example.com", "/", 308, "https://MEM.example.com/"},
		{"another name", 0, "GET", "evil.example", "/", 421, ""},
		{"an address not configured", 0, "GET", "192.168.1.7", "/", 421, ""},
		{"ipv6", 0, "GET", "[::1]:80", "/", 308, "https://[::1]/"},
		{"ipv6 with port", 8443, "GET", "[::1]", "/", 308, "https://[::1]:8443/"},
		{"escaped path", 0, "GET", "mem.example.com", "/a%2Fb", 308, "https://mem.example.com/a%2Fb"},
		{"double slash", 0, "GET", "mem.example.com", "//evil.example/", 308, "https://mem.example.com//evil.example/"},
		{"acme path without challenge", 0, "GET", "mem.example.com", "/.well-known/acme-challenge/abc", 308, "https://mem.example.com/.well-known/acme-challenge/abc"},
		{"post", 0, "POST", "mem.example.com", "/mcp", 400, ""},
		{"delete", 0, "DELETE", "mem.example.com", "/mcp", 400, ""},
		{"bad host", 0, "GET", "evil.example/x", "/", 400, ""},
		{"userinfo host", 0, "GET", "me@evil.example", "/", 400, ""},
		{"no host", 0, "GET", "", "/", 400, ""},
	} {
		for _, mode := range []Mode{ModeLocal, ModeACME} {
			t.Run(tt.name+" "+string(mode), func(t *testing.T) {
				m, err := New(Config{Mode: mode, DB: db, Names: []string{"mem.example.com"}, HTTPSPort: tt.httpsPort})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				r := httptest.NewRequest(tt.method, "http://x"+tt.target, nil)
				r.Host = tt.host
				w := httptest.NewRecorder()
				m.HTTPHandler().ServeHTTP(w, r)
				if got := w.Code; got != tt.code {
					t.Errorf("status: got %d, want %d", got, tt.code)
				}
				if got := w.Header().Get("Location"); got != tt.location {
					t.Errorf("Location: got %q, want %q", got, tt.location)
				}
			})
		}
	}
}

func TestZapLogger(t *testing.T) {
	t.Run("zero logger is silent", func(t *testing.T) {
		if zapLogger(zerolog.Logger{}).Core().Enabled(zapcore.ErrorLevel) {
			t.Error("the zero zerolog.Logger gave an enabled zap logger")
		}
	})
	t.Run("levels and fields", func(t *testing.T) {
		var buf bytes.Buffer
		z := zapLogger(zerolog.New(&buf).Level(zerolog.InfoLevel)).Named("obtain").With(zap.String("identifier", "a.example"))
		z.Debug("hidden")
		z.Info("certificate obtained", zap.Int("attempt", 2), zap.Error(errors.New("boom")))
		z.DPanic("not a panic")
		got := strings.Split(strings.TrimSpace(buf.String()), "\n")
		want := []string{
			`{"level":"info","logger":"obtain","attempt":2,"error":"boom","identifier":"a.example","message":"certificate obtained"}`,
			`{"level":"error","logger":"obtain","identifier":"a.example","message":"not a panic"}`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
