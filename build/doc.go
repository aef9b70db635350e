// Package build is ownsona's release tooling, in a module of its own so that the tools it pins
// (go.mod's tool lines, and go-licenses as a library) never reach the main module's go.mod or
// the binary.
//
// It holds the licence check that `make test` runs (every package the binary links, for every
// target of `make dist`, has a licence file whose licence is on Allowed), NOTICE's generator
// (`make notice`: cmd/notice), the archiver of `make dist` (WriteArchive, cmd/archive) and its
// scripts: dist.sh (`make dist`), reproducible.sh (`make reproducible`) and image.sh (`make
// image`: the container image by crane, without a Docker daemon), the last two run by CI.
//
// Everything here works offline, from the module cache: go-licenses classifies the licence files
// with the licence database compiled into it.
package build
