package packages

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestEditFileKeepsWhatTheAuthorWrote: comments and order stay around what
// the generators add.
func TestEditFileKeepsWhatTheAuthorWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "operator.yaml")
	original := `# The web operator.
name: web
operatorVersion: "0.1.0"
tasks: [] # none yet
plans:
  deploy: # the first
    phases: []
`
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	err := EditFile(path, func(top *yaml.Node) error {
		if err := Append(top, "tasks", kudov1beta1.Task{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"app.yaml"}}}}); err != nil {
			return err
		}
		if err := Append(top, "maintainers", kudov1beta1.Maintainer{Name: "Ada", Email: "ada@example.com"}); err != nil {
			return err
		}
		return Set(top, "plans", "update", kudov1beta1.Plan{Strategy: kudov1beta1.Serial})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `# The web operator.
name: web
operatorVersion: "0.1.0"
tasks: # none yet
  - name: app
    kind: Apply
    spec:
      resources:
        - app.yaml
plans:
  deploy: # the first
    phases: []
  update:
    strategy: serial
maintainers:
  - name: Ada
    email: ada@example.com
`
	if string(got) != want {
		t.Errorf("edited:\n%s\nwant:\n%s", got, want)
	}
}
