package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/app/backup"
)

// backupPrefix names scheduled backups: ownsona-20261122T030000Z.db.
const backupPrefix = "ownsona-"

// scheduleBackups takes a checked snapshot into cfg.BackupDir every cfg.BackupEvery while the
// server runs (the first one an interval after start) and keeps the newest cfg.BackupKeep.
func (a *App) scheduleBackups(ctx context.Context) {
	if a.cfg.BackupDir == "" {
		return
	}
	go every(ctx, a.cfg.BackupEvery, func() {
		if path, err := a.backupNow(); err != nil {
			a.log.Error().Err(err).Msg("scheduled backup failed")
		} else {
			a.log.Info().Str("file", path).Msg("scheduled backup written")
		}
	})
}

// backupNow writes one scheduled backup and prunes the oldest beyond BackupKeep.
func (a *App) backupNow() (string, error) {
	if err := os.MkdirAll(a.cfg.BackupDir, 0o700); err != nil {
		return "", fmt.Errorf("backup dir: %w", err)
	}
	path := filepath.Join(a.cfg.BackupDir, backupPrefix+a.now().UTC().Format("20060102T150405Z")+".db")
	if _, err := backup.BackupTo(a.db, path); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(a.cfg.BackupDir)
	if err != nil {
		return path, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, backupPrefix) && strings.HasSuffix(n, ".db") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names) // the timestamp sorts oldest first
	for len(names) > a.cfg.BackupKeep {
		if err := os.Remove(filepath.Join(a.cfg.BackupDir, names[0])); err != nil {
			return path, err
		}
		names = names[1:]
	}
	return path, nil
}
