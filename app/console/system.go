package console

// The System page: health, counts, the embedder and re-embedding, the index, and "download a
// backup now".

import (
	"net/http"
	"slices"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// systemPage is the System page's data.
type systemPage struct {
	Version       string
	Uptime        time.Duration
	Healthy       bool
	Checks        []check
	Stats         memory.Stats
	Embedder      memory.EmbedderStatus
	IndexBuilding bool
	Backup        bool
}

type check struct{ Name, State string }

func (c *Console) getSystem(q *req) {
	data := systemPage{Version: c.cfg.Version, Uptime: c.now().Sub(c.started).Truncate(time.Second), Healthy: true,
		Stats: c.mem.Stats(), Embedder: c.mem.EmbedderStatus(), IndexBuilding: c.mem.IndexBuilding(), Backup: c.cfg.Backup != nil}
	if c.cfg.Health != nil {
		var checks map[string]string
		checks, data.Healthy = c.cfg.Health()
		for k, v := range checks {
			data.Checks = append(data.Checks, check{k, v})
		}
		slices.SortFunc(data.Checks, func(a, b check) int {
			if a.Name < b.Name {
				return -1
			}
			return 1
		})
	}
	c.show(q, http.StatusOK, "system", "System", "system", data)
}

// postBackup streams a consistent snapshot of the whole file, from one read transaction, as an
// attachment. It is a POST with the session's CSRF token, like every action, rather than a GET
// with a token in its URL: the file holds every secret of the server (signing keys, token
// digests), a URL ends up in histories, logs and Referer headers, and a POST cannot be started by
// another site's link or image. The snapshot is written while it is read, so a failure half way
// aborts the response (the browser reports the download failed) rather than leaving a short file
// that looks whole.
func (c *Console) postBackup(q *req) string {
	if c.cfg.Backup == nil {
		c.bad(q, "This server offers no backup download.")
		return Prefix + "/system"
	}
	name := "ownsona-" + c.now().UTC().Format("20060102T150405Z") + ".db"
	h := q.w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	// A large file on a slow link outlasts the server's write timeout.
	_ = http.NewResponseController(q.w).SetWriteDeadline(time.Time{})
	q.w.WriteHeader(http.StatusOK)
	n, err := c.cfg.Backup(q.w)
	if err != nil {
		c.log.Error().Err(err).Int64("bytes", n).Msg("console: backup download failed")
		q.failed = true
		panic(http.ErrAbortHandler)
	}
	c.log.Info().Int64("bytes", n).Msg("console: backup downloaded")
	return ""
}
