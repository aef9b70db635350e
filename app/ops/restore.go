package ops

// `ownsona restore --from FILE|s3://BUCKET/KEY`: the database replaced by a checked copy of a
// backup (backup.Restore), downloaded first when it is off site (backup.Remote.Fetch).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/backup"
)

// defaultRestoreMaxMB bounds a download by restore --from s3://: twice serve's default cap on
// the data a file holds (--max-file-mb 2048), since a file also holds free pages.
const defaultRestoreMaxMB = 4096

func restoreCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("restore", "restore --from FILE|s3://BUCKET/KEY [--db PATH]",
		"With the server stopped, checks the backup, keeps the current database as DB.bak-TIME, and\n"+
			"puts a checked copy of the backup in its place. A crash at any moment leaves the old or the\n"+
			"new file whole. From s3://BUCKET/PREFIX/ownsona-TIME.db (or the newest such copy under\n"+
			"s3://BUCKET/PREFIX) it downloads the backup beside the database first, with the credentials\n"+
			"serve's off-site backups use (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or\n"+
			"--backup-s3-credentials-file).")
	db := dbFlags(fs, env)
	from := fs.String("from", "", "the backup to restore: a file, or s3://BUCKET/KEY (required)")
	endpoint := fs.String("backup-s3-endpoint", env.Getenv("OWNSONA_BACKUP_S3_ENDPOINT"), "the S3 API's origin, e.g. https://s3.eu-central-003.backblazeb2.com; empty: AWS (default OWNSONA_BACKUP_S3_ENDPOINT)")
	region := fs.String("backup-s3-region", env.Getenv("OWNSONA_BACKUP_S3_REGION"), "the bucket's region; empty: asked of the server (default OWNSONA_BACKUP_S3_REGION)")
	credFile := fs.String("backup-s3-credentials-file", env.Getenv("OWNSONA_BACKUP_S3_CREDENTIALS_FILE"), "AWS-style credentials file, mode 0600; empty: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default OWNSONA_BACKUP_S3_CREDENTIALS_FILE)")
	maxMB := fs.Int("max-mb", defaultRestoreMaxMB, "largest backup downloaded from s3://, in MiB")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if *from == "" {
		return Usagef("restore: --from FILE is required")
	}
	if *maxMB < 1 {
		return Usagef("restore: --max-mb %d; at least 1", *maxMB)
	}
	if env.Live != nil || adminsock.Answers(ctx, *db) {
		return Usagef("restore: a server runs on %s; stop it first", *db)
	}
	src := *from
	if strings.HasPrefix(src, "s3:") {
		file, from, err := fetchS3(ctx, env, src, filepath.Dir(*db), *endpoint, *region, *credFile, int64(*maxMB)<<20)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer os.Remove(file)
		fmt.Fprintf(env.Stdout, "downloaded %s\n", from)
		return restoreFrom(env, *db, file, from)
	}
	return restoreFrom(env, *db, env.path(src), env.path(src))
}

// restoreFrom restores db from the file src, which the messages call name.
func restoreFrom(env *Env, db, src, name string) error {
	bak, err := backup.Restore(db, src, env.now(), heldError)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if bak != "" {
		fmt.Fprintf(env.Stdout, "restored %s from %s; the previous file is %s\n", db, name, bak)
	} else {
		fmt.Fprintf(env.Stdout, "restored %s from %s\n", db, name)
	}
	return nil
}

// fetchS3 downloads the backup url names into dir and returns the file and the object's URL.
func fetchS3(ctx context.Context, env *Env, url, dir, endpoint, region, credFile string, max int64) (file, from string, err error) {
	creds, err := backup.LoadCredentials(env.path(credFile), env.Getenv)
	if err != nil {
		return "", "", err
	}
	r, err := backup.NewRemote(backup.S3Config{URL: url, Endpoint: endpoint, Region: region, Credentials: creds})
	if err != nil {
		return "", "", err
	}
	file, from, err = r.Fetch(ctx, dir, max)
	if errors.Is(err, backup.ErrTooLarge) {
		err = fmt.Errorf("%w; raise --max-mb (now %s)", err, strconv.FormatInt(max>>20, 10))
	}
	return file, from, err
}
