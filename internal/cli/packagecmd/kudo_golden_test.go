package packagecmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kudoTestdata holds KUDO v0.19's own golden files and the packages it
// made them from, copied from its module's pkg/kudoctl/cmd/testdata (and
// zk.tgz from pkg/kudoctl/packages/testdata).
var kudoTestdata = filepath.Join("testdata", "kudo-v0.19")

// TestOutputIsKUDOsGoldenFiles: KUDO's golden files of package list and
// package verify are what our commands print, byte for byte, from the same
// packages. Verify runs against the Kubernetes version KUDO's golden files
// knew (policy/v1beta1 still served), on invalidzk without the field its
// Job template sets that Kubernetes does not declare: kudo-ng warns of both,
// KUDO said nothing (TestVerifySaysMoreThanKUDOAfterKUDOsFindings).
func TestOutputIsKUDOsGoldenFiles(t *testing.T) {
	zk := filepath.Join(kudoTestdata, "zk.tgz")
	invalid := invalidZKWithDeclaredFieldsOnly(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"params-list.golden", []string{"list", "parameters", zk}},
		{"plans-list.golden", []string{"list", "plans", zk}},
		{"plans-with-tasks-list.golden", []string{"list", "plans", "--with-tasks", zk}},
		{"tasks-list.golden", []string{"list", "tasks", zk}},
		{"invalid-params.txt.golden", []string{"verify", invalid, "--kubernetes-version", "1.20"}},
		{"invalid-params.yaml.golden", []string{"verify", invalid, "--kubernetes-version", "1.20", "-o", "yaml"}},
		{"invalid-params.json.golden", []string{"verify", invalid, "--kubernetes-version", "1.20", "-o", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(kudoTestdata, tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			out, err := kudoPackage(t, "", tt.args...)
			if tt.args[0] == "verify" {
				if err == nil || err.Error() != "found 4 package verification errors" {
					t.Errorf("error %v, want KUDO's", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("kubectl kudo package %s:\n%q\nwant KUDO's\n%q", strings.Join(tt.args, " "), out, want)
			}
		})
	}
}

// TestVerifySaysMoreThanKUDOAfterKUDOsFindings: of KUDO's own invalidzk as
// it is, verify lists what KUDO's did, in its words and order, and after
// it what KUDO did not see, each where it is: a PodDisruptionBudget of a
// version Kubernetes 1.34 no longer serves, a field Kubernetes does not
// declare.
func TestVerifySaysMoreThanKUDOAfterKUDOsFindings(t *testing.T) {
	var kudos, ours result
	data, err := os.ReadFile(filepath.Join(kudoTestdata, "invalid-params.json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &kudos); err != nil {
		t.Fatal(err)
	}
	out, _ := kudoPackage(t, "", "verify", filepath.Join(kudoTestdata, "invalidzk"), "-o", "json")
	if err := json.Unmarshal([]byte(out), &ours); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Equal(ours.Errors, kudos.Errors) {
		t.Errorf("errors %q, want KUDO's %q", ours.Errors, kudos.Errors)
	}
	n := len(kudos.Warnings)
	if len(ours.Warnings) != n+2 || !slices.Equal(ours.Warnings[:n], kudos.Warnings) ||
		!strings.HasPrefix(ours.Warnings[n], `templates/pdb.yaml: PodDisruptionBudget "zookeeper-instance-pdb": policy/v1beta1 → policy/v1`) ||
		!strings.HasPrefix(ours.Warnings[n+1], `templates/validation.yaml: Job "zookeeper-validation": dropped field spec.template.spec.containers[0].resources.command`) {
		t.Errorf("warnings %q, want KUDO's %q and then two of kudo-ng's", ours.Warnings, kudos.Warnings)
	}
}

// invalidZKWithDeclaredFieldsOnly is a copy of KUDO's invalidzk whose Job
// template no longer sets resources.command, a field Kubernetes does not
// declare.
func invalidZKWithDeclaredFieldsOnly(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "invalidzk")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(kudoTestdata, "invalidzk"))); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "templates", "validation.yaml")
	data, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	before, after, found := strings.Cut(string(data), "          command:\n")
	if !found {
		t.Fatal("KUDO's validation.yaml has no resources.command")
	}
	// The command's lines are those indented deeper than it.
	rest := strings.SplitAfter(after, "\n")
	k := slices.IndexFunc(rest, func(line string) bool { return !strings.HasPrefix(line, "           ") })
	if err := os.WriteFile(job, []byte(before+strings.Join(rest[k:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
