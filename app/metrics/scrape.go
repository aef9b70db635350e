package metrics

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"

	vm "github.com/VictoriaMetrics/metrics"
)

// ContentType is the text format's media type, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves /metrics: GET or HEAD, to a scraper on this machine or one with the token
// (see the package doc); 401 or 403 to others, 405 for other methods.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if !m.mayRead(r) {
			status, msg := http.StatusForbidden, "metrics are served to this machine only; set OWNSONA_METRICS_TOKEN to let a scraper elsewhere in"
			if m.cfg.Token != "" {
				status, msg = http.StatusUnauthorized, "send the metrics token as Authorization: Bearer <token>"
				w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			}
			http.Error(w, msg, status)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GET or HEAD", http.StatusMethodNotAllowed)
			return
		}
		var buf bytes.Buffer // written whole: a failing read of the store answers no half page
		m.Write(&buf)
		w.Header().Set("Content-Type", ContentType)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(buf.Bytes())
	})
}

// mayRead reports whether r may read the metrics: it carries the token, or it comes from this
// machine directly.
func (m *Metrics) mayRead(r *http.Request) bool {
	if m.cfg.Token != "" {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if strings.EqualFold(scheme, "Bearer") {
			got, want := sha256.Sum256([]byte(strings.TrimSpace(tok))), sha256.Sum256([]byte(m.cfg.Token))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				return true
			}
		}
	}
	return Local(r)
}

// proxyHeaders are the headers a reverse proxy adds to say whom it forwards.
var proxyHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip",
	"Cf-Connecting-Ip", "True-Client-Ip", "Fly-Client-Ip", "X-Client-Ip"}

// Local reports whether r comes straight from this machine: its peer address (not a header)
// is loopback, its Host a loopback name, and it carries none of the headers a reverse proxy
// adds. A proxy on this machine connects from loopback too; its headers, or the public name
// in Host, tell it apart.
func Local(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return false
	}
	for _, h := range proxyHeaders {
		if _, ok := r.Header[h]; ok {
			return false
		}
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err = netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// Write writes every family in the text format: the counters and histograms, then what the
// store and the backups say now, then the Go runtime's and the process's (go_*, process_*).
func (m *Metrics) Write(w io.Writer) {
	m.set.WritePrometheus(w)
	gauge(w, "ownsona_build_info", "The build's version; always 1.")
	fmt.Fprintf(w, "ownsona_build_info{version=\"%s\"} 1\n", escape(m.cfg.Version))
	if m.cfg.Store != nil {
		st := m.cfg.Store()
		gauge(w, "ownsona_memories", "Memories in the file by state: active (in recall), superseded, forgotten (in the trash), expired.")
		for _, s := range []struct {
			state string
			n     int
		}{{"active", st.Active}, {"superseded", st.Superseded}, {"forgotten", st.Forgotten}, {"expired", st.Expired}} {
			fmt.Fprintf(w, "ownsona_memories{state=%q} %d\n", s.state, s.n)
		}
		gauge(w, "ownsona_index_building", "1 while the HNSW graph is being built (exact search serves meanwhile), else 0.")
		fmt.Fprintf(w, "ownsona_index_building %d\n", b2i(st.IndexBuilding))
		gauge(w, "ownsona_embed_pending", "Memories waiting for a vector of the current embedder.")
		fmt.Fprintf(w, "ownsona_embed_pending %d\n", st.EmbedPending)
		gauge(w, "ownsona_embedder_failing", "1 while the embedder's last attempt failed, else 0.")
		fmt.Fprintf(w, "ownsona_embedder_failing %d\n", b2i(st.EmbedFailing))
		gauge(w, "ownsona_file_data_bytes", "Bytes of data the file holds (its pages less the free ones).")
		fmt.Fprintf(w, "ownsona_file_data_bytes %d\n", st.FileBytes)
		gauge(w, "ownsona_file_size_bytes", "Bytes the file takes on disk.")
		fmt.Fprintf(w, "ownsona_file_size_bytes %d\n", st.FileSize)
		if st.MaxFileBytes > 0 {
			gauge(w, "ownsona_file_max_bytes", "The cap on the file's data (--max-file-mb).")
			fmt.Fprintf(w, "ownsona_file_max_bytes %d\n", st.MaxFileBytes)
		}
	}
	if m.cfg.Backups != nil {
		m.writeBackups(w, m.cfg.Backups())
	}
	vm.WriteProcessMetrics(w)
}

// writeBackups writes the backups' families, each family's series together.
func (m *Metrics) writeBackups(w io.Writer, bs []Backup) {
	now := m.cfg.Now()
	var done bool
	for _, b := range bs {
		if !b.LastSuccess.IsZero() {
			if !done {
				gauge(w, "ownsona_backup_last_success_timestamp_seconds", "When the newest good backup was taken, in Unix seconds.")
				done = true
			}
			fmt.Fprintf(w, "ownsona_backup_last_success_timestamp_seconds{target=\"%s\"} %d\n", escape(b.Target), b.LastSuccess.Unix())
		}
	}
	done = false
	for _, b := range bs {
		if !b.LastSuccess.IsZero() {
			if !done {
				gauge(w, "ownsona_backup_age_seconds", "Seconds since the newest good backup was taken.")
				done = true
			}
			fmt.Fprintf(w, "ownsona_backup_age_seconds{target=\"%s\"} %g\n", escape(b.Target), max(now.Sub(b.LastSuccess).Seconds(), 0))
		}
	}
	done = false
	for _, b := range bs {
		if b.Attempted {
			if !done {
				gauge(w, "ownsona_backup_last_ok", "1 if the last backup attempt succeeded, 0 if it failed.")
				done = true
			}
			fmt.Fprintf(w, "ownsona_backup_last_ok{target=\"%s\"} %d\n", escape(b.Target), b2i(b.LastOK))
		}
	}
}

func gauge(w io.Writer, name, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
