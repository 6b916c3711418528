package task

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/render"
)

type fakeFiles map[string]string

func (f fakeFiles) CopyFile(_ context.Context, pod *corev1.Pod, container, file string, _ int) ([]byte, error) {
	if container != pipeContainer {
		return nil, errors.New("wrong container " + container)
	}
	content, ok := f[file]
	if !ok {
		return nil, errors.New("exec into " + pod.Name + ": dial tcp 10.0.0.1:10250: connect: connection refused")
	}
	return []byte(content), nil
}

// streamed copies every file as ExecCopier does, from what the stream writes.
type streamed streamFunc

func (s streamed) CopyFile(ctx context.Context, _ *corev1.Pod, _, _ string, limit int) ([]byte, error) {
	return readCapped(ctx, streamFunc(s), limit)
}

// testScheme knows the built-in kinds and kudo-ng's.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kudov1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func pipeEnv(t *testing.T, files FileCopier) (*Env, client.Client) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0.1.0", Namespace: "ns"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "web"},
			Templates: map[string]string{"pod.yaml": `apiVersion: v1
kind: Pod
spec:
  volumes: [{name: out, emptyDir: {}}]
  initContainers:
  - name: init
    image: busybox
    volumeMounts: [{name: out, mountPath: /tmp/out}]
`},
			Tasks: []kudov1beta1.Task{{Name: "gen", Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
				Pod: "pod.yaml",
				Pipe: []kudov1beta1.PipeSpec{
					{File: "/tmp/out/index.html", Kind: "ConfigMap", Key: "indexHtml"},
					{EnvFile: "/tmp/out/env", Kind: "Secret", Key: "env"},
				},
			}}}},
			Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "files", Tasks: []string{"gen"}}}}}}},
		},
	}
	instance := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "ns", UID: "instance-uid"}}
	owner := OwnerReference(instance)
	env := &Env{
		Client: c, Objects: objects.NewManager(instance, c, objects.Options{}), Instance: instance,
		Site: render.Site{
			OperatorVersion: ov, Instance: "site", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "files",
			PlanUID: "plan-1", Owner: &owner,
		},
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope, Files: files,
	}
	return env, c
}

func TestPipe(t *testing.T) {
	ctx := context.Background()
	files := fakeFiles{"/tmp/out/index.html": "<h1>moo</h1>", "/tmp/out/env": "# generated\nUSER=admin\nPASSWORD=s3cr=t\n"}
	env, c := pipeEnv(t, files)
	gen := &env.Site.OperatorVersion.Spec.Tasks[0]

	res, err := Run(ctx, gen, env)
	if err != nil || res.Done || res.Message != "waiting for pipe pod site-deploy-main-files-gen to run" {
		t.Fatalf("first run = %+v, %v", res, err)
	}
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "site-deploy-main-files-gen"}, pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != pipeContainer || pod.Spec.Containers[0].VolumeMounts[0].MountPath != "/tmp/out" {
		t.Errorf("the pipe pod lacks the container that waits with the files: %+v", pod.Spec.Containers)
	}
	if owner := metav1.GetControllerOf(pod); owner == nil || owner.Name != "site" {
		t.Errorf("the pipe pod is not owned by the Instance: %v", pod.OwnerReferences)
	}

	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	res, err = Run(ctx, gen, env)
	if err != nil || !res.Done {
		t.Fatalf("second run = %+v, %v", res, err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "site.deploy.main.files.gen.indexhtml"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["index.html"] != "<h1>moo</h1>" || cm.Annotations[kudov1beta1.PlanUIDAnnotation] != "plan-1" {
		t.Errorf("ConfigMap = %v %v", cm.Data, cm.Annotations)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "site.deploy.main.files.gen.env"}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.StringData["USER"] != "admin" || secret.StringData["PASSWORD"] != "s3cr=t" || len(secret.StringData) != 2 {
		t.Errorf("Secret = %v", secret.StringData)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pipe pod was not deleted: %v", err)
	}

	// The files are stored for this plan run: nothing to do again.
	if res, err := Run(ctx, gen, env); err != nil || !res.Done {
		t.Fatalf("third run = %+v, %v", res, err)
	}
}

// TestPipeCopyFails: a file not copied fails the step; one too large or
// that never ends fails the plan.
func TestPipeCopyFails(t *testing.T) {
	zero := &endless{}
	for _, tc := range []struct {
		name  string
		file  string
		files FileCopier
		want  string
		fatal bool
		// timeout is how long a copy may take, 30s unless set.
		timeout time.Duration
		// endless is the file that never ends, which may cost no more
		// than the limit.
		endless *endless
	}{{
		name: "no kubelet", file: "/tmp/out/index.html", files: fakeFiles{},
		want: "copying /tmp/out/index.html out of pipe pod site-deploy-main-files-gen (this needs a node that runs containers): " +
			"exec into site-deploy-main-files-gen: dial tcp 10.0.0.1:10250: connect: connection refused",
	}, {
		name: "a file that never ends", file: "/dev/zero", files: streamed(zero.stream),
		want: "pipe file /dev/zero: more than 1048576 bytes, the most a ConfigMap holds", fatal: true, endless: zero,
	}, {
		name: "a FIFO", file: "/tmp/fifo", files: streamed(fifo),
		want: "pipe file /tmp/fifo: not read within 50ms, though the init container that wrote it has exited: " +
			"pipe a regular file, not a FIFO or a device",
		fatal: true, timeout: 50 * time.Millisecond,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			env, c := pipeEnv(t, tc.files)
			gen := &env.Site.OperatorVersion.Spec.Tasks[0]
			gen.Spec.Pipe[0].File = tc.file
			kind := pipe{readTimeout: cmp.Or(tc.timeout, pipeReadTimeout)}
			if _, err := kind.Run(ctx, gen, env); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "site-deploy-main-files-gen"}, pod); err != nil {
				t.Fatal(err)
			}
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
			if err := c.Status().Update(ctx, pod); err != nil {
				t.Fatal(err)
			}
			_, err := kind.Run(ctx, gen, env)
			if err == nil || err.Error() != tc.want || IsFatal(err) != tc.fatal {
				t.Errorf("error = %v (fatal: %v), want %q (fatal: %v)", err, IsFatal(err), tc.want, tc.fatal)
			}
			if e := tc.endless; e != nil && (e.accepted > maxPipeFile || !e.tornDown) {
				t.Errorf("the copy took %d bytes of a limit of %d, torn down: %v", e.accepted, maxPipeFile, e.tornDown)
			}
			// A failure no retry fixes deletes the pod; another keeps it for the retry.
			err = c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			if gone := apierrors.IsNotFound(err); gone != tc.fatal {
				t.Errorf("after the failure the pipe pod is gone: %v (%v), want %v", gone, err, tc.fatal)
			}
		})
	}
}

// TestPipePodRefusesInjection: the pipe pod's template is rendered as any
// other: a parameter value may not add to it.
func TestPipePodRefusesInjection(t *testing.T) {
	env, _ := pipeEnv(t, fakeFiles{})
	ov := env.Site.OperatorVersion
	ov.Spec.Templates["pod.yaml"] = strings.Replace(ov.Spec.Templates["pod.yaml"], "image: busybox", "image: {{ .Params.IMAGE }}", 1)
	env.Site.Params = map[string]any{"IMAGE": "busybox\n    securityContext: {privileged: true}"}
	_, err := pipe{}.Build(&ov.Spec.Tasks[0], &Input{Site: env.Site, Served: env.Served, Scope: env.Scope})
	want := "pod.yaml: parameter IMAGE's value adds a key to spec.initContainers[0] of object 1 (Pod): " +
		"a parameter value must stay inside the YAML value the template puts it in"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}
