# Build the manager binary
FROM golang:1.25 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Cache the modules before copying the source, so a source change does not
# download them again.
COPY go.mod go.mod
COPY go.sum go.sum
RUN go mod download

COPY main.go main.go
COPY options.go options.go
COPY api/ api/
COPY controllers/ controllers/
COPY internal/ internal/

# GOARCH has no default, so the binary is built for the platform of the host
# running the build unless --platform says otherwise. No build ID, so that the
# same sources give the same binary; make docker-build uses the same flags.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="-s -w -buildid=" -o manager .

# distroless: the manager binary and nothing else, as a non-root user.
# make docker-build applies this stage without a container engine
# (hack/image): an instruction it does not support here is an error there.
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager .
USER 65532:65532

ENTRYPOINT ["/manager"]
