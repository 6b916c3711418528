# opm's image, as operator-registry's: opm, which bundle-unpack Jobs run
# (`opm alpha bundle extract`), and the probe every catalog pod's readiness
# and liveness run. File-based catalog images build on the same two
# binaries (catalog.Dockerfile).
#
# It is also `operator-sdk run bundle`'s index image, as operator-registry's
# opm image is by default: an empty file-based catalog, to which
# operator-sdk adds the bundle and whose pod runs `sh -c "opm serve
# /configs"` (sh is Debian's static busybox). operator-sdk knows the
# upstream image by its name; this one says what it is by its label.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /configs
WORKDIR /
COPY --from=builder /workspace/opm /bin/opm
COPY --from=builder /workspace/grpc_health_probe /bin/grpc_health_probe
COPY --from=builder /bin/busybox /bin/sh
LABEL operators.operatorframework.io.index.configs.v1=/configs
USER 65532:65532
ENTRYPOINT ["/bin/opm"]
