// Package version tells which build of kudo-ng is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X github.com/kudo-ng/kudo/internal/version.Version=v1.2.3";
// without it the module version of the build, or "devel", is reported.
var Version = ""

// Get returns the version of this build.
func Get() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// Info is the build, as KUDO's kubectl kudo version printed it.
type Info struct {
	GitVersion              string `json:"gitVersion"`
	GitCommit               string `json:"gitCommit"`
	BuildDate               string `json:"buildDate"`
	GoVersion               string `json:"goVersion"`
	Compiler                string `json:"compiler"`
	Platform                string `json:"platform"`
	KubernetesClientVersion string `json:"kubernetesClientVersion"`
}

// Current describes this build: its version, the commit and time it was
// built from when the build recorded them, and its client-go's version.
func Current() Info {
	info := Info{GitVersion: Get(), GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	for _, s := range build.Settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.time":
			info.BuildDate = s.Value
		}
	}
	for _, dep := range build.Deps {
		if dep.Path == "k8s.io/client-go" {
			info.KubernetesClientVersion = dep.Version
		}
	}
	return info
}
