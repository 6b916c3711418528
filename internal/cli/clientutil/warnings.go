package clientutil

import (
	"context"
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// warnings prints the API server's warnings, admission's among them, once
// each, as kubectl does; not those of a request whose command printed them
// already (Warned).
type warnings struct {
	out  io.Writer
	mu   sync.Mutex
	seen sets.Set[string]
}

func newWarnings(out io.Writer) *warnings { return &warnings{out: out, seen: sets.New[string]()} }

// HandleWarningHeaderWithContext is rest.WarningHandlerWithContext's: 299 is
// the code of a warning.
func (w *warnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _, text string) {
	if code != 299 || text == "" || ctx.Value(warnedKey{}) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen.Has(text) {
		return
	}
	w.seen.Insert(text)
	_, _ = fmt.Fprintf(w.out, "Warning: %s\n", text)
}

type warnedKey struct{}

// Warned marks requests whose admission warnings the command printed
// already: install and upgrade print those of the package they verify,
// which the OperatorVersion's admission says again.
func Warned(ctx context.Context) context.Context { return context.WithValue(ctx, warnedKey{}, true) }
