package task

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/render"
)

// FileCopier reads a file out of a running container. The real one execs
// into the pod, which needs a node that runs containers.
type FileCopier interface {
	CopyFile(ctx context.Context, pod *corev1.Pod, container, file string) ([]byte, error)
}

// pipeContainer is the container kudo-ng adds to a Pipe pod: it keeps the
// pod running, with the files its init container wrote, until they are read.
const pipeContainer = "kudo-pipe"

// maxPipeFile is the most a Secret or ConfigMap can hold.
const maxPipeFile = 1 << 20

// Pipe runs a pod whose init container writes files, stores each file as a
// Secret or ConfigMap that later templates of the plan name as
// {{ .Pipes.<key> }}, then deletes the pod.
type Pipe struct {
	Name string
	Spec kudov1beta1.PipeTaskSpec
}

// Run stores the files once, and is done when all are stored.
func (p *Pipe) Run(ctx context.Context, env *Env) (Result, error) {
	names := engine.PipeNames(env.OperatorVersion, env.Instance.Name)
	stored, err := p.stored(ctx, env, names)
	if err != nil || stored {
		return Result{Done: stored}, err
	}
	pod, err := p.pod(env)
	if err != nil {
		return Result{}, err
	}
	current, err := applyOne(ctx, env, pod)
	if err != nil {
		return Result{}, err
	}
	if verdict := health.Check(current); !verdict.Healthy {
		msg := fmt.Sprintf("waiting for pipe pod %s to run", pod.GetName())
		if problem := health.PodProblem(current); problem != "" {
			msg += ": " + problem
		}
		return Result{Message: msg}, nil
	}
	typed := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(current.Object, typed); err != nil {
		return Result{}, err
	}
	for _, spec := range p.Spec.Pipe {
		if err := p.store(ctx, env, typed, spec, names[spec.Key]); err != nil {
			return Result{}, err
		}
	}
	if err := env.Client.Delete(ctx, current); client.IgnoreNotFound(err) != nil {
		return Result{}, fmt.Errorf("deleting pipe pod %s: %w", pod.GetName(), err)
	}
	return Result{Done: true}, nil
}

// stored reports whether every file was stored in this plan run already.
func (p *Pipe) stored(ctx context.Context, env *Env, names map[string]string) (bool, error) {
	for _, spec := range p.Spec.Pipe {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(spec.Kind))
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Instance.Namespace, Name: names[spec.Key]}, obj)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if obj.GetAnnotations()[render.PlanUIDAnnotation] != string(env.PlanUID) {
			return false, nil
		}
	}
	return true, nil
}

// pod renders the pod template, named after the task, with the container
// that waits for its files to be read.
func (p *Pipe) pod(env *Env) (*unstructured.Unstructured, error) {
	vars := env.variables()
	text, err := render.Template(p.Spec.Pod, env.OperatorVersion.Spec.Templates[p.Spec.Pod], &vars)
	if err != nil {
		return nil, &FatalError{Err: err}
	}
	objs, err := render.Objects(p.Spec.Pod, text)
	if err != nil {
		return nil, &FatalError{Err: err}
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		return nil, Fatalf("pipe pod template %s must render exactly one Pod", p.Spec.Pod)
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, pod); err != nil {
		return nil, Fatalf("pipe pod template %s: %v", p.Spec.Pod, err)
	}
	if len(pod.Spec.InitContainers) != 1 || len(pod.Spec.Containers) != 0 {
		return nil, Fatalf("pipe pod template %s needs exactly one init container and no containers", p.Spec.Pod)
	}
	init := pod.Spec.InitContainers[0]
	pod.Spec.Containers = []corev1.Container{{
		Name: pipeContainer, Image: init.Image, VolumeMounts: init.VolumeMounts,
		Command: []string{"sh", "-c", "sleep 3600"},
	}}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
	pod.Name = engine.DNSName(strings.Join([]string{env.Instance.Name, env.PlanName, env.PhaseName, env.StepName, p.Name}, "-"))
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetAPIVersion("v1")
	obj.SetKind("Pod")
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	md := env.metadata()
	if err := render.Enhance([]*unstructured.Unstructured{obj}, &md, env.Scope, nil); err != nil {
		return nil, err
	}
	return obj, nil
}

// store copies one file out of the pod into its Secret or ConfigMap.
func (p *Pipe) store(ctx context.Context, env *Env, pod *corev1.Pod, spec kudov1beta1.PipeSpec, name string) error {
	source := spec.File
	if source == "" {
		source = spec.EnvFile
	}
	if env.Files == nil {
		return fmt.Errorf("copying %s out of pipe pod %s: no file copier configured", source, pod.Name)
	}
	data, err := env.Files.CopyFile(ctx, pod, pipeContainer, source)
	if err != nil {
		return fmt.Errorf("copying %s out of pipe pod %s (this needs a node that runs containers): %w", source, pod.Name, err)
	}
	if len(data) > maxPipeFile {
		return Fatalf("pipe file %s is %d bytes, more than a %s can hold (%d)", source, len(data), spec.Kind, maxPipeFile)
	}
	entries := map[string]any{}
	if spec.EnvFile != "" {
		for k, v := range parseEnvFile(data) {
			entries[k] = v
		}
	} else {
		entries[path.Base(spec.File)] = string(data)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": spec.Kind, "metadata": map[string]any{"name": name}}}
	field := "data"
	if spec.Kind == "Secret" {
		field = "stringData"
	}
	obj.Object[field] = entries
	md := env.metadata()
	if err := render.Enhance([]*unstructured.Unstructured{obj}, &md, env.Scope, nil); err != nil {
		return err
	}
	_, err = applyOne(ctx, env, obj)
	return err
}

// parseEnvFile splits KEY=VALUE lines; blank lines and comments are skipped.
func parseEnvFile(data []byte) map[string]string {
	out := map[string]string{}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = v
		}
	}
	return out
}
