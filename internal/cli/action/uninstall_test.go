package action

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/inventory"
)

var (
	zkWeb    = kudov1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "zk-web"}
	zkReader = kudov1beta1.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "zk-reader"}
	zkShared = kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other", Name: "zk-shared"}
)

// zk applied a Deployment it owns, a ClusterRole and a ConfigMap in another
// namespace, marked to be kept; it has the cleanup finalizer for the last two.
func zk() []client.Object {
	owner := []metav1.OwnerReference{{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: "zk", UID: "uid-zk"}}
	objects := make([]kudov1beta1.InventoryObject, 0, 3)
	for _, r := range []kudov1beta1.ObjectRef{zkWeb, zkReader, zkShared} {
		objects = append(objects, kudov1beta1.InventoryObject{ObjectRef: r})
	}
	return []client.Object{
		&kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "zk", UID: "uid-zk", Finalizers: []string{kudov1beta1.InstanceCleanupFinalizer}},
			Status:     kudov1beta1.InstanceStatus{Inventory: []kudov1beta1.TaskInventory{{Task: "app", Plan: "deploy", Objects: objects}}},
		},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "zk-web", OwnerReferences: owner}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "zk-reader"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "zk-shared",
			Annotations: map[string]string{kudov1beta1.PruneAnnotation: kudov1beta1.Disabled}}},
	}
}

// cluster holds objs, and on the n-th read of an object runs what happens
// in the cluster just before it: the manager's and the garbage collector's
// work, in a fixed order.
func cluster(objs []client.Object, happens map[string]map[int]func(context.Context, client.Client)) client.Client {
	reads := map[string]int{}
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(objs...).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object,
			opts ...client.GetOption) error {
			reads[key.Name]++
			if do := happens[key.Name][reads[key.Name]]; do != nil {
				do(ctx, c)
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
}

func TestUninstallWaitReturnsOnceEverythingTheInstanceAppliedIsGone(t *testing.T) {
	ctx := context.Background()
	instance := func(ctx context.Context, c client.Client) *kudov1beta1.Instance {
		i := &kudov1beta1.Instance{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "zk"}, i); err != nil {
			t.Fatal(err)
		}
		return i
	}
	c := cluster(zk(), map[string]map[int]func(context.Context, client.Client){
		// Read 1 is uninstall's, before the delete; read 2 the first wait's.
		"zk": {
			3: func(ctx context.Context, c client.Client) {
				// The manager deletes the ClusterRole, and forgets it.
				if err := c.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "zk-reader"}}); err != nil {
					t.Fatal(err)
				}
				i := instance(ctx, c)
				i.Status.Inventory = inventory.Forget(i.Status.Inventory, zkReader)
				if err := c.Update(ctx, i); err != nil {
					t.Fatal(err)
				}
			},
			4: func(ctx context.Context, c client.Client) {
				// It keeps the annotated ConfigMap, and lets the Instance go.
				i := instance(ctx, c)
				i.Status.Inventory = inventory.Forget(i.Status.Inventory, zkShared)
				i.Finalizers = nil
				if err := c.Update(ctx, i); err != nil {
					t.Fatal(err)
				}
			},
		},
		// The garbage collector deletes the Deployment later.
		"zk-web": {2: func(ctx context.Context, c client.Client) {
			if err := c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "zk-web"}}); err != nil {
				t.Fatal(err)
			}
		}},
	})
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := (&Uninstall{Instance: "zk", WaitOptions: WaitOptions{Wait: true, WaitTime: time.Minute}, Poll: time.Millisecond}).Run(ctx, NewConfig(c, "default", streams)); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &rbacv1.ClusterRole{}, &kudov1beta1.Instance{}} {
		key := client.ObjectKey{Namespace: "default", Name: "zk-web"}
		switch obj.(type) {
		case *rbacv1.ClusterRole:
			key = client.ObjectKey{Name: "zk-reader"}
		case *kudov1beta1.Instance:
			key.Name = "zk"
		}
		if err := c.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still there when uninstall --wait returned: %v", obj, key, err)
		}
	}
	want := "instance.kudo.dev/zk deleted\n" +
		"waiting for 4 objects: Instance default/zk, Deployment default/zk-web, ClusterRole zk-reader, ConfigMap other/zk-shared\n" +
		"waiting for 3 objects: Instance default/zk, Deployment default/zk-web, ConfigMap other/zk-shared\n" +
		"waiting for 1 object: Deployment default/zk-web\n" +
		"kept ConfigMap other/zk-shared: annotated kudo.dev/prune: disabled\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestUninstallWaitSaysWhatRemainsWhenItGivesUp(t *testing.T) {
	objs := zk()
	objs[0].SetFinalizers(nil)
	c := cluster(objs, nil)
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := (&Uninstall{Instance: "zk", WaitOptions: WaitOptions{Wait: true}, Poll: time.Millisecond}).Run(context.Background(), NewConfig(c, "default", streams))
	want := "instance zk is gone, but after 0s objects it applied remain (Deployment default/zk-web): see kubectl get events -n default"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestKeptBy(t *testing.T) {
	owners := sets.New[types.UID]("uid-zk", "uid-child")
	now := metav1.Now()
	crd := kudov1beta1.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	tests := []struct {
		name     string
		ref      kudov1beta1.ObjectRef
		meta     metav1.ObjectMeta
		wantKept bool
		reason   string
	}{
		{"an object an Instance of the uninstall owns goes with the garbage collector", zkWeb,
			metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "uid-child"}}}, false, ""},
		{"an object being deleted goes", zkReader, metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{"x"}}, false, ""},
		{"an owned object marked to be kept still goes: the garbage collector does not read the mark", zkWeb,
			metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "uid-zk"}},
				Annotations: map[string]string{kudov1beta1.PruneAnnotation: kudov1beta1.Disabled}}, false, ""},
		{"an object marked to be kept stays", zkShared, metav1.ObjectMeta{Annotations: map[string]string{kudov1beta1.PruneAnnotation: kudov1beta1.Disabled}},
			true, "annotated kudo.dev/prune: disabled"},
		{"a CustomResourceDefinition stays while custom resources of it remain", crd, metav1.ObjectMeta{},
			true, "custom resources of it remain: delete them, then the CustomResourceDefinition"},
		{"an object of another owner stays", zkWeb, metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "uid-other"}}},
			true, "the manager did not delete it (see the Instance's events): delete it if nothing needs it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, kept := keptBy(tt.ref, &tt.meta, owners)
			if kept != tt.wantKept || reason != tt.reason {
				t.Errorf("keptBy = %q, %t; want %q, %t", reason, kept, tt.reason, tt.wantKept)
			}
		})
	}
}

func TestUninstallForceCancelsTheCleanupOnceItRuns(t *testing.T) {
	plans := map[string]kudov1beta1.Plan{"deploy": {}, "cleanup": {}}
	for _, tc := range []struct {
		name  string
		plans map[string]kudov1beta1.Plan
		want  kudov1beta1.PlanExecution
	}{
		{"its cleanup runs: cancelled", plans,
			kudov1beta1.PlanExecution{PlanName: "cleanup", UID: "cleanup-1", Status: kudov1beta1.ExecutionCancelled}},
		{"no cleanup plan: nothing to cancel", map[string]kudov1beta1.Plan{"deploy": {}}, kudov1beta1.PlanExecution{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := &kudov1beta1.Instance{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "zk", Finalizers: []string{kudov1beta1.InstanceCleanupFinalizer}},
				Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "zk-0.1.0"}},
			}
			ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "zk-0.1.0"},
				Spec: kudov1beta1.OperatorVersionSpec{Plans: tc.plans}}
			// The manager starts the cleanup on the second read, once the
			// Instance is deleted.
			c := cluster([]client.Object{i, ov}, map[string]map[int]func(context.Context, client.Client){"zk": {2: func(ctx context.Context, c client.Client) {
				got := &kudov1beta1.Instance{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(i), got); err != nil {
					t.Fatal(err)
				}
				if _, ok := tc.plans["cleanup"]; ok {
					got.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "cleanup", Status: kudov1beta1.ExecutionInProgress}
					got.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"cleanup": {Status: kudov1beta1.ExecutionInProgress, UID: "cleanup-1"}}
				}
				if err := c.Update(ctx, got); err != nil {
					t.Fatal(err)
				}
			}}})
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			u := &Uninstall{Instance: "zk", Force: true, WaitOptions: WaitOptions{WaitTime: time.Minute}, Poll: time.Millisecond}
			if err := u.Run(context.Background(), NewConfig(c, "default", streams)); err != nil {
				t.Fatal(err)
			}
			got := &kudov1beta1.Instance{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(i), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.PlanExecution != tc.want {
				t.Errorf("planExecution %+v, want %+v (%s)", got.Spec.PlanExecution, tc.want, out)
			}
		})
	}
}
