#!/usr/bin/env bash
# make reproducible: builds `make dist` twice from the committed HEAD, in two fresh clones at
# different paths, the second with an empty Go build cache of its own (so nothing compiled for
# the first is reused; REPRODUCIBLE_COLD=0 shares the cache, which still catches paths, times,
# stamps, archives and SBOMs but not the compiler, in a fifth of the time), and fails unless
# every file of the two dist/ is the same bytes. Run by .ci/run; uncommitted changes are not
# part of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${GO:=go}"
if ! head=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
  echo "reproducible: skipped: $root is not a git checkout git can read (it builds the committed HEAD twice)"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ownsona-reproducible.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

for side in first second; do
  src=$tmp/$side/ownsona
  git clone --quiet "$root" "$src"
  git -C "$src" checkout --quiet --detach "$head"
  cache=$("$GO" env GOCACHE)
  if [ "$side" = second ] && [ "${REPRODUCIBLE_COLD:-1}" != 0 ]; then cache=$tmp/second/gocache; fi
  echo "== make dist in $src (GOCACHE=$cache)"
  start=$(date +%s)
  GOCACHE=$cache make -C "$src" --no-print-directory dist GO="$GO" >"$tmp/$side.log" 2>&1 ||
    { cat "$tmp/$side.log"; exit 1; }
  grep ' binary: ' "$tmp/$side.log" || true
  echo "   $(( $(date +%s) - start )) s"
done

a=$tmp/first/ownsona/dist b=$tmp/second/ownsona/dist
status=0
if ! diff <(cd "$a" && ls) <(cd "$b" && ls); then
  echo "reproducible: the two dist/ hold different files"
  status=1
fi
for f in $(cd "$a" && ls); do
  if cmp -s "$a/$f" "$b/$f"; then
    echo "same   $f"
    continue
  fi
  echo "DIFFER $f"
  status=1
  case $f in
  *.tar.gz)
    mkdir -p "$tmp/x/a" "$tmp/x/b"
    tar -xzf "$a/$f" -C "$tmp/x/a" && tar -xzf "$b/$f" -C "$tmp/x/b" && diff -r "$tmp/x/a" "$tmp/x/b" || true
    rm -rf "$tmp/x" ;;
  esac
done
if [ "$status" -ne 0 ]; then
  echo "reproducible: FAIL: two builds of $head differ"
  exit 1
fi
echo "reproducible: ok: two builds of $head are the same bytes ($(cd "$a" && ls | wc -l) files)"
