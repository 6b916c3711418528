# cert-manager's controller image, as cert-manager's own makes it, on distroless:
# hack/olm/v1-up.sh builds it without a container engine (hack/image) from the
# binary `make olm-v1-tools` builds from the module proxy.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/cert-manager-controller /app/cmd/controller/controller
USER 65532:65532
ENTRYPOINT ["/app/cmd/controller/controller"]
