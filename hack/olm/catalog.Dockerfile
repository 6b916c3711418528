# A file-based catalog image, as `opm generate dockerfile` writes it: opm
# serving the catalog's directory over gRPC, and the probe OLM's catalog
# pods run. make catalog-build builds it without a container engine
# (hack/image) from the catalog and the cache hack/olm/catalog.sh writes.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/opm /bin/opm
COPY --from=builder /workspace/grpc_health_probe /bin/grpc_health_probe
COPY catalog /configs
# opm opens the cache for writing, as the catalog pod's user (OLM's 1001).
COPY --chown=1001 cache /tmp/cache
LABEL operators.operatorframework.io.index.configs.v1=/configs
USER 65532:65532
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
