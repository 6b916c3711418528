package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// elfExecutable writes a Linux ELF executable for machine that is not a Go
// binary, as busybox is: static, or dynamically linked with an interpreter.
func elfExecutable(t *testing.T, machine elf.Machine, interpreter string) string {
	t.Helper()
	const headerSize, progSize = 64, 56
	progs := 1
	if interpreter != "" {
		progs = 2
	}
	dataOffset := uint64(headerSize + progs*progSize)
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_LINUX)})
	b.Write(make([]byte, 8))
	_ = binary.Write(&b, le, struct {
		Type, Machine                                        uint16
		Version                                              uint32
		Entry, Phoff, Shoff                                  uint64
		Flags                                                uint32
		Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstrndx uint16
	}{uint16(elf.ET_EXEC), uint16(machine), uint32(elf.EV_CURRENT), 0x400000, headerSize, 0, 0,
		headerSize, progSize, uint16(progs), 64, 0, 0})
	prog := func(typ elf.ProgType, off, size uint64) {
		_ = binary.Write(&b, le, elf.Prog64{Type: uint32(typ), Flags: uint32(elf.PF_R | elf.PF_X),
			Off: off, Vaddr: 0x400000 + off, Paddr: 0x400000 + off, Filesz: size, Memsz: size, Align: 1})
	}
	prog(elf.PT_LOAD, 0, dataOffset)
	if interpreter != "" {
		prog(elf.PT_INTERP, dataOffset, uint64(len(interpreter)+1))
		b.WriteString(interpreter + "\x00")
	}
	p := filepath.Join(t.TempDir(), "busybox")
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostMachine is the ELF machine of the GOARCH the tests run on.
func hostMachine(t *testing.T) elf.Machine {
	t.Helper()
	m, ok := elfMachines[runtime.GOARCH]
	if !ok {
		t.Fatalf("no ELF machine for GOARCH=%s", runtime.GOARCH)
	}
	return m
}

func TestBinaryFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    binaryFlag
		wantErr string
	}{
		{[]string{"olm=bin/olm-olm", "busybox=/bin/busybox"}, binaryFlag{"olm": "bin/olm-olm", "busybox": "/bin/busybox"}, ""},
		{[]string{"manager=bin/manager=linux"}, binaryFlag{"manager": "bin/manager=linux"}, ""},
		{[]string{"bin/manager-linux-amd64"}, nil, "want NAME=PATH"},
		{[]string{"=bin/manager"}, nil, "want NAME=PATH"},
		{[]string{"manager="}, nil, "want NAME=PATH"},
		{[]string{"workspace/manager=bin/manager"}, nil, "want NAME=PATH"},
		{[]string{"olm=bin/olm-olm", "olm=bin/olm"}, nil, "olm given twice"},
	} {
		got := binaryFlag{}
		var err error
		for _, a := range tc.args {
			if err = got.Set(a); err != nil {
				break
			}
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("--binary %v: got error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("--binary %v: %v", tc.args, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("--binary %v (-want +got):\n%s", tc.args, d)
		}
	}
}

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, contents string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	busybox := elfExecutable(t, hostMachine(t), "")
	dir := t.TempDir()
	dockerfile := writeFile(t, dir, "Dockerfile", builder+"FROM gcr.io/distroless/static:nonroot\n"+
		"COPY --from=builder /bin/busybox /bin/cp\nCOPY catalog /configs\n")
	writeFile(t, dir, "catalog/index.yaml", "schema: olm.package\n")
	var out bytes.Buffer
	err := run(options{
		dockerfile: dockerfile, context: dir, tag: "registry.test:5000/olm:v0.28.0", arch: runtime.GOARCH,
		output: filepath.Join(dir, "image/olm.tar"), binaries: binaryFlag{"busybox": busybox},
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^registry.test:5000/olm:v0.28.0 sha256:[0-9a-f]{64} [0-9.]+ MiB\n$`).MatchString(out.String()) {
		t.Errorf("summary %q, want the tag, digest and size", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "image/olm.tar")); err != nil {
		t.Error(err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "catalog/index.yaml", "schema: olm.package\n")
	if err := os.Symlink("catalog", filepath.Join(dir, "configs")); err != nil {
		t.Fatal(err)
	}
	manager := writeFile(t, dir, "manager", "not a binary")
	const final = builder + "FROM gcr.io/distroless/static:nonroot\n"
	for _, tc := range []struct {
		name, dockerfile string
		binaries         binaryFlag
		want             string
	}{{
		name:       "an unused --binary",
		dockerfile: final + "COPY catalog /configs\n",
		binaries:   binaryFlag{"manager": manager},
		want:       "Dockerfile: --binary manager is unused: the final stage copies no manager from the builder stage",
	}, {
		name:       "a missing --binary",
		dockerfile: final + "COPY --from=builder /workspace/olm /workspace/cpb /bin/\n",
		binaries:   binaryFlag{"olm": manager},
		want:       "Dockerfile: no --binary cpb=<host path> for the builder stage's /workspace/cpb",
	}, {
		name:       "not a binary",
		dockerfile: final + "COPY --from=builder /workspace/manager .\n",
		binaries:   binaryFlag{"manager": manager},
		want:       "--binary manager=" + manager + ": neither a Go binary nor an ELF executable",
	}, {
		name:       "COPY escaping the context",
		dockerfile: final + "COPY ../catalog /configs\n",
		want:       "Dockerfile: line 4: COPY: ../catalog is outside the build context",
	}, {
		name:       "a symbolic link",
		dockerfile: final + "COPY configs /configs\n",
		want:       "Dockerfile: line 4: COPY: " + filepath.Join(dir, "configs") + " is a symbolic link",
	}, {
		name:       "CMD in shell form",
		dockerfile: final + "COPY catalog /configs\nCMD serve /configs\n",
		want:       "Dockerfile: line 5: CMD: want the JSON form",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o := options{
				dockerfile: writeFile(t, t.TempDir(), "Dockerfile", tc.dockerfile),
				context:    dir, arch: "amd64", binaries: tc.binaries, tag: "registry.test:5000/olm:v0.28.0",
			}
			err := run(o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"amd64": "arm64"}[runtime.GOARCH]
	if other == "" {
		other = "amd64"
	}
	notELF := writeFile(t, t.TempDir(), "script.sh", "#!/bin/sh\n")
	static := elfExecutable(t, hostMachine(t), "")
	dynamic := elfExecutable(t, hostMachine(t), "/lib64/ld-linux-x86-64.so.2")
	for _, tc := range []struct {
		name, binary, arch, want string
	}{
		{"a Go binary is checked by its build settings", self, other, "built with"},
		{"a static ELF", static, runtime.GOARCH, ""},
		{"a static ELF for another machine", static, other, "an ELF executable for EM_"},
		{"an arch with no known ELF machine", static, "mips64", "no ELF machine for GOARCH=mips64"},
		{"a dynamic ELF", dynamic, runtime.GOARCH, "dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2)"},
		{"not ELF", notELF, runtime.GOARCH, "neither a Go binary nor an ELF executable"},
		{"no file", filepath.Join(t.TempDir(), "olm"), runtime.GOARCH, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBinary(tc.binary, tc.arch)
			if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckGoBuild(t *testing.T) {
	settings := func(goos, arch, cgo string) *debug.BuildInfo {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: cgo}, {Key: "GOARCH", Value: arch}, {Key: "GOOS", Value: goos},
		}}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"static linux/amd64", settings("linux", "amd64", "0"), ""},
		{"another arch", settings("linux", "arm64", "0"), "built with GOARCH=arm64, the image needs GOARCH=amd64"},
		{"cgo", settings("linux", "amd64", "1"), "built with CGO_ENABLED=1"},
		{"darwin", settings("darwin", "amd64", "0"), "built with GOOS=darwin"},
		{"no settings", &debug.BuildInfo{}, "its build settings lack CGO_ENABLED, GOARCH, GOOS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkGoBuild(tc.info, "amd64")
			if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSourceDate(t *testing.T) {
	for _, tc := range []struct {
		epoch   string
		want    time.Time
		wantErr bool
	}{
		{"", epoch, false},
		{"1700000000", time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), false},
		{"yesterday", time.Time{}, true},
	} {
		got, err := sourceDate(tc.epoch)
		if !got.Equal(tc.want) || (err != nil) != tc.wantErr {
			t.Errorf("sourceDate(%q) = %v, %v; want %v, error %t", tc.epoch, got, err, tc.want, tc.wantErr)
		}
	}
}
