package app

import (
	"context"
	"fmt"

	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/console"
)

// openBackups makes the scheduler of --backup-dir's backups, with --backup-s3's off-site
// copies; nil without a backup directory. It reaches no server: a bucket that cannot be
// reached shows in the status of the first backup, not at start.
func (a *App) openBackups() (*backup.Scheduler, error) {
	cfg := a.cfg
	if cfg.BackupDir == "" {
		return nil, nil
	}
	opts := backup.Options{Dir: cfg.BackupDir, Every: cfg.BackupEvery, Keep: cfg.BackupKeep, Now: a.now, Log: a.log}
	if cfg.BackupS3 != "" {
		creds, err := backup.LoadCredentials(cfg.BackupS3CredentialsFile, func(k string) string {
			return map[string]string{"AWS_ACCESS_KEY_ID": cfg.BackupS3AccessKeyID, "AWS_SECRET_ACCESS_KEY": cfg.BackupS3SecretAccessKey}[k]
		})
		if err != nil {
			return nil, usageErr("backup-s3: %v", err)
		}
		if opts.Offsite, err = backup.NewRemote(backup.S3Config{URL: cfg.BackupS3, Endpoint: cfg.BackupS3Endpoint,
			Region: cfg.BackupS3Region, Keep: cfg.BackupS3Keep, Credentials: creds}); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	return backup.NewScheduler(a.db, opts), nil
}

// scheduleBackups takes a backup every cfg.BackupEvery while the server runs (the first one an
// interval after start), when there is a backup directory.
func (a *App) scheduleBackups(ctx context.Context) {
	if a.backups != nil {
		go a.backups.Run(ctx)
	}
}

// backupNow takes one scheduled backup now: the local copy's path, and the first failure.
func (a *App) backupNow() (string, error) {
	if a.backups == nil {
		return "", fmt.Errorf("no backup directory")
	}
	return a.backups.BackupNow(context.Background())
}

// backupStatus is what the last scheduled backup did, locally and off site (zero without a
// backup directory): for the System page and /metrics.
func (a *App) backupStatus() backup.Status {
	if a.backups == nil {
		return backup.Status{}
	}
	return a.backups.Status()
}

// consoleBackupStatus is backupStatus as the System page shows it.
func (a *App) consoleBackupStatus() console.BackupStatus {
	st := a.backupStatus()
	r := func(r backup.Result) console.BackupResult {
		return console.BackupResult{At: r.At, OK: r.OK, Err: r.Err, Key: r.Key}
	}
	return console.BackupStatus{Local: r(st.Local), Offsite: r(st.Offsite), Target: st.Target}
}
