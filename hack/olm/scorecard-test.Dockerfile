# The image of operator-sdk's scorecard tests (its basic and OLM suites), as
# operator-sdk's images/scorecard-test/Dockerfile makes it, on distroless
# rather than UBI: `make scorecard` builds it without a container engine
# (hack/image) from the binary `make scorecard-test` builds from the module
# proxy, and runs the bundle's scorecard configuration with it.
FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/scorecard-test /usr/local/bin/scorecard-test
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/scorecard-test"]
