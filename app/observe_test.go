package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ownsona/ownsona/app/internal/s3test"
)

const testMetricsToken = "metrics-token-0123456789abcdef"

// scrapeMetrics reads /metrics over the real listener from this machine and parses it with
// Prometheus' own parser.
func scrapeMetrics(t *testing.T, a *App, header ...string) (int, []byte, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+a.Addr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, body, nil
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return res.StatusCode, body, fams
}

// sample is the value of fam's series whose labels include want; ok is false when none has.
func sample(fam *dto.MetricFamily, want map[string]string) (v float64, ok bool) {
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestApp_Metrics drives the real server with the MCP Go SDK client and reads /metrics as
// Prometheus would: off by default; on, the counters move with the calls, and nothing a client
// sent or holds (memory text, tokens) is in them (SECURITY.md MX-02, proposed).
func TestApp_Metrics(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		a, _ := connectSDK(t, "")
		if code, _, _ := scrapeMetrics(t, a); code != http.StatusNotFound {
			t.Errorf("/metrics with metrics off = %d, want 404", code)
		}
	})

	cfg := testConfig(t, nil)
	cfg.Metrics, cfg.MetricsToken = true, testMetricsToken
	cfg.BackupDir = t.TempDir() // with one scheduled backup in it, as backupNow names them
	if err := os.WriteFile(filepath.Join(cfg.BackupDir, "ownsona-20261122T030000Z.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, s := connectSDKWith(t, cfg, "")
	const marker = "zebra-marker-text likes green tea"
	sdkPayload(t, s, "remember", map[string]any{"text": marker})
	sdkPayload(t, s, "recall", map[string]any{"query": "green tea"})
	sdkPayload(t, s, "recall", map[string]any{"query": "zebra"})
	forgotten := sdkPayload(t, s, "remember", map[string]any{"text": "a memory to forget soon"})
	if res := callRaw(t, s, "forget", map[string]any{"memory": forgotten["memory_id"]}); !res.IsError {
		t.Fatal("forget without its id succeeded")
	}
	sdkPayload(t, s, "forget", map[string]any{"id": forgotten["memory_id"]})
	r := httptest.NewRequest("POST", "http://127.0.0.1/console/signin", nil)
	if err := a.Auth().CheckOwner(httptest.NewRecorder(), r, "owner", "not the password"); err == nil {
		t.Fatal("CheckOwner accepted a wrong password")
	}

	code, body, fams := scrapeMetrics(t, a)
	if code != http.StatusOK {
		t.Fatalf("/metrics from this machine = %d, want 200: %s", code, body)
	}
	tests := []struct {
		name   string
		family string
		labels map[string]string
		want   float64
	}{
		{"remember", "ownsona_tool_calls_total", map[string]string{"tool": "remember", "outcome": "ok"}, 2},
		{"recall", "ownsona_tool_calls_total", map[string]string{"tool": "recall", "outcome": "ok"}, 2},
		{"forget", "ownsona_tool_calls_total", map[string]string{"tool": "forget", "outcome": "ok"}, 1},
		{"forget refused", "ownsona_tool_calls_total", map[string]string{"tool": "forget", "outcome": "tool_error"}, 1},
		{"recall latency", "ownsona_tool_call_duration_seconds", map[string]string{"tool": "recall"}, 2},
		{"tools/call requests", "ownsona_mcp_requests_total", map[string]string{"method": "tools/call", "outcome": "ok"}, 5},
		{"active memories", "ownsona_memories", map[string]string{"state": "active"}, 1},
		{"forgotten memories", "ownsona_memories", map[string]string{"state": "forgotten"}, 1},
		{"index", "ownsona_index_building", nil, 0},
		{"last local backup", "ownsona_backup_last_success_timestamp_seconds", map[string]string{"target": "local"},
			float64(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Unix())},
		{"sign-in failure", "ownsona_sign_ins_total", map[string]string{"result": "wrong_credentials"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sample(fams[tt.family], tt.labels)
			if !ok || got != tt.want {
				t.Errorf("%s%v = %v (found %v), want %v", tt.family, tt.labels, got, ok, tt.want)
			}
		})
	}
	t.Run("http requests", func(t *testing.T) {
		if got, ok := sample(fams["ownsona_http_requests_total"], map[string]string{"route": "mcp", "code": "200"}); !ok || got < 5 {
			t.Errorf("ownsona_http_requests_total{route=mcp,code=200} = %v, want at least the 5 calls", got)
		}
	})
	t.Run("no secrets", func(t *testing.T) {
		for _, s := range []string{"zebra", "green tea", testMetricsToken, patFor(t, a), "go-sdk-test", testPassword} {
			if bytes.Contains(body, []byte(s)) {
				t.Errorf("/metrics holds %q", s)
			}
		}
	})

	// Who may read them (SECURITY.md MX-01, proposed): the peer address decides, not a header.
	for _, tt := range []struct {
		name    string
		remote  string
		headers map[string]string
		want    int
	}{
		{"another machine without the token", "192.0.2.7:4000", nil, http.StatusUnauthorized},
		{"another machine claiming to be loopback", "192.0.2.7:4000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, http.StatusUnauthorized},
		{"a proxy on this machine", "127.0.0.1:4000", map[string]string{"X-Forwarded-For": "192.0.2.7"}, http.StatusUnauthorized},
		{"another machine with the token", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer " + testMetricsToken}, http.StatusOK},
		{"another machine with an MCP token", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer " + patFor(t, a)}, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil)
			r.RemoteAddr = tt.remote
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, r)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			if rec.Code == http.StatusOK && !strings.Contains(rec.Body.String(), "ownsona_tool_calls_total") {
				t.Errorf("200 without the tool counters:\n%s", rec.Body)
			}
		})
	}
	t.Run("refusals counted, and what the dashboard reads", func(t *testing.T) {
		_, _, fams := scrapeMetrics(t, a)
		if got, _ := sample(fams["ownsona_http_refusals_total"], map[string]string{"route": "metrics", "reason": "unauthorized"}); got != 4 {
			t.Errorf("ownsona_http_refusals_total{route=metrics,reason=unauthorized} = %v, want 4", got)
		}
		// The dashboard reads only families that exist, once every kind has been counted.
		dash := readDoc(t, "docs/grafana-dashboard.json")
		for _, name := range regexp.MustCompile(`ownsona_[a-z_]+`).FindAllString(dash, -1) {
			if fams[strings.TrimSuffix(name, "_bucket")] == nil {
				t.Errorf("docs/grafana-dashboard.json reads %s, which /metrics does not have", name)
			}
		}
	})
}

// TestApp_MetricsNoToken: without a token, a scraper on another machine is refused with 403
// whatever it sends.
func TestApp_MetricsNoToken(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Metrics = true
	a := MustOpen(t, cfg)
	r := httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil)
	r.RemoteAddr = "192.0.2.7:4000"
	r.Header.Set("Authorization", "Bearer "+testMetricsToken)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden {
		t.Errorf("status %d, want 403", rec.Code)
	}
}

// BenchmarkApp_Metrics is the cost of the metrics on one request: a tools/call of
// count_memories through the whole HTTP handler (token check, rate limit, audit log, mcp),
// with metrics off and on.
func BenchmarkApp_Metrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(b, nil)
			cfg.Metrics = on
			a := MustOpen(b, cfg)
			tok := patFor(b, a)
			h := a.Handler()
			const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_memories","arguments":{}}}`
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+tok)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// TestApp_MetricsOffsiteFailure: a failed upload keeps the local copy and /metrics says both,
// the local copy made and the upload failed, with the age of neither hiding the failure.
func TestApp_MetricsOffsiteFailure(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Metrics, cfg.MetricsToken = true, testMetricsToken
	cfg.BackupDir = filepath.Join(t.TempDir(), "backups")
	cfg.BackupS3, cfg.BackupS3Endpoint, cfg.BackupS3Region = "s3://backups/pi", s3test.DownAddr(t), "us-east-1"
	cfg.BackupS3AccessKeyID, cfg.BackupS3SecretAccessKey = "ownsona-access", "ownsona-secret-0cc175b9c0f1b6a8"
	a, _ := connectSDKWith(t, cfg, "")
	if _, err := a.backupNow(); err == nil {
		t.Fatal("backupNow to a server that is down succeeded")
	}
	_, body, fams := scrapeMetrics(t, a)
	for _, tt := range []struct {
		target string
		want   float64
	}{{"local", 1}, {"offsite", 0}} {
		if got, ok := sample(fams["ownsona_backup_last_ok"], map[string]string{"target": tt.target}); !ok || got != tt.want {
			t.Errorf("ownsona_backup_last_ok{target=%q} = %v (found %v), want %v", tt.target, got, ok, tt.want)
		}
	}
	if got, ok := sample(fams["ownsona_backup_last_success_timestamp_seconds"], map[string]string{"target": "local"}); !ok || got == 0 {
		t.Errorf("the local copy's time = %v (found %v), want it set", got, ok)
	}
	if bytes.Contains(body, []byte(cfg.BackupS3SecretAccessKey)) {
		t.Error("/metrics holds the secret key")
	}
}
