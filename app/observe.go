package app

import (
	"github.com/ownsona/ownsona/app/metrics"
)

// What the metrics (--metrics) read of the server at each scrape.

// newMetrics makes the server's metrics: the tools are those of the MCP surface (compatibility
// modes' and aliases included), and the memories, the index, the file and the backups are read
// at each scrape.
func (a *App) newMetrics() *metrics.Metrics {
	var names []string
	for _, t := range a.mcp.Tools {
		names = append(names, t.Name)
	}
	return metrics.New(metrics.Config{Tools: names, Token: a.cfg.MetricsToken, Version: a.cfg.Version, Now: a.now,
		Store: a.metricsStore, Backups: a.metricsBackups})
}

// metricsStore is the memory store as a scrape reads it.
func (a *App) metricsStore() metrics.Store {
	st, es := a.mem.Stats(), a.mem.EmbedderStatus()
	return metrics.Store{Active: st.Active, Superseded: st.Superseded, Forgotten: st.SoftDeleted, Expired: st.Expired,
		IndexBuilding: a.mem.IndexBuilding(), EmbedPending: es.Pending, EmbedFailing: es.LastError != "",
		FileBytes: st.Quota.FileBytes, FileSize: st.Quota.FileSize, MaxFileBytes: st.Quota.MaxFileBytes}
}

// metricsBackups are the backups as a scrape reads them: with --backup-dir, target "local"
// (its last success is the newest copy in the directory, which also counts the copies made
// before this start), and with --backup-s3 target "offsite" as well.
func (a *App) metricsBackups() []metrics.Backup {
	if a.cfg.BackupDir == "" {
		return nil
	}
	st := a.backupStatus()
	local := metrics.Backup{Target: "local", LastSuccess: st.Local.LastOK, Attempted: !st.Local.At.IsZero(), LastOK: st.Local.OK}
	if files, err := a.backupFiles(); err == nil && len(files) > 0 && files[0].Time.After(local.LastSuccess) { // newest first
		local.LastSuccess = files[0].Time
	}
	out := []metrics.Backup{local}
	if st.Target != "" {
		out = append(out, metrics.Backup{Target: "offsite", LastSuccess: st.Offsite.LastOK, Attempted: !st.Offsite.At.IsZero(), LastOK: st.Offsite.OK})
	}
	return out
}
