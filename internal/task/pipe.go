package task

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/render"
)

// FileCopier reads a file out of a running container. The real one execs
// into the pod, which needs a node that runs containers. It reads at most
// limit bytes: a longer file is an error wrapping errTooLarge, found without
// holding more. It returns once ctx is done.
type FileCopier interface {
	CopyFile(ctx context.Context, pod *corev1.Pod, container, file string, limit int) ([]byte, error)
}

// ImpersonatingCopier is a FileCopier that can act as another user.
type ImpersonatingCopier interface {
	FileCopier
	As(user string) FileCopier
}

const secretKind = "Secret"

// pipeContainer is the container kudo-ng adds to a Pipe pod: it keeps the
// pod running, with the files its init container wrote, until they are read.
const pipeContainer = "kudo-pipe"

// maxPipeFile is the most a Secret or ConfigMap can hold.
const maxPipeFile = 1 << 20

// pipeReadTimeout bounds the copy of a file. The pipe container starts once
// the init container that wrote the files has exited, so they are complete,
// and a MiB takes well under a second: a copy still running after this is of
// a file that never ends (a FIFO), which a worker would wait on for ever.
const pipeReadTimeout = 30 * time.Second

var pipeKey = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// pipe runs a pod whose init container writes files, stores each file as a
// Secret or ConfigMap that later templates of the plan name as
// {{ .Pipes.<key> }}, then deletes the pod.
type pipe struct {
	// readTimeout is pipeReadTimeout, shorter in tests.
	readTimeout time.Duration
}

func (pipe) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	if spec.Pod == "" || len(spec.Pipe) == 0 {
		return field.ErrorList{field.Required(at.Child("pod"), "a Pipe task needs a pod template and the files it pipes")}
	}
	errs := defs.template(spec.Pod, at.Child("pod"))
	for i, p := range spec.Pipe {
		entry := at.Child("pipe").Index(i)
		switch {
		case (p.File == "") == (p.EnvFile == ""):
			errs = append(errs, field.Invalid(entry, p, "needs exactly one of file and envFile"))
		case p.Kind != secretKind && p.Kind != "ConfigMap":
			errs = append(errs, field.Invalid(entry.Child("kind"), p.Kind, fmt.Sprintf("kind %q is not Secret or ConfigMap", p.Kind)))
		case !pipeKey.MatchString(p.Key):
			errs = append(errs, field.Invalid(entry.Child("key"), p.Key, fmt.Sprintf("key %q must match [a-zA-Z0-9_-]+", p.Key)))
		case notWritten(p.File) != "":
			errs = append(errs, field.Invalid(entry.Child("file"), p.File,
				fmt.Sprintf("pipe file %s is %s: pipe a regular file the pod writes", p.File, notWritten(p.File))))
		case notWritten(p.EnvFile) != "":
			errs = append(errs, field.Invalid(entry.Child("envFile"), p.EnvFile,
				fmt.Sprintf("pipe file %s is %s: pipe a regular file the pod writes", p.EnvFile, notWritten(p.EnvFile))))
		}
	}
	return errs
}

// notWritten says what a file under /dev/ or /proc/ is, which no pod
// writes and which may never end (/dev/zero, a FIFO, /proc/kmsg): its copy
// would fail the plan at maxPipeFile or pipeReadTimeout. /dev/shm/ is where
// a pod mounts a memory volume, whose files it writes.
func notWritten(file string) string {
	clean := path.Clean(file)
	switch {
	case strings.HasPrefix(clean, "/dev/") && !strings.HasPrefix(clean, "/dev/shm/"):
		return "a device"
	case strings.HasPrefix(clean, "/proc/"):
		return "a kernel file"
	}
	return ""
}

func (pipe) Uses(spec *kudov1beta1.TaskSpec) Uses {
	if spec.Pod == "" {
		return Uses{}
	}
	return Uses{Others: []string{spec.Pod}}
}

// Build renders the pod, named after the task, with the container that
// waits for its files to be read.
func (pipe) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	site := &in.Site
	name := t.Spec.Pod
	vars := site.Variables()
	objs, err := site.Limits.TemplateObjects(name, site.OperatorVersion.Spec.Templates[name], &vars)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		return nil, fmt.Errorf("pipe pod template %s must render exactly one Pod", name)
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, pod); err != nil {
		return nil, fmt.Errorf("pipe pod template %s: %w", name, err)
	}
	if err := checkPipePod(pod); err != nil {
		return nil, fmt.Errorf("pipe pod template %s: %w", name, err)
	}
	init := pod.Spec.InitContainers[0]
	pod.Spec.Containers = []corev1.Container{{
		Name: pipeContainer, Image: init.Image, VolumeMounts: init.VolumeMounts,
		Command: []string{"sh", "-c", "sleep 3600"},
	}}
	pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	pod.Name = render.DNSName(strings.Join([]string{site.Instance, site.Plan, site.Phase, site.Step, t.Name}, "-"))
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetAPIVersion("v1")
	obj.SetKind("Pod")
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	md := site.Metadata()
	if err := render.Enhance([]*unstructured.Unstructured{obj}, &md, in.Scope, nil); err != nil {
		return nil, err
	}
	stores := make([]string, 0, len(t.Spec.Pipe))
	for _, p := range t.Spec.Pipe {
		stores = append(stores, fmt.Sprintf("%s %s", p.Kind, vars.Pipes[p.Key]))
	}
	return &Intent{
		Action: ActionRun, Objects: []*unstructured.Unstructured{obj}, Note: "stores its files as " + strings.Join(stores, ", "),
	}, nil
}

// checkPipePod checks a Pipe task's pod as KUDO requires: a single init
// container writes the files, there are no containers, and it does not
// restart once done.
func checkPipePod(pod *corev1.Pod) *field.Error {
	spec := field.NewPath("spec")
	switch {
	case len(pod.Spec.InitContainers) != 1:
		return field.Required(spec.Child("initContainers"), "a Pipe pod needs exactly one init container, which writes the files")
	case len(pod.Spec.Containers) != 0:
		return field.Forbidden(spec.Child("containers"), "a Pipe pod must have no containers: kudo-ng adds the one that reads the files")
	case pod.Spec.RestartPolicy != "" && pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure:
		return field.Invalid(spec.Child("restartPolicy"), pod.Spec.RestartPolicy,
			fmt.Sprintf("%q is not allowed in a Pipe pod: leave it empty or use OnFailure", pod.Spec.RestartPolicy))
	}
	return nil
}

// Run stores the files once, and is done when all are stored.
func (p pipe) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	names := render.PipeNames(env.Site.OperatorVersion, env.Site.Instance)
	files, err := stored(ctx, env, t.Spec.Pipe, names)
	if err != nil || files != nil {
		return Result{Done: files != nil, Applied: files}, err
	}
	intent, err := env.build(ctx, p, t)
	if err != nil {
		return Result{}, err
	}
	pod := intent.Objects[0]
	applied, err := applyOne(ctx, env, pod)
	if err != nil {
		return Result{}, err
	}
	current := applied.Object
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
	// The pod is gone once the task is done: only the files it made are
	// what the task applied.
	res := Result{Done: true}
	for _, spec := range t.Spec.Pipe {
		file, err := p.store(ctx, env, typed, spec, names[spec.Key])
		if IsFatal(err) {
			// No retry reads it again, and the pod would wait for ever.
			if delErr := deletePipePod(ctx, env, current); delErr != nil {
				return res, &FatalError{Err: errors.Join(err, delErr)}
			}
			return res, err
		}
		if err != nil {
			return res, err
		}
		res.Applied = append(res.Applied, file)
	}
	if err := deletePipePod(ctx, env, current); err != nil {
		return Result{Applied: res.Applied}, err
	}
	return res, nil
}

// deletePipePod deletes the pipe pod, which may be gone already, through
// the object layer: it is deleted only while it is the Instance's.
func deletePipePod(ctx context.Context, env *Env, pod *unstructured.Unstructured) error {
	_, err := env.Objects.DeleteObject(ctx, pod, objects.DeleteOptions{Propagation: metav1.DeletePropagationBackground})
	return err
}

// stored returns the files when every one was stored in this plan run
// already, else nil.
func stored(ctx context.Context, env *Env, pipes []kudov1beta1.PipeSpec, names map[string]string) ([]objects.Change, error) {
	files := make([]objects.Change, 0, len(pipes))
	for _, spec := range pipes {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(spec.Kind))
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Site.Namespace, Name: names[spec.Key]}, obj)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if obj.GetAnnotations()[kudov1beta1.PlanUIDAnnotation] != string(env.Site.PlanUID) {
			return nil, nil
		}
		files = append(files, objects.Change{Object: obj, Action: objects.Unchanged})
	}
	return files, nil
}

// store copies one file out of the pod into its Secret or ConfigMap. A file
// too large or that does not end is FATAL: the init container that wrote it
// has exited, so a retry reads the same.
func (p pipe) store(ctx context.Context, env *Env, pod *corev1.Pod, spec kudov1beta1.PipeSpec, name string) (objects.Change, error) {
	source := spec.File
	if source == "" {
		source = spec.EnvFile
	}
	if env.Files == nil {
		return objects.Change{}, fmt.Errorf("copying %s out of pipe pod %s: no file copier configured", source, pod.Name)
	}
	copyCtx, cancel := context.WithTimeout(ctx, p.readTimeout)
	data, err := env.Files.CopyFile(copyCtx, pod, pipeContainer, source, maxPipeFile)
	// Only this deadline is the file's doing, not the end of the reconcile.
	timedOut := ctx.Err() == nil && errors.Is(copyCtx.Err(), context.DeadlineExceeded)
	cancel()
	switch {
	case errors.Is(err, errTooLarge):
		return objects.Change{}, Fatalf("pipe file %s: more than %d bytes, the most a %s holds", source, maxPipeFile, spec.Kind)
	case err != nil && timedOut:
		return objects.Change{}, Fatalf("pipe file %s: not read within %s, though the init container that wrote it has exited: "+
			"pipe a regular file, not a FIFO or a device", source, p.readTimeout)
	case err != nil:
		return objects.Change{}, fmt.Errorf("copying %s out of pipe pod %s (this needs a node that runs containers): %w", source, pod.Name, err)
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
	dataField := "data"
	if spec.Kind == secretKind {
		dataField = "stringData"
	}
	obj.Object[dataField] = entries
	md := env.Site.Metadata()
	if err := render.Enhance([]*unstructured.Unstructured{obj}, &md, env.Scope, nil); err != nil {
		return objects.Change{}, err
	}
	return applyOne(ctx, env, obj)
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
