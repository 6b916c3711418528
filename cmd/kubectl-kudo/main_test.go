package main

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestKUDOsCommandsAndFlags: every command, alias, flag and short flag of
// KUDO v0.19's kubectl kudo is one of ours, so that KUDO users' scripts run.
func TestKUDOsCommandsAndFlags(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := newRootCmd(streams)
	root.InitDefaultHelpCmd()
	root.InitDefaultVersionFlag()
	f, err := os.Open("testdata/kudo-v0.19-commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, rest, _ := strings.Cut(line+" ", " --")
		path, alias, _ := strings.Cut(strings.TrimSpace(path), " alias=")
		cmd, args, err := root.Find(strings.Fields(path)[1:])
		if err != nil || len(args) > 0 {
			t.Errorf("%s: no such command", path)
			continue
		}
		if alias != "" && !slices.Contains(cmd.Aliases, alias) {
			t.Errorf("%s: no alias %s", path, alias)
		}
		if rest = strings.TrimSpace(rest); rest != "" {
			checkFlag(t, cmd, path, rest)
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
}

// checkFlag finds "name[,-short]" on cmd, inherited flags included.
func checkFlag(t *testing.T, cmd *cobra.Command, path, spec string) {
	t.Helper()
	name, short, _ := strings.Cut(spec, ",-")
	flag := cmd.Flag(name)
	switch {
	case flag == nil:
		t.Errorf("%s: no flag --%s", path, name)
	case short != "" && flag.Shorthand != short:
		t.Errorf("%s: flag --%s has no short flag -%s", path, name, short)
	}
}
