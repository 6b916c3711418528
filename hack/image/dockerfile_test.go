package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const distrolessPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func readDockerfile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

const builder = "FROM golang:1.25 AS Builder\nRUN go build -o /workspace/manager .\n"

// The example Dockerfiles of OLM's images, built on the host as hack/image builds them.
const (
	olmDockerfile = `FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/olm /bin/olm
COPY --from=builder /workspace/catalog /bin/catalog
COPY --from=builder /workspace/package-server /bin/package-server
COPY --from=builder /workspace/copy-content /bin/copy-content
COPY --from=builder /workspace/cpb /bin/cpb
COPY --from=builder /bin/busybox /bin/cp
USER 65532:65532
`
	catalogDockerfile = `FROM golang:1.25 AS builder
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/opm /bin/opm
COPY --from=builder /workspace/grpc_health_probe /bin/grpc_health_probe
COPY catalog /configs
COPY --chown=1001 catalog/kudo-ng /tmp/cache
LABEL operators.operatorframework.io.index.configs.v1=/configs
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
`
)

func readBundleDockerfile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../bundle.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestParseDockerfile(t *testing.T) {
	const final = builder + "FROM gcr.io/distroless/static:nonroot\nCOPY --from=builder /workspace/manager .\n"
	for _, tc := range []struct {
		name         string
		src          string
		wantBinaries map[string]string
		want         v1.Config
	}{{
		name:         "the real Dockerfile",
		src:          readDockerfile(t),
		wantBinaries: map[string]string{"manager": "/workspace/manager"},
		want:         v1.Config{User: "65532:65532", Entrypoint: []string{"/manager"}, WorkingDir: "/", Env: []string{distrolessPath}},
	}, {
		name: "base from a global ARG, the base's user and working directory kept",
		src: "# syntax=docker/dockerfile:1\nARG BASE_IMAGE=\"gcr.io/distroless/static:nonroot\"\n" + builder +
			"FROM ${BASE_IMAGE}\ncopy --from=builder /workspace/manager ./bin/\n",
		wantBinaries: map[string]string{"manager": "/workspace/manager"},
		want:         v1.Config{User: "65532", WorkingDir: "/home/nonroot", Env: []string{distrolessPath}},
	}, {
		name: "ENV and LABEL, quoted and continued; a relative WORKDIR; COPY to a file",
		src: builder + "FROM gcr.io/distroless/static:nonroot AS final\nWORKDIR /srv\nWORKDIR app\n" +
			"ENV PATH=/srv/app GOGC=\"50\"\nLABEL org.opencontainers.image.title=kudo-ng \\\n  # a comment\n" +
			"  description='the kudo-ng manager'\nCOPY --from=builder /workspace/manager /usr/local/bin/kudo\n" +
			"ENTRYPOINT [\"kudo\", \"--leader-elect\"]\n",
		wantBinaries: map[string]string{"manager": "/workspace/manager"},
		want: v1.Config{
			User: "65532", WorkingDir: "/srv/app", Entrypoint: []string{"kudo", "--leader-elect"},
			Env:    []string{"PATH=/srv/app", "GOGC=50"},
			Labels: map[string]string{"org.opencontainers.image.title": "kudo-ng", "description": "the kudo-ng manager"},
		},
	}, {
		name: "OLM's image: several binaries, one of them not Go's",
		src:  olmDockerfile,
		wantBinaries: map[string]string{
			"olm": "/workspace/olm", "catalog": "/workspace/catalog", "package-server": "/workspace/package-server",
			"copy-content": "/workspace/copy-content", "cpb": "/workspace/cpb", "busybox": "/bin/busybox",
		},
		want: v1.Config{User: "65532:65532", WorkingDir: "/", Env: []string{distrolessPath}},
	}, {
		name:         "the catalog image: ENTRYPOINT keeps the CMD before it",
		src:          catalogDockerfile,
		wantBinaries: map[string]string{"opm": "/workspace/opm", "grpc_health_probe": "/workspace/grpc_health_probe"},
		want: v1.Config{
			User: "65532", WorkingDir: "/", Env: []string{distrolessPath},
			Entrypoint: []string{"/bin/opm"}, Cmd: []string{"serve", "/configs", "--cache-dir=/tmp/cache"},
			Labels: map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		},
	}, {
		name:         "CMD before ENTRYPOINT is kept too",
		src:          final + "CMD [\"--help\"]\nENTRYPOINT [\"/manager\"]\n",
		wantBinaries: map[string]string{"manager": "/workspace/manager"},
		want: v1.Config{
			User: "65532", WorkingDir: "/home/nonroot", Env: []string{distrolessPath},
			Entrypoint: []string{"/manager"}, Cmd: []string{"--help"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseDockerfile(tc.src, bases)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantBinaries, st.binaries); d != "" {
				t.Errorf("binaries (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want, st.config); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
	if bases["gcr.io/distroless/static:nonroot"].config.Env[0] != distrolessPath {
		t.Error("parsing changed the base's own config")
	}
}

func TestParseDockerfileErrors(t *testing.T) {
	const final = "FROM gcr.io/distroless/static:nonroot\n"
	const copyBinary = "COPY --from=builder /workspace/manager .\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"no FROM", "ARG A=1\n", "no FROM instruction"},
		{"before the first FROM", "ENV A=1\n" + builder + final, "line 1: ENV: only ARG may come before the first FROM"},
		{"an unknown base", builder + "\n\nFROM alpine:3.22\n", "line 5: FROM: no local stand-in for the base alpine:3.22"},
		{"an ARG with no default", "ARG BASE\n" + builder + "FROM $BASE\n", "line 4: FROM: no ARG with a default before the first FROM gives BASE"},
		{"an ARG with a modifier", builder + "FROM ${BASE:-gcr.io/distroless/static:nonroot}\n", "line 3: FROM: no ARG with a default"},
		{"FROM with a flag", builder + "FROM --platform=linux/arm64 gcr.io/distroless/static:nonroot\n", "line 3: FROM: want FROM <image>"},
		{"RUN in the final stage", builder + final + "RUN \\\n  true\n" + copyBinary, "line 4: RUN: not supported by the offline image build"},
		{"CMD in shell form", builder + final + copyBinary + "CMD serve /configs\n", "line 5: CMD: want the JSON form"},
		{"COPY from an unknown stage", builder + final + "COPY --from=build /workspace/manager .\n",
			"line 4: COPY: --from=build is not an earlier stage named with AS"},
		{"COPY from an image", builder + final + "COPY --from=busybox:1.37 /bin/busybox /bin/\n", "line 4: COPY: --from=busybox:1.37 is not"},
		{"COPY with --chmod", builder + final + "COPY --from=builder --chmod=0700 /workspace/manager .\n",
			"line 4: COPY: --chmod=0700 is not supported"},
		{"COPY with --chown of a name", builder + final + "COPY --chown=nonroot catalog /configs\n",
			"line 4: COPY: --chown=nonroot: want <uid>[:<gid>] as numbers"},
		{"COPY with no destination", builder + final + "COPY --from=builder /workspace/manager\n", "line 4: COPY: want COPY [--from"},
		{"COPY in JSON form", builder + final + "COPY [\"catalog\", \"/configs\"]\n", "line 4: COPY: want COPY [--from"},
		{"COPY escaping the context", builder + final + "COPY catalog/../../secrets /configs\n",
			"line 4: COPY: catalog/../../secrets is outside the build context"},
		{"COPY with a wildcard", builder + final + "COPY bundle/*.yaml /manifests/\n", "line 4: COPY: bundle/*.yaml: wildcards are not supported"},
		{"two binaries of one name", builder + final + "COPY --from=builder /workspace/olm /bin/olm\nCOPY --from=builder /bin/olm /olm\n",
			"line 5: COPY: /workspace/olm and /bin/olm share the name --binary olm=<path> gives"},
		{"no COPY", builder + final + "WORKDIR /srv\nUSER 65532\n", "line 3: FROM: the final stage copies nothing"},
		{"ENTRYPOINT in shell form", builder + final + copyBinary + "ENTRYPOINT /manager\n", "line 5: ENTRYPOINT: want the JSON form"},
		{"a variable", builder + final + copyBinary + "ENV PATH=$PATH:/bin\n", "line 5: ENV: variables are not supported"},
		{"the legacy ENV form", builder + final + copyBinary + "ENV GOGC 50\n", "line 5: ENV: want key=value"},
		{"an unterminated quote", builder + final + copyBinary + "LABEL a=\"b\n", "line 5: LABEL: unterminated quote"},
		{"no arguments", builder + final + copyBinary + "USER\n", "line 5: USER: no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDockerfile(tc.src, bases)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
