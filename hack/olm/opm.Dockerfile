# opm's image, as operator-registry's: opm, which bundle-unpack Jobs run
# (`opm alpha bundle extract`), and the probe every catalog pod's readiness
# and liveness run. File-based catalog images build on the same two
# binaries (catalog.Dockerfile).
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/opm /bin/opm
COPY --from=builder /workspace/grpc_health_probe /bin/grpc_health_probe
USER 65532:65532
ENTRYPOINT ["/bin/opm"]
