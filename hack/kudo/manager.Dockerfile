# KUDO v0.19's manager image, as its own Dockerfile makes it (the binary at
# /root/manager on scratch), from the binary `make kudo-v0.19` builds from
# kudobuilder/kudo's module: test/migration runs it, then switches to kudo-ng.
FROM golang:1.15 AS builder
FROM scratch
WORKDIR /root/
COPY --from=builder /workspace/manager /root/manager
ENTRYPOINT ["./manager"]
