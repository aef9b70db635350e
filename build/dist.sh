#!/usr/bin/env bash
# make dist: release archives in dist/, reproducibly. For each of DIST_TARGETS (os/arch; armv7
# and armv6 are GOARCH arm with GOARM): the static binary (CGO_ENABLED=0) with LICENSE, NOTICE
# and README.md in ownsona-VERSION-OS-ARCH.tar.gz (.zip for Windows), its CycloneDX SBOM
# ownsona-VERSION-OS-ARCH.cdx.json (cyclonedx-gomod, from the binary's own build information),
# and SHA256SUMS of them all. Archive entries have SOURCE_DATE_EPOCH's time, owner 0 and sorted
# names (cmd/archive), so the bytes depend only on the commit: see reproducible.sh.
#
# The Makefile passes GO, VERSION, SOURCE_DATE_EPOCH, LDFLAGS, BUILDFLAGS and DIST_TARGETS.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GO:=go}" "${VERSION:?}" "${SOURCE_DATE_EPOCH:?}" "${LDFLAGS:?}" "${BUILDFLAGS:?}" "${DIST_TARGETS:?}"

rm -rf dist
mkdir -p dist/stage bin
# The tools run here, so they are built for this machine whatever GOOS the caller set.
env -u GOOS -u GOARCH -u GOARM CGO_ENABLED=0 "$GO" -C build build -o ../bin/ tool ./cmd/archive

# The version the binaries report (app/version.go makes it semantic), for the SBOMs.
env -u GOOS -u GOARCH -u GOARM CGO_ENABLED=0 "$GO" build $BUILDFLAGS -ldflags "$LDFLAGS" -o dist/stage/ownsona-host .
semver=$(dist/stage/ownsona-host version | sed -n '1s/^ownsona //p')
rm dist/stage/ownsona-host

for t in $DIST_TARGETS; do
  os=${t%%/*} arch=${t#*/}
  goarch=$arch goarm= exe= ext=tar.gz
  case $arch in armv*) goarch=arm goarm=${arch#armv} ;; esac
  if [ "$os" = windows ]; then exe=.exe ext=zip; fi
  name=ownsona-$VERSION-$os-$arch
  stage=dist/stage/$name
  mkdir -p "$stage"
  echo "build $name"
  CGO_ENABLED=0 GOOS=$os GOARCH=$goarch GOARM=$goarm \
    "$GO" build $BUILDFLAGS -ldflags "$LDFLAGS" -o "$stage/ownsona$exe" .
  echo "  $os/$arch binary: $(wc -c <"$stage/ownsona$exe") bytes"
  cp LICENSE NOTICE README.md "$stage/"
  # The modules come from the module cache the build just filled: no network, and each one's
  # hash is checked against the binary's build information.
  GOOS=$os GOARCH=$goarch GOARM=$goarm GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod \
    bin/cyclonedx-gomod bin -json -licenses -std -noserial -notimestamp -version "$semver" \
    -output "dist/$name.cdx.json" "$stage/ownsona$exe" 2> >(grep -v 'ownsona/ownsona@\|std@go' >&2 || true)
  bin/archive -mtime "$SOURCE_DATE_EPOCH" -o "dist/$name.$ext" "$stage"
done
rm -rf dist/stage

cd dist
if command -v sha256sum >/dev/null; then sha256sum -- *; else shasum -a 256 -- *; fi >SHA256SUMS
echo "dist/ ($semver):"
ls -l
