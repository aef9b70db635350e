package app

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/doctor"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
)

// What the console's System page reads of the host: the scheduled backups and the doctor's
// local findings.

// backupFiles lists the scheduled backups in cfg.BackupDir, newest first; none while the
// directory does not exist yet.
func (a *App) backupFiles() ([]console.BackupFile, error) {
	files, err := a.backups.Files()
	var out []console.BackupFile
	for _, f := range files {
		out = append(out, console.BackupFile{Name: f.Name, Size: f.Size, Time: f.Time})
	}
	return out, err
}

// localDoctor runs the doctor's checks of the file and the configuration as `ownsona doctor`
// would for this server, without --public: nothing leaves the machine.
func (a *App) localDoctor(ctx context.Context) (string, error) {
	cfg := a.cfg
	var b strings.Builder
	_, err := doctor.Run(ctx, doctor.Options{DB: cfg.DB, PublicURL: cfg.PublicURL, TLS: cfg.TLS, Domains: cfg.Domains,
		TrustedProxies: cfg.TrustedProxies, FileSizeWarning: func(n int64) string { return ops.WarnFileSize(runtime.GOARCH, n) },
		Now: a.now}, &b)
	return b.String(), err
}

// cliImports keeps the imports run from the command line through the admin socket, newest
// last, so that the console's System page lists them beside the uploaded ones. Safe for
// concurrent use; in memory, as the uploads' jobs are.
type cliImports struct {
	mu   sync.Mutex
	jobs []memory.ImportJob
}

// maxCLIImports bounds the command-line imports kept.
const maxCLIImports = 20

func (c *cliImports) add(j memory.ImportJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs = append(c.jobs, j)
	if len(c.jobs) > maxCLIImports {
		c.jobs = slices.Delete(c.jobs, 0, len(c.jobs)-maxCLIImports)
	}
}

// merged returns uploaded and command-line imports together, newest first.
func (c *cliImports) merged(uploaded []memory.ImportJob) []memory.ImportJob {
	c.mu.Lock()
	out := append(slices.Clone(uploaded), c.jobs...)
	c.mu.Unlock()
	slices.SortStableFunc(out, func(a, b memory.ImportJob) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out
}
