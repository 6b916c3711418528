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

func TestParseDockerfile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		src        string
		wantBinary string
		want       v1.Config
	}{{
		name:       "the real Dockerfile",
		src:        readDockerfile(t),
		wantBinary: "/manager",
		want:       v1.Config{User: "65532:65532", Entrypoint: []string{"/manager"}, WorkingDir: "/", Env: []string{distrolessPath}},
	}, {
		name: "base from a global ARG, the base's user and working directory kept",
		src: "# syntax=docker/dockerfile:1\nARG BASE_IMAGE=\"gcr.io/distroless/static:nonroot\"\n" + builder +
			"FROM ${BASE_IMAGE}\ncopy --from=builder /workspace/manager ./bin/\n",
		wantBinary: "/home/nonroot/bin/manager",
		want:       v1.Config{User: "65532", WorkingDir: "/home/nonroot", Env: []string{distrolessPath}},
	}, {
		name: "ENV and LABEL, quoted and continued; a relative WORKDIR; COPY to a file",
		src: builder + "FROM gcr.io/distroless/static:nonroot AS final\nWORKDIR /srv\nWORKDIR app\n" +
			"ENV PATH=/srv/app GOGC=\"50\"\nLABEL org.opencontainers.image.title=kudo-ng \\\n  # a comment\n" +
			"  description='the kudo-ng manager'\nCOPY --from=builder /workspace/manager /usr/local/bin/kudo\n" +
			"ENTRYPOINT [\"kudo\", \"--leader-elect\"]\n",
		wantBinary: "/usr/local/bin/kudo",
		want: v1.Config{
			User: "65532", WorkingDir: "/srv/app", Entrypoint: []string{"kudo", "--leader-elect"},
			Env:    []string{"PATH=/srv/app", "GOGC=50"},
			Labels: map[string]string{"org.opencontainers.image.title": "kudo-ng", "description": "the kudo-ng manager"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseDockerfile(tc.src, bases)
			if err != nil {
				t.Fatal(err)
			}
			if st.binary != tc.wantBinary {
				t.Errorf("binary at %s, want %s", st.binary, tc.wantBinary)
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
		{"CMD", builder + final + copyBinary + "CMD [\"--help\"]\n", "line 5: CMD: not supported"},
		{"COPY from the context", builder + final + "COPY manager /manager\n", "line 4: COPY: only COPY --from=<builder stage>"},
		{"COPY from an unknown stage", builder + final + "COPY --from=build /workspace/manager .\n", "line 4: COPY: only COPY --from="},
		{"COPY with --chmod", builder + final + "COPY --from=builder --chmod=0700 /workspace/manager .\n", "line 4: COPY: only COPY --from="},
		{"a second COPY", builder + final + copyBinary + copyBinary, "line 5: COPY: a second COPY"},
		{"no COPY", builder + final + "USER 65532\n", "line 3: FROM: the final stage has no COPY"},
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
