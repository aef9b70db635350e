#!/usr/bin/env bash
# make image: the container image the Dockerfile describes, built without a Docker daemon by
# crane (go-containerregistry, pinned in build/go.mod) in a registry of its own that lives in
# memory on loopback while this runs; then checked and run.
#
# Writes dist/image/: oci/ (an OCI image layout: one index, linux/amd64 and linux/arm64),
# ownsona-VERSION-image.oci.tar (that layout as one file: podman load, docker load on Docker 25+)
# and ownsona-VERSION-image-linux-ARCH.tar (docker load). The checks: the index names both
# platforms; each config has user 65532:65532, entrypoint /ownsona, cmd serve, volume /data,
# port 8080/tcp and the HEALTHCHECK `/ownsona health` (read with `crane config`); the host's
# image, unpacked (`crane export`), runs `serve` with a fresh /data as that user (chroot when
# root) on a loopback port, answers its own `health`, and writes the file 0600 in /data; the
# other architecture's binary prints its version under qemu when qemu-user is installed.
#
# The Makefile passes GO, VERSION, SOURCE_DATE_EPOCH, LDFLAGS and BUILDFLAGS. Needs GNU tar,
# node (to read JSON) and CA certificates at CA_CERTIFICATES.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GO:=go}" "${VERSION:?}" "${SOURCE_DATE_EPOCH:?}" "${LDFLAGS:?}" "${BUILDFLAGS:?}"
archs=${IMAGE_ARCHS:-amd64 arm64}
certs=${CA_CERTIFICATES:-/etc/ssl/certs/ca-certificates.crt}
uid=65532
out=dist/image

if [ ! -s "$certs" ]; then
  echo "image: no CA certificates at $certs (Debian: apt-get install ca-certificates)" >&2
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ownsona-image.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "image: FAIL: $*" >&2; exit 1; }

# waitfor FILE PATTERN: until FILE has a line matching PATTERN (at most 30 s); prints the match.
waitfor() {
  for _ in $(seq 300); do
    if m=$(grep -m1 -o "$2" "$1" 2>/dev/null); then echo "$m"; return 0; fi
    sleep 0.1
  done
  cat "$1" >&2
  return 1
}

env -u GOOS -u GOARCH -u GOARM CGO_ENABLED=0 "$GO" -C build build -o ../bin/ tool
crane() { bin/crane "$@" 2>>"$tmp/crane.log" || { cat "$tmp/crane.log" >&2; return 1; }; }
semver=$(env -u GOOS -u GOARCH -u GOARM CGO_ENABLED=0 "$GO" run $BUILDFLAGS -ldflags "$LDFLAGS" . version | sed -n '1s/^ownsona //p')

bin/crane registry serve --address 127.0.0.1:0 >"$tmp/registry.log" 2>&1 &
pids+=($!)
port=$(waitfor "$tmp/registry.log" 'serving on port [0-9]*') || fail "crane registry did not start"
reg=127.0.0.1:${port##* }/ownsona

# layer DIR UID OUT: DIR's entries (not DIR itself) as a layer owned by UID, reproducibly.
layer() {
  tar --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner="$2" --group="$2" --numeric-owner \
    -C "$1" -cf "$3" --no-recursion -T <(cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort)
}

# What every architecture shares: a root-owned layer, and /data owned by the image's user.
common=$tmp/common data=$tmp/data
mkdir -p "$common/etc/ssl/certs" "$common/tmp" "$common/usr/share/doc/ownsona" "$data/data"
cp "$certs" "$common/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nownsona:x:%s:%s:ownsona:/data:/sbin/nologin\n' $uid $uid >"$common/etc/passwd"
printf 'root:x:0:\nownsona:x:%s:\n' $uid >"$common/etc/group"
cp LICENSE NOTICE "$common/usr/share/doc/ownsona/"
find "$common" -type d -exec chmod 0755 {} + && find "$common" -type f -exec chmod 0644 {} +
chmod 1777 "$common/tmp" && chmod 0700 "$data/data"
layer "$common" 0 "$tmp/common.tar"
layer "$data" $uid "$tmp/data.tar"

for arch in $archs; do
  mkdir -p "$tmp/$arch"
  echo "build linux/$arch"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build $BUILDFLAGS -ldflags "$LDFLAGS" -o "$tmp/$arch/ownsona" .
  chmod 0755 "$tmp/$arch/ownsona"
  layer "$tmp/$arch" 0 "$tmp/bin-$arch.tar"
  crane append --oci-empty-base -f "$tmp/common.tar" -f "$tmp/data.tar" -f "$tmp/bin-$arch.tar" -t "$reg:$arch" >/dev/null
  crane mutate "$reg:$arch" --set-platform "linux/$arch" --user $uid:$uid --workdir /data \
    --entrypoint /ownsona --cmd serve --env OWNSONA_DB=/data/ownsona.db --env OWNSONA_ADDR=0.0.0.0:8080 \
    --exposed-ports 8080/tcp \
    --label org.opencontainers.image.title=ownsona \
    --label org.opencontainers.image.version="$semver" \
    --label org.opencontainers.image.licenses=Apache-2.0 \
    --label org.opencontainers.image.source=https://github.com/ownsona/ownsona \
    -t "$reg:$arch" >/dev/null
  # The volume and the health check, which crane mutate has no flags for: the config as JSON.
  crane config "$reg:$arch" | node -e '
    const c = JSON.parse(require("fs").readFileSync(0, "utf8"));
    c.config.Volumes = {"/data": {}};
    c.config.Healthcheck = {Test: ["CMD", "/ownsona", "health"], Interval: 30e9, Timeout: 5e9, StartPeriod: 10e9, Retries: 3};
    process.stdout.write(JSON.stringify(c));' | crane edit config "$reg:$arch" -t "$reg:$arch" >/dev/null
done
manifests=()
for arch in $archs; do manifests+=(-m "$reg:$arch"); done
crane index append "${manifests[@]}" -t "$reg:$VERSION" >/dev/null

echo "== check the image (crane manifest, crane config)"
crane manifest "$reg:$VERSION" | node -e '
  const idx = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const got = (idx.manifests || []).map(m => m.platform.os + "/" + m.platform.architecture).sort().join(" ");
  const want = process.argv[1].split(" ").map(a => "linux/" + a).sort().join(" ");
  if (idx.mediaType !== "application/vnd.oci.image.index.v1+json" || got !== want) {
    console.error(`index ${idx.mediaType}: platforms ${got}, want ${want}`); process.exit(1);
  }
  console.log(`index: ${got}`);' "$archs" || fail "the index"
for arch in $archs; do
  crane config --platform "linux/$arch" "$reg:$VERSION" | node -e '
    const [arch, uid] = process.argv.slice(1);
    const c = JSON.parse(require("fs").readFileSync(0, "utf8")), k = c.config || {};
    const want = {
      os: [c.os, "linux"], architecture: [c.architecture, arch], User: [k.User, `${uid}:${uid}`],
      Entrypoint: [JSON.stringify(k.Entrypoint), `["/ownsona"]`], Cmd: [JSON.stringify(k.Cmd), `["serve"]`],
      Volumes: [Object.keys(k.Volumes || {}).join(), "/data"], ExposedPorts: [Object.keys(k.ExposedPorts || {}).join(), "8080/tcp"],
      Healthcheck: [JSON.stringify((k.Healthcheck || {}).Test), `["CMD","/ownsona","health"]`],
      WorkingDir: [k.WorkingDir, "/data"], OWNSONA_DB: [(k.Env || []).includes("OWNSONA_DB=/data/ownsona.db"), true],
    };
    let bad = 0;
    for (const [name, [got, w]] of Object.entries(want)) {
      if (got !== w) { console.error(`linux/${arch}: ${name} = ${got}, want ${w}`); bad++; }
    }
    if (bad) process.exit(1);
    console.log(`linux/${arch}: user ${k.User}, entrypoint ${k.Entrypoint} ${k.Cmd}, volume /data, port 8080/tcp, healthcheck /ownsona health`);' \
    "$arch" $uid || fail "the config of linux/$arch"
done

echo "== the Dockerfile describes the same image"
for want in "USER $uid:$uid" 'WORKDIR /data' 'VOLUME /data' 'EXPOSE 8080' 'ENTRYPOINT ["/ownsona"]' 'CMD ["serve"]' \
  'ENV OWNSONA_DB=/data/ownsona.db OWNSONA_ADDR=0.0.0.0:8080' 'HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/ownsona", "health"]' \
  'FROM scratch' "--chown=$uid:$uid /out/data /data"; do
  grep -qxF -- "$want" Dockerfile || grep -qF -- "$want" Dockerfile || fail "the Dockerfile lacks: $want"
done
echo "Dockerfile: the same user, workdir, volume, port, entrypoint, env and health check"

echo "== run the image's binary out of its unpacked root file system"
host=$("$GO" env GOHOSTARCH)
for arch in $archs; do
  rootfs=$tmp/rootfs-$arch
  mkdir -p "$rootfs"
  crane export --platform "linux/$arch" "$reg:$VERSION" - | tar -x -C "$rootfs" --numeric-owner
  [ "$(stat -c %a "$rootfs/tmp")" = 1777 ] || fail "/tmp is not 1777 in linux/$arch"
  if [ "$arch" != "$host" ]; then
    if command -v "qemu-$( [ "$arch" = arm64 ] && echo aarch64 || echo "$arch")" >/dev/null; then
      q=qemu-$( [ "$arch" = arm64 ] && echo aarch64 || echo "$arch")
      "$q" "$rootfs/ownsona" version | grep -q "^platform  linux/$arch$" || fail "linux/$arch binary under $q"
      echo "linux/$arch: $("$q" "$rootfs/ownsona" version | head -1) (under $q)"
    fi
    continue
  fi
  # As the image runs it: its user, its /data, its /etc and /tmp (chroot needs root; otherwise
  # the same binary with the file in the unpacked /data).
  run=(env -i OWNSONA_DB=/data/ownsona.db OWNSONA_ADDR=127.0.0.1:0 OWNSONA_LOG_LEVEL=info)
  if [ "$(id -u)" = 0 ]; then
    run+=("$(command -v chroot)" --userspec=$uid:$uid "$rootfs" /ownsona)
  else
    run=(env -i OWNSONA_DB="$rootfs/data/ownsona.db" OWNSONA_ADDR=127.0.0.1:0 "$rootfs/ownsona")
  fi
  "${run[@]}" serve >"$tmp/serve.out" 2>"$tmp/serve.log" &
  pids+=($!)
  url=$(waitfor "$tmp/serve.log" 'serving http://127\.0\.0\.1:[0-9]*') || fail "serve did not start"
  addr=${url#serving http://}
  health=("${run[@]/OWNSONA_ADDR=127.0.0.1:0/OWNSONA_ADDR=$addr}")
  "${health[@]}" health || fail "health of the server at $addr"
  if [ "$(id -u)" = 0 ]; then
    got=$(stat -c '%u %a' "$rootfs/data/ownsona.db")
    [ "$got" = "$uid 600" ] || fail "/data/ownsona.db is owner and mode $got, want $uid 600"
  fi
  echo "linux/$arch: served at $addr, healthy, /data/ownsona.db written"
done

echo "== write $out"
rm -rf "$out"
mkdir -p "$out"
crane pull --format oci "$reg:$VERSION" "$out/oci"
tar --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  -C "$out/oci" -cf "$out/ownsona-$VERSION-image.oci.tar" .
for arch in $archs; do
  crane pull --platform "linux/$arch" "$reg:$VERSION" "$out/ownsona-$VERSION-image-linux-$arch.tar"
done
ls -l "$out"
echo "image: ok ($semver)"
