package clientutil

import (
	"bytes"
	"context"
	"testing"
)

// TestWarningsArePrintedOnceUnlessTheCommandSaidThem: admission's warnings
// reach the user as kubectl prints them, once each; those of the
// OperatorVersion a command verified, and said, are not said twice.
func TestWarningsArePrintedOnceUnlessTheCommandSaidThem(t *testing.T) {
	var out bytes.Buffer
	w := newWarnings(&out)
	ctx := context.Background()
	w.HandleWarningHeaderWithContext(ctx, 299, "-", "spec.parameters[0]: a warning")
	w.HandleWarningHeaderWithContext(ctx, 299, "-", "spec.parameters[0]: a warning")
	w.HandleWarningHeaderWithContext(Warned(ctx), 299, "-", "said by the command already")
	w.HandleWarningHeaderWithContext(ctx, 199, "-", "not a warning")
	if want := "Warning: spec.parameters[0]: a warning\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
