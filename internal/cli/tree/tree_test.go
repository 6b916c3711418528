package tree

import (
	"strings"
	"testing"
)

// TestString: KUDO's trees (treeprint v1.0.0), whose lines below a node
// that has more after it start with │ and two no-break spaces.
func TestString(t *testing.T) {
	root := New("plans")
	deploy := root.Add("deploy (serial)")
	step := deploy.AddMeta("phase", "main (parallel)").AddMeta("step", "everything")
	step.AddMeta("apply", "app").Add("deployment.yaml")
	step.Add("check")
	root.Add("update (serial)")
	want := `plans
├── deploy (serial)
│   └── [phase]  main (parallel)
│       └── [step]  everything
│           ├── [apply]  app
│           │   └── deployment.yaml
│           └── check
└── update (serial)
`
	want = strings.ReplaceAll(want, "│   ", "│\u00a0\u00a0 ")
	if got := root.String(); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}
