package params

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor(map[string]string{"PASSWORD": "hunter2-long", "PIN": "42", "USER": "admin", "KEY": "line1\nline2"},
		map[string]bool{"PASSWORD": true, "PIN": true, "KEY": true})
	encoded := base64.StdEncoding.EncodeToString([]byte("hunter2-long"))
	tests := map[string]string{
		"apply failed: value hunter2-long is bad":       "apply failed: value <sensitive PASSWORD> is bad",
		`data: {password: ` + encoded + `}`:             "data: {password: <sensitive PASSWORD>}",
		`invalid value: "line1\nline2"`:                 `invalid value: "<sensitive KEY>"`,
		"user admin, 42 replicas (too short to redact)": "user admin, 42 replicas (too short to redact)",
	}
	for in, want := range tests {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if err := r.Error(errors.New("hunter2-long")); err.Error() != "<sensitive PASSWORD>" {
		t.Errorf("Error = %v", err)
	}
	var none *Redactor
	if none.String("hunter2-long") != "hunter2-long" || none.Error(nil) != nil {
		t.Error("a nil Redactor changes text")
	}
}
