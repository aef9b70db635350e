// Command notice writes NOTICE: the third-party licences of every package the binary links on
// every target of `make dist`, after checking each against the allow-list (build.Allowed).
//
//	go -C build run ./cmd/notice -root .. -o ../NOTICE   # what `make notice` runs
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ownsona/ownsona/build"
)

func main() {
	root := flag.String("root", "..", "the main module's directory")
	out := flag.String("o", "", "write NOTICE here (default: standard output)")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "notice:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	targets, err := build.DistTargets(root)
	if err != nil {
		return err
	}
	libs, err := build.Libraries(context.Background(), root, ".", targets)
	if err != nil {
		return err
	}
	if errs := build.Check(libs); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, e)
		}
		return fmt.Errorf("%d libraries may not ship (see above)", len(errs))
	}
	goLicence, err := build.GoLicence()
	if err != nil {
		return err
	}
	text, err := build.Notice(libs, goLicence)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(text)
		return err
	}
	return os.WriteFile(out, text, 0o644)
}
