package prompt

import (
	"errors"
	"strings"
	"testing"
)

func TestQuestions(t *testing.T) {
	var out strings.Builder
	p := New(strings.NewReader("\nab\nabc\n2\nweekly\n\nY\n\n"), &out)
	atLeast3 := func(s string) error {
		if len(s) < 3 {
			return errors.New("must have 3 characters or more")
		}
		return nil
	}
	if got, err := p.Text("Operator Version", "0.1.0", nil); err != nil || got != "0.1.0" {
		t.Errorf("the default: %q, %v", got, err)
	}
	if got, err := p.Text("Operator Name", "", atLeast3); err != nil || got != "abc" {
		t.Errorf("asked again after a refused answer: %q, %v", got, err)
	}
	if got, err := p.Select("Task Kind", []string{"Apply", "Delete"}, false); err != nil || got != "Delete" {
		t.Errorf("by number: %q, %v", got, err)
	}
	if got, err := p.Select("Trigger Plan", []string{"deploy", "update"}, false); err != nil || got != "deploy" {
		t.Errorf("an unknown option, then the default: %q, %v", got, err)
	}
	if got, err := p.Confirm("Add another"); err != nil || !got {
		t.Errorf("Y: %t, %v", got, err)
	}
	if got, err := p.Confirm("Add another"); err != nil || got {
		t.Errorf("no answer is no: %t, %v", got, err)
	}
	if _, err := p.Text("More", "", nil); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("after the input: %v", err)
	}
	for _, want := range []string{"Operator Version [0.1.0]: ", "✗ must have 3 characters or more\n", "  2) Delete\n",
		`✗ "weekly" is not one of deploy, update`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
