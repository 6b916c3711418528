// Package version tells which build of kudo-ng is running.
package version

import "runtime/debug"

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
