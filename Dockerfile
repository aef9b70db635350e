# syntax=docker/dockerfile:1
# ownsona's container image: `docker build -t ownsona .` (or podman build), for any platform
# (docker buildx build --platform linux/amd64,linux/arm64 …). `make image` builds the same image
# without a daemon (build/image.sh, which CI runs); see compose.yaml for a reverse proxy.
#
# The final stage is FROM scratch: the static binary, CA certificates, /etc/passwd and group
# naming the user, /tmp, and /data (the volume the database lives in) owned by UID 65532.

ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS TARGETARCH TARGETVARIANT
# What `git describe --tags --dirty`, `git rev-parse HEAD` and the commit's date would say; the
# build context has no .git (see .dockerignore). make image passes them.
ARG VERSION=dev
ARG COMMIT=
ARG BUILD_DATE=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN APP=github.com/ownsona/ownsona/app && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH GOARM=${TARGETVARIANT#v} \
    go build -trimpath -buildvcs=false -o /out/ownsona \
      -ldflags "-s -w -X $APP.Version=$VERSION -X $APP.Commit=$COMMIT -X $APP.BuildDate=$BUILD_DATE" . && \
    mkdir -p /out/etc /out/tmp /out/data && chmod 1777 /out/tmp && chmod 0700 /out/data && \
    printf 'root:x:0:0:root:/:/sbin/nologin\nownsona:x:65532:65532:ownsona:/data:/sbin/nologin\n' >/out/etc/passwd && \
    printf 'root:x:0:\nownsona:x:65532:\n' >/out/etc/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/etc/ /etc/
COPY --from=build /out/tmp /tmp
COPY --from=build --chown=65532:65532 /out/data /data
COPY LICENSE NOTICE /usr/share/doc/ownsona/
COPY --from=build /out/ownsona /ownsona
ENV OWNSONA_DB=/data/ownsona.db OWNSONA_ADDR=0.0.0.0:8080
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/ownsona", "health"]
ENTRYPOINT ["/ownsona"]
CMD ["serve"]
