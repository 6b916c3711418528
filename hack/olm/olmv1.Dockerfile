# OLM v1's image: operator-controller and catalogd where their own Dockerfiles
# (Dockerfile.operator-controller, Dockerfile.catalogd) put them, one image for
# both, whose Deployments name the command. hack/olm/v1-up.sh builds it without
# a container engine (hack/image) from the binaries `make olm-v1-tools` builds
# from the module proxy.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/operator-controller /operator-controller
COPY --from=builder /workspace/catalogd /catalogd
USER 65532:65532
