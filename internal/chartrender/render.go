// Package chartrender renders Helm charts with Helm's own library (helm.sh/helm/v4)
// in a process of its own: Helm's template engine has no budget of time or
// memory, and a chart is a program whoever can install a package writes, so
// the manager runs it where a deadline kills it and a memory limit stops it,
// as Argo CD's repo-server does. The child is the same binary, started
// with ServeArg (serve.go).
package chartrender

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/kudo-ng/kudo/internal/fair"
)

// ServeArg is the first argument that makes a binary render one chart.
const ServeArg = "kudo-chart-render"

// memoryLimitEnv passes the child its memory limit.
const memoryLimitEnv = "KUDO_CHART_RENDER_MEMORY"

// Request is one render of a chart.
type Request struct {
	// Chart is the chart, a gzip tarball as `helm package` writes it.
	Chart []byte `json:"chart"`
	// Values are the values the task passes, over the chart's own.
	Values map[string]any `json:"values,omitempty"`
	// Release is what .Release says.
	Release Release `json:"release"`
	// KubeVersion and APIVersions are what .Capabilities says of the
	// cluster the objects go to; empty, what `helm template` says.
	KubeVersion string   `json:"kubeVersion"`
	APIVersions []string `json:"apiVersions,omitempty"`
}

// Release is the release a render is of: the Instance.
type Release struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
	IsUpgrade bool   `json:"isUpgrade"`
}

// Result is a chart rendered: its objects in Helm's install order, split
// as Helm splits them.
type Result struct {
	// CRDs are the chart's crds/ files, applied first and never templated.
	CRDs []Manifest `json:"crds,omitempty"`
	// Manifests are the objects of its templates that are no hooks.
	Manifests []Manifest `json:"manifests,omitempty"`
	// Hooks are those that are.
	Hooks []Hook `json:"hooks,omitempty"`
	// Notes is what its NOTES.txt renders.
	Notes string `json:"notes,omitempty"`
}

// Manifest is one object's YAML, and the template it came from.
type Manifest struct {
	Template string `json:"template"`
	Content  string `json:"content"`
}

// Hook is an object of a hook (helm.sh/hook): when it runs, in which order
// among those of the same event, and when it is deleted.
type Hook struct {
	Manifest
	Kind           string   `json:"kind"`
	Name           string   `json:"name"`
	Events         []string `json:"events"`
	Weight         int      `json:"weight,omitempty"`
	DeletePolicies []string `json:"deletePolicies,omitempty"`
}

// renders bounds how many charts render at once, whatever the reconcilers
// do: each is a process of up to Limits.Memory. The slots go to
// namespaces in turn, so that one namespace's charts wait for each other.
var renders = fair.NewSlots(max(1, runtime.GOMAXPROCS(0)/2))

// rendered keeps recent results: 32 MiB, of results of up to 4 MiB each.
var rendered = newResultCache(32<<20, 4<<20)

// Limits bound a render.
type Limits struct {
	// Timeout is how long it may take; the child is killed then.
	Timeout time.Duration
	// MaxOutput is the most bytes of the result.
	MaxOutput int
	// Memory is the most memory the child may take.
	Memory int64
	// Share is whose turn at the render slots a render takes: its
	// namespace.
	Share string
}

// DefaultLimits are for a chart of a few hundred objects: cert-manager's
// renders in some 100 ms and 40 MB.
var DefaultLimits = Limits{Timeout: 10 * time.Second, MaxOutput: 16 << 20, Memory: 512 << 20}

// Executable is the binary started to render: this one.
var Executable = os.Executable

// LimitError is a render stopped by its Limits: rendering again stops again.
type LimitError struct{ msg string }

func (e *LimitError) Error() string { return e.msg }

// Render renders a chart in a child process, within limits; a request
// rendered a moment ago is answered from what it rendered then. The result
// is shared: read it, never change it.
func Render(ctx context.Context, req *Request, limits Limits) (*Result, error) {
	input, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(input)
	// Rendered under other limits, a result is not more than these allow.
	if res, size, ok := rendered.get(key); ok && size <= limits.MaxOutput {
		return res, nil
	}
	self, err := Executable()
	if err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	defer renders.Acquire(limits.Share)()
	ctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, ServeArg)
	cmd.Env = []string{memoryLimitEnv + "=" + strconv.FormatInt(limits.Memory, 10)}
	cmd.Stdin = bytes.NewReader(input)
	out := &capped{left: limits.MaxOutput}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &capped{w: &stderr, left: 64 << 10}
	err = cmd.Run()
	switch {
	case out.over:
		return nil, &LimitError{msg: fmt.Sprintf("the chart renders more than the limit of %d bytes", limits.MaxOutput)}
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, &LimitError{msg: fmt.Sprintf("the chart takes longer than the limit of %s to render", limits.Timeout)}
	case err != nil:
		return nil, childError(err, stderr.Bytes())
	}
	res := &Result{}
	if err := json.Unmarshal(out.buf.Bytes(), res); err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	rendered.add(key, res, out.buf.Len())
	return res, nil
}

// childError says why the child failed: what it said, or that it ran out of
// memory.
func childError(err error, stderr []byte) error {
	msg := string(bytes.TrimSpace(stderr))
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == exitRenderFailed && msg != "" {
		return errors.New(msg)
	}
	// Under its data limit, the child's runtime fails to map what it asked
	// for: the heap ("out of memory"), or the stack of a new thread, whose
	// pthread_create then fails with EAGAIN.
	if bytes.Contains(stderr, []byte("out of memory")) || bytes.Contains(stderr, []byte("cannot allocate memory")) ||
		bytes.Contains(stderr, []byte("pthread_create failed: Resource temporarily unavailable")) {
		return &LimitError{msg: "the chart takes more memory than the limit to render"}
	}
	// Render kills a child only at its timeout, said before this: a child
	// killed otherwise is the kernel's choice when the container's memory ran
	// out, which the child's score makes it (yieldToTheOOMKiller).
	if status, ok := exitStatus(exit); ok && status.Signaled() && status.Signal() == syscall.SIGKILL {
		return &LimitError{msg: "the chart takes more memory than the limit to render: the kernel stopped it, out of memory"}
	}
	if msg != "" {
		return fmt.Errorf("rendering the chart: %w: %s", err, msg)
	}
	return fmt.Errorf("rendering the chart: %w", err)
}

// exitStatus is how the child ended, when it ran at all.
func exitStatus(exit *exec.ExitError) (syscall.WaitStatus, bool) {
	if exit == nil {
		return 0, false
	}
	status, ok := exit.Sys().(syscall.WaitStatus)
	return status, ok
}

// capped keeps at most left bytes, and notes when there were more.
type capped struct {
	buf  bytes.Buffer
	w    io.Writer
	left int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if len(p) > c.left {
		c.over = true
		return 0, errors.New("over the limit")
	}
	c.left -= len(p)
	if c.w != nil {
		return c.w.Write(p)
	}
	return c.buf.Write(p)
}
