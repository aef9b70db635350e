// Command archive writes a directory as a .tar.gz or .zip whose bytes depend only on the files'
// names, contents and executable bits: entries sorted by name, every time set to -mtime, owner
// and group 0 without names, modes 0755 (directories and executables) or 0644, no gzip name or
// time. `make dist` packs each release with it, the same on Linux and macOS (GNU tar's
// --sort=name and gzip -n are not everywhere).
//
//	archive -mtime $SOURCE_DATE_EPOCH -o dist/ownsona-v0.1.0-linux-arm64.tar.gz dist/stage/ownsona-v0.1.0-linux-arm64
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ownsona/ownsona/build"
)

func main() {
	mtime := flag.Int64("mtime", 0, "the time of every entry, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	out := flag.String("o", "", "the archive to write: NAME.tar.gz or NAME.zip")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: archive -mtime SECONDS -o OUT.tar.gz|OUT.zip DIR")
		os.Exit(2)
	}
	if err := build.WriteArchive(*out, flag.Arg(0), time.Unix(*mtime, 0).UTC()); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}
