// Package backup is what keeps a copy of the one file: a consistent, checked copy to a file
// (ToFile), the check itself (CheckFile, CheckContents: what `ownsona check` runs), scheduled
// copies into a directory with retention (Scheduler), copies of them in an S3-compatible
// bucket with retention (Remote), and the restore of a checked copy in place of the file, from
// a file or downloaded from a bucket (Restore, Remote.Fetch). app runs the Scheduler while it
// serves; the operator's `backup`, `check` and `restore` commands (app/ops) are thin layers
// over it.
//
// The simplest use, a checked snapshot of an open database:
//
//	n, err := backup.ToFile(db, "/mnt/usb/ownsona-2026-11-22.db")
//
// # Caveats
//
// A Scheduler keeps its Status in memory: after a restart it is empty until the next copy.
// Off-site retention deletes only objects named as the scheduler names them
// (ownsona-20261122T030000Z.db) directly under the prefix. Credentials print as "[redacted]"
// and are blanked out of the errors of the S3 client, so that Status and the log never
// carry them.
package backup
