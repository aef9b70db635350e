package metrics_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ownsona/ownsona/app/metrics"
)

// parse reads an exposition with Prometheus' own parser, failing the test on any error.
func parse(tb testing.TB, text []byte) map[string]*dto.MetricFamily {
	tb.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		tb.Fatalf("parse the exposition: %v\n%s", err, text)
	}
	return fams
}

// value is the value of the series of fam whose labels include want; ok is false when none has.
func value(fam *dto.MetricFamily, want map[string]string) (v float64, ok bool) {
	if fam == nil {
		return 0, false
	}
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
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
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func scrape(tb testing.TB, m *metrics.Metrics) map[string]*dto.MetricFamily {
	tb.Helper()
	var buf bytes.Buffer
	m.Write(&buf)
	return parse(tb, buf.Bytes())
}

func TestMetrics_Call(t *testing.T) {
	m := metrics.New(metrics.Config{Tools: []string{"recall", "remember"}})
	m.Call(metrics.Call{Method: "tools/call", Tool: "recall", Outcome: "ok", Duration: 3 * time.Millisecond})
	m.Call(metrics.Call{Method: "tools/call", Tool: "recall", Outcome: "ok", Duration: 2 * time.Second})
	m.Call(metrics.Call{Method: "tools/call", Tool: "remember", Outcome: "tool_error"})
	// Names outside the fixed sets never become labels (SECURITY.md RS-14: nothing a client
	// sends is echoed; the series stay bounded).
	m.Call(metrics.Call{Method: "tools/call", Tool: "my secret text\"}", Outcome: "ok"})
	m.Call(metrics.Call{Method: "x/evil", Outcome: "strange"})
	m.Call(metrics.Call{Method: "ping", Outcome: "ok"})
	fams := scrape(t, m)

	tests := []struct {
		name   string
		family string
		labels map[string]string
		want   float64
	}{
		{"recall ok", "ownsona_tool_calls_total", map[string]string{"tool": "recall", "outcome": "ok"}, 2},
		{"remember tool_error", "ownsona_tool_calls_total", map[string]string{"tool": "remember", "outcome": "tool_error"}, 1},
		{"unknown tool", "ownsona_tool_calls_total", map[string]string{"tool": "other", "outcome": "ok"}, 1},
		{"tools/call by method", "ownsona_mcp_requests_total", map[string]string{"method": "tools/call", "outcome": "ok"}, 3},
		{"unknown method and outcome", "ownsona_mcp_requests_total", map[string]string{"method": "other", "outcome": "other"}, 1},
		{"ping", "ownsona_mcp_requests_total", map[string]string{"method": "ping", "outcome": "ok"}, 1},
		{"recall latency count", "ownsona_tool_call_duration_seconds", map[string]string{"tool": "recall"}, 2},
		{"ping latency count", "ownsona_mcp_request_duration_seconds", map[string]string{"method": "ping"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := value(fams[tt.family], tt.labels)
			if !ok || got != tt.want {
				t.Errorf("%s%v = %v (found %v), want %v", tt.family, tt.labels, got, ok, tt.want)
			}
		})
	}
	t.Run("standard buckets", func(t *testing.T) {
		fam := fams["ownsona_tool_call_duration_seconds"]
		if fam.GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("type %v, want histogram", fam.GetType())
		}
		for _, mt := range fam.Metric {
			for _, b := range mt.Histogram.Bucket {
				if b.GetUpperBound() == 0.005 && b.GetCumulativeCount() != 1 {
					t.Errorf("bucket le=0.005 holds %d, want 1 (the 3 ms call)", b.GetCumulativeCount())
				}
			}
		}
	})
	t.Run("no client text", func(t *testing.T) {
		var buf bytes.Buffer
		m.Write(&buf)
		for _, s := range []string{"secret", "evil", "strange"} {
			if strings.Contains(buf.String(), s) {
				t.Errorf("the exposition holds %q", s)
			}
		}
	})
}

func TestMetrics_HTTP(t *testing.T) {
	m := metrics.New(metrics.Config{})
	m.HTTP("mcp", 200)
	m.HTTP("mcp", 401)
	m.HTTP("mcp", 401)
	m.HTTP("oauth", 429)
	m.HTTP("console", 403)
	m.HTTP("/some/path", 404)
	m.HTTP("upload", 413)
	m.HTTP("mcp", 99999)
	m.SignIn("wrong_credentials")
	m.SignIn("ok")
	m.SignIn("bogus")
	fams := scrape(t, m)
	tests := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"ownsona_http_requests_total", map[string]string{"route": "mcp", "code": "200"}, 1},
		{"ownsona_http_requests_total", map[string]string{"route": "mcp", "code": "401"}, 2},
		{"ownsona_http_requests_total", map[string]string{"route": "other", "code": "404"}, 1},
		{"ownsona_http_requests_total", map[string]string{"route": "mcp", "code": "other"}, 1},
		{"ownsona_http_refusals_total", map[string]string{"route": "mcp", "reason": "unauthorized"}, 2},
		{"ownsona_http_refusals_total", map[string]string{"route": "oauth", "reason": "rate_limited"}, 1},
		{"ownsona_http_refusals_total", map[string]string{"route": "console", "reason": "forbidden"}, 1},
		{"ownsona_http_refusals_total", map[string]string{"route": "upload", "reason": "too_large"}, 1},
		{"ownsona_sign_ins_total", map[string]string{"result": "wrong_credentials"}, 1},
		{"ownsona_sign_ins_total", map[string]string{"result": "ok"}, 1},
		{"ownsona_sign_ins_total", map[string]string{"result": "other"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.family+labelString(tt.labels), func(t *testing.T) {
			got, ok := value(fams[tt.family], tt.labels)
			if !ok || got != tt.want {
				t.Errorf("got %v (found %v), want %v", got, ok, tt.want)
			}
		})
	}
	t.Run("404 is no refusal", func(t *testing.T) {
		if _, ok := value(fams["ownsona_http_refusals_total"], map[string]string{"route": "other"}); ok {
			t.Error("a 404 counted as a refusal")
		}
	})
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range []string{"route", "code", "reason", "result"} {
		if v, ok := l[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestMetrics_Write(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := metrics.New(metrics.Config{Version: "1.2.3", Now: func() time.Time { return now },
		Store: func() metrics.Store {
			return metrics.Store{Active: 5, Superseded: 2, Forgotten: 3, Expired: 1, IndexBuilding: true, EmbedPending: 4,
				FileBytes: 1000, FileSize: 4096, MaxFileBytes: 1 << 30}
		},
		Backups: func() []metrics.Backup {
			return []metrics.Backup{
				{Target: "local", LastSuccess: now.Add(-90 * time.Minute), Attempted: true, LastOK: true},
				{Target: "offsite", LastSuccess: now.Add(-26 * time.Hour), Attempted: true, LastOK: false},
				{Target: "never"},
			}
		}})
	fams := scrape(t, m)
	tests := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"ownsona_build_info", map[string]string{"version": "1.2.3"}, 1},
		{"ownsona_memories", map[string]string{"state": "active"}, 5},
		{"ownsona_memories", map[string]string{"state": "superseded"}, 2},
		{"ownsona_memories", map[string]string{"state": "forgotten"}, 3},
		{"ownsona_memories", map[string]string{"state": "expired"}, 1},
		{"ownsona_index_building", nil, 1},
		{"ownsona_embed_pending", nil, 4},
		{"ownsona_embedder_failing", nil, 0},
		{"ownsona_file_data_bytes", nil, 1000},
		{"ownsona_file_size_bytes", nil, 4096},
		{"ownsona_file_max_bytes", nil, 1 << 30},
		{"ownsona_backup_age_seconds", map[string]string{"target": "local"}, 5400},
		{"ownsona_backup_age_seconds", map[string]string{"target": "offsite"}, 26 * 3600},
		{"ownsona_backup_last_success_timestamp_seconds", map[string]string{"target": "local"}, float64(now.Add(-90 * time.Minute).Unix())},
		{"ownsona_backup_last_ok", map[string]string{"target": "local"}, 1},
		{"ownsona_backup_last_ok", map[string]string{"target": "offsite"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.family+labelString(tt.labels), func(t *testing.T) {
			fam := fams[tt.family]
			if fam.GetType() != dto.MetricType_GAUGE {
				t.Errorf("type %v, want gauge", fam.GetType())
			}
			got, ok := value(fam, tt.labels)
			if !ok || got != tt.want {
				t.Errorf("got %v (found %v), want %v", got, ok, tt.want)
			}
		})
	}
	t.Run("a backup never taken has no series", func(t *testing.T) {
		for _, f := range []string{"ownsona_backup_age_seconds", "ownsona_backup_last_ok"} {
			if _, ok := value(fams[f], map[string]string{"target": "never"}); ok {
				t.Errorf("%s has a series for a target never backed up", f)
			}
		}
	})
	t.Run("process metrics", func(t *testing.T) {
		for _, f := range []string{"go_goroutines", "process_resident_memory_bytes"} {
			if fams[f] == nil {
				t.Errorf("no %s", f)
			}
		}
	})
}

// TestMetrics_Handler: who may read /metrics (SECURITY.md MX-01, proposed: metrics only to
// this machine or with the token, whatever a proxy's headers say).
func TestMetrics_Handler(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	open := metrics.New(metrics.Config{}).Handler()
	withToken := metrics.New(metrics.Config{Token: token}).Handler()
	tests := []struct {
		name    string
		h       http.Handler
		method  string
		remote  string
		host    string
		headers map[string]string
		want    int
	}{
		{"loopback", open, "GET", "127.0.0.1:5555", "127.0.0.1:8080", nil, 200},
		{"loopback v6", open, "GET", "[::1]:5555", "localhost:8080", nil, 200},
		{"head", open, "HEAD", "127.0.0.1:5555", "localhost", nil, 200},
		{"post", open, "POST", "127.0.0.1:5555", "localhost", nil, 405},
		{"remote without token configured", open, "GET", "192.0.2.7:5555", "mem.example.com", nil, 403},
		{"remote with a token none is configured for", open, "GET", "192.0.2.7:5555", "mem.example.com",
			map[string]string{"Authorization": "Bearer " + token}, 403},
		{"proxy on this machine", open, "GET", "127.0.0.1:5555", "127.0.0.1:8080",
			map[string]string{"X-Forwarded-For": "127.0.0.1"}, 403},
		{"proxy with Forwarded", open, "GET", "127.0.0.1:5555", "localhost",
			map[string]string{"Forwarded": "for=127.0.0.1"}, 403},
		{"proxy keeping the public Host", open, "GET", "127.0.0.1:5555", "mem.example.com", nil, 403},
		{"remote, no token sent", withToken, "GET", "192.0.2.7:5555", "mem.example.com", nil, 401},
		{"remote, wrong token", withToken, "GET", "192.0.2.7:5555", "mem.example.com",
			map[string]string{"Authorization": "Bearer " + token[:len(token)-1] + "0"}, 401},
		{"remote, token as basic", withToken, "GET", "192.0.2.7:5555", "mem.example.com",
			map[string]string{"Authorization": "Basic " + token}, 401},
		{"remote, token", withToken, "GET", "192.0.2.7:5555", "mem.example.com",
			map[string]string{"Authorization": "bearer " + token}, 200},
		{"proxy, token", withToken, "GET", "127.0.0.1:5555", "mem.example.com",
			map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "192.0.2.7"}, 200},
		{"loopback without the token", withToken, "GET", "127.0.0.1:5555", "localhost", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/metrics", nil)
			r.RemoteAddr, r.Host = tt.remote, tt.host
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			tt.h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if tt.want == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", w.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(w.Body.String(), token) && tt.want != 200 {
				t.Error("the refusal echoes the token")
			}
			if tt.want == 200 && tt.method == "GET" {
				if ct := w.Header().Get("Content-Type"); ct != metrics.ContentType {
					t.Errorf("Content-Type %q, want %q", ct, metrics.ContentType)
				}
				parse(t, w.Body.Bytes())
			}
		})
	}
}

// BenchmarkMetrics_Call is the cost of counting one MCP tool call and its HTTP request: what
// each request pays with metrics on.
func BenchmarkMetrics_Call(b *testing.B) {
	m := metrics.New(metrics.Config{Tools: []string{"recall", "remember", "forget", "list_memories", "get_memory"}})
	tools := []string{"recall", "remember", "forget", "list_memories", "get_memory"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Call(metrics.Call{Method: "tools/call", Tool: tools[i%len(tools)], Outcome: "ok", Duration: 3 * time.Millisecond})
		m.HTTP("mcp", 200)
		i++
	}
}
