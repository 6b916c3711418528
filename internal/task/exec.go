package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// ExecCopier reads files by exec'ing `cat` in the container, as kubectl cp
// does. It needs a kubelet that runs the container.
type ExecCopier struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
}

// As is the copier that execs as user, impersonated: with --multi-tenant an
// Instance's service account reads its Pipe files, not the manager.
func (e *ExecCopier) As(user string) FileCopier {
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return &ExecCopier{Config: cfg, Clientset: e.Clientset}
}

// CopyFile returns the content of a file of a running container. The image's
// `cat` runs, not `head -c`, which an image may lack: the limit is kept on
// this side.
func (e *ExecCopier) CopyFile(ctx context.Context, pod *corev1.Pod, container, path string, limit int) ([]byte, error) {
	req := e.Clientset.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: []string{"cat", path}, Stdout: true, Stderr: true},
			scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(e.Config, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	return readCapped(ctx, func(ctx context.Context, stdout, stderr io.Writer) error {
		return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
	}, limit)
}

// streamFunc runs a command, its output written to stdout and stderr, until
// it ends or ctx is done: remotecommand's StreamWithContext, or a test's.
type streamFunc func(ctx context.Context, stdout, stderr io.Writer) error

// errTooLarge is, or is wrapped in, what a FileCopier returns for a file
// longer than its limit.
var errTooLarge = errors.New("more bytes than the copy's limit")

// maxStderr is how much of the command's stderr is kept: it is only quoted
// in the error.
const maxStderr = 4 << 10

// readCapped returns what stream writes to stdout, up to limit bytes: at one
// byte more it tears the stream down and returns errTooLarge, so that a file
// that never ends (/dev/zero) costs limit bytes, not the manager's memory.
func readCapped(ctx context.Context, stream streamFunc, limit int) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdout := &cappedBuffer{limit: limit, stop: cancel}
	stderr := &cappedBuffer{limit: maxStderr}
	err := stream(ctx, stdout, stderr)
	switch {
	case stdout.over():
		return nil, errTooLarge
	case err != nil:
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// cappedBuffer keeps what is written to it up to limit bytes and refuses
// the write that would pass them, so that an io.Copy into it stops there: a
// file of exactly limit bytes fits, one of a byte more does not.
type cappedBuffer struct {
	limit int
	// stop is called when a write is refused: remotecommand drains the rest
	// of a stream whose writer failed, so only tearing it down ends it.
	stop func()

	// The stream's goroutines may still write once StreamWithContext has
	// returned because its context was done.
	mu      sync.Mutex
	buf     bytes.Buffer
	refused bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.buf.Write(p[:room])
	b.refused = true
	if b.stop != nil {
		b.stop()
	}
	return room, errTooLarge
}

// over reports whether a write was refused: more than limit bytes came.
func (b *cappedBuffer) over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
