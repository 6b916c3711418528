# OLM's image, as its own Dockerfile makes it: its operators, the package
# server and the bundle unpacker's tools, one image for all. hack/olm/up.sh
# builds it without a container engine (hack/image) from the binaries
# `make olm-tools` builds from the module proxy. The catalog operator's
# bundle-unpack Jobs run `/bin/cp -Rv /bin/cpb /util/cpb` from this image
# (its util image): cp is Debian's static busybox, which acts as cp by its
# name.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/olm /bin/olm
COPY --from=builder /workspace/catalog /bin/catalog
COPY --from=builder /workspace/package-server /bin/package-server
COPY --from=builder /workspace/copy-content /bin/copy-content
COPY --from=builder /workspace/cpb /bin/cpb
COPY --from=builder /bin/busybox /bin/cp
USER 65532:65532
