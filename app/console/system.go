package console

// The System page: health, counts, the embedder and re-embedding, the index, the recent
// scheduled backups, the doctor's local findings, and "download a backup now".

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/oauth/policy"
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

	// Scheduled backups: Backups is false without a backup directory.
	Backups      bool
	BackupFiles  []backupRow
	BackupsError bool
	// LastBackup and LastOffsite are what the last scheduled backup did; nil before the
	// first, and LastOffsite without a bucket. Offsite is the bucket's prefix, if any.
	LastBackup, LastOffsite *backupResultRow
	Offsite                 string
	// The doctor's findings: Doctor is false when the console has no doctor.
	Doctor        bool
	Findings      []finding
	DoctorSummary string
	DoctorOK      bool // no FAIL among the findings
	DoctorError   bool
	// Imports are the recent uploaded imports, newest first; HasImports is false when the
	// server takes no uploads.
	HasImports bool
	Imports    []importRow
}

// importRow is one uploaded import on the System page.
type importRow struct {
	memory.ImportJob
	Filename, Client string // displayable
	Errors           []string
	More             int // failures not listed
}

// maxImportsShown bounds the imports listed, and maxImportErrorsShown the errors of each.
const (
	maxImportsShown      = 20
	maxImportErrorsShown = 5
)

// SetImports gives the System page the recent imports (every principal's: the owner sees
// all). Call it before the console serves.
func (c *Console) SetImports(imports func() []memory.ImportJob) { c.imports = imports }

// recentImports fills the page's list of imports.
func (c *Console) recentImports(data *systemPage) {
	if c.imports == nil {
		return
	}
	data.HasImports = true
	jobs := c.imports()
	for _, j := range jobs[:min(len(jobs), maxImportsShown)] {
		row := importRow{ImportJob: j, Filename: policy.Displayable(j.Filename, 100), Client: policy.Displayable(j.Client, 100)}
		for _, e := range j.Errors[:min(len(j.Errors), maxImportErrorsShown)] {
			row.Errors = append(row.Errors, policy.Displayable(e.String(), 300))
		}
		row.More = max(j.Failed-len(row.Errors), 0)
		data.Imports = append(data.Imports, row)
	}
}

type check struct{ Name, State string }

// BackupFile is one scheduled backup, as Config.Backups lists it.
type BackupFile struct {
	Name string    // the file's name in the backup directory, e.g. ownsona-20261122T030000Z.db
	Size int64     // bytes
	Time time.Time // when it was taken
}

// BackupStatus is what the last scheduled backup did, locally and off site, as
// SetBackupStatus's func reports it.
type BackupStatus struct {
	Local, Offsite BackupResult
	Target         string // the off-site prefix, s3://BUCKET/PREFIX/; empty without one
}

// BackupResult is the outcome of one copy.
type BackupResult struct {
	At  time.Time // zero: never tried
	OK  bool
	Err string // why it failed
	Key string // the file's path or the object's s3:// URL
}

// backupResultRow is a BackupResult on the page.
type backupResultRow struct {
	At       time.Time
	OK       bool
	Err, Key string // displayable
}

// SetBackupStatus gives the System page what the last scheduled backup did. Call it before the
// console serves.
func (c *Console) SetBackupStatus(status func() BackupStatus) { c.backupStatus = status }

// DoctorFunc runs the doctor's local checks and returns its report: one finding a line ("ok",
// "warn" or "FAIL", what was found, and after " — " what to change), then a summary line.
type DoctorFunc func(ctx context.Context) (report string, err error)

// SetSystem sets Config.Backups and Config.Doctor after New, for a caller that wires them
// apart from the rest of the Config. Call it before the console serves: it is not safe for
// concurrent use with requests.
func (c *Console) SetSystem(backups func() ([]BackupFile, error), doctor DoctorFunc) {
	c.cfg.Backups, c.cfg.Doctor = backups, doctor
}

// maxBackupsShown bounds the backups listed; the directory keeps --backup-keep (7 by default).
const maxBackupsShown = 20

type backupRow struct {
	Name string
	Size string
	Time time.Time
}

// finding is one line of the doctor's report.
type finding struct {
	Level string // "ok", "warn" or "FAIL"
	What  string // what was found
	Fix   string // what to change; empty for "ok"
}

// doctorTimeout bounds the doctor's local checks: a stat and a read of the file's first page.
const doctorTimeout = 10 * time.Second

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
	c.backups(&data)
	c.recentImports(&data)
	c.doctor(q.r.Context(), &data)
	c.show(q, http.StatusOK, "system", "System", "system", data)
}

// backups fills the page's list of scheduled backups, newest first.
func (c *Console) backups(data *systemPage) {
	if c.cfg.Backups == nil {
		return
	}
	data.Backups = true
	if c.backupStatus != nil {
		st := c.backupStatus()
		data.Offsite = policy.Displayable(st.Target, 300)
		row := func(r BackupResult) *backupResultRow {
			if r.At.IsZero() {
				return nil
			}
			return &backupResultRow{At: r.At, OK: r.OK, Err: policy.Displayable(r.Err, 500), Key: policy.Displayable(r.Key, 300)}
		}
		data.LastBackup, data.LastOffsite = row(st.Local), row(st.Offsite)
	}
	files, err := c.cfg.Backups()
	if err != nil {
		c.log.Error().Err(err).Msg("console: list scheduled backups")
		data.BackupsError = true
		return
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b BackupFile) int { return b.Time.Compare(a.Time) })
	for _, f := range files[:min(len(files), maxBackupsShown)] {
		data.BackupFiles = append(data.BackupFiles, backupRow{Name: policy.Displayable(f.Name, 100), Size: formatSize(f.Size), Time: f.Time})
	}
}

// doctor runs the doctor's local checks and splits its report into findings.
func (c *Console) doctor(ctx context.Context, data *systemPage) {
	if c.cfg.Doctor == nil {
		return
	}
	data.Doctor = true
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	report, err := c.cfg.Doctor(ctx)
	if err != nil {
		c.log.Error().Err(err).Msg("console: doctor")
		data.DoctorError = true
		return
	}
	data.DoctorOK = true
	for line := range strings.Lines(report) {
		line = strings.TrimSpace(line)
		level, rest, _ := strings.Cut(line, " ")
		switch level {
		case "ok", "warn", "FAIL":
			what, fix, _ := strings.Cut(strings.TrimSpace(rest), " — ")
			data.Findings = append(data.Findings, finding{Level: level, What: what, Fix: fix})
			data.DoctorOK = data.DoctorOK && level != "FAIL"
		default:
			if strings.HasPrefix(line, "doctor: ") {
				data.DoctorSummary = strings.TrimPrefix(line, "doctor: ")
			}
		}
	}
}

// formatSize shows a file's size in bytes, KiB, MiB or GiB.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 2; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMG"[exp])
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
	// The file holds the signing keys, the password hash and the CA's key: more than a token
	// gives, so the password again, as for a token.
	if !c.recheck(q, "No backup downloaded") {
		return Prefix + "/system#backup"
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
