package task

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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

// CopyFile returns the content of a file of a running container.
func (e *ExecCopier) CopyFile(ctx context.Context, pod *corev1.Pod, container, path string) ([]byte, error) {
	req := e.Clientset.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: []string{"cat", path}, Stdout: true, Stderr: true},
			scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(e.Config, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}
