package task

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/Masterminds/semver/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
)

// KudoOperator runs another operator package as a child Instance in the
// parent's namespace, with parameters from its rendered parameterFile, and
// is done when the child's plan has finished. The child's OperatorVersion
// must be installed (kubectl kudo install resolves dependencies first).
type KudoOperator struct {
	Name string
	Spec kudov1beta1.KudoOperatorTaskSpec
}

// Run creates or updates the child Instance and reports its plan.
func (k *KudoOperator) Run(ctx context.Context, env *Env) (Result, error) {
	parent := env.Instance
	if err := k.checkCycle(ctx, env); err != nil {
		return Result{}, err
	}
	ov, err := k.operatorVersion(ctx, env)
	if err != nil {
		return Result{}, err
	}
	values, err := k.parameters(env, ov)
	if err != nil {
		return Result{}, err
	}
	name := k.Spec.InstanceName
	if name == "" {
		name = parent.Name + "-" + k.Spec.Package
	}
	child := &kudov1beta1.Instance{
		TypeMeta: metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: parent.Namespace,
			Labels:          map[string]string{render.OperatorLabel: k.Spec.Package, render.HeritageLabel: "kudo"},
			OwnerReferences: []metav1.OwnerReference{ownerRef(parent)},
		},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: ov.Name, Kind: "OperatorVersion"},
			Parameters:      values,
		},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(child)
	if err != nil {
		return Result{}, err
	}
	obj := &unstructured.Unstructured{Object: u}
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	current, err := applyOne(ctx, env, obj)
	if err != nil {
		return Result{}, err
	}
	if current.GetGeneration() == 0 || observedGeneration(current) != current.GetGeneration() {
		return Result{Message: fmt.Sprintf("waiting for Instance %s to take up its spec", name)}, nil
	}
	verdict := health.Check(current)
	switch {
	case verdict.Fatal:
		return Result{}, &FatalError{Err: fmt.Errorf("%s", verdict.Message)}
	case !verdict.Healthy:
		return Result{Message: verdict.Message}, nil
	}
	return Result{Done: true}, nil
}

func observedGeneration(obj *unstructured.Unstructured) int64 {
	g, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return g
}

// checkCycle fails when the package is the parent's own operator or one of
// its ancestors' (Instances that own it through KudoOperator tasks).
func (k *KudoOperator) checkCycle(ctx context.Context, env *Env) error {
	chain := []string{env.OperatorVersion.Spec.Operator.Name}
	current := env.Instance
	for depth := 0; depth < 16; depth++ {
		if chain[len(chain)-1] == k.Spec.Package || contains(chain[:len(chain)-1], k.Spec.Package) {
			return Fatalf("circular dependency: %s → %s", strings.Join(chain, " → "), k.Spec.Package)
		}
		owner := metav1.GetControllerOf(current)
		if owner == nil || owner.Kind != "Instance" {
			return nil
		}
		parent := &kudov1beta1.Instance{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: current.Namespace, Name: owner.Name}, parent); err != nil {
			return client.IgnoreNotFound(err)
		}
		chain = append([]string{parent.Labels[render.OperatorLabel]}, chain...)
		current = parent
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// operatorVersion finds the child's OperatorVersion: the one named by the
// task's versions, or the newest of the package in the namespace.
func (k *KudoOperator) operatorVersion(ctx context.Context, env *Env) (*kudov1beta1.OperatorVersion, error) {
	ns := env.Instance.Namespace
	if k.Spec.OperatorVersion != "" {
		ov := &kudov1beta1.OperatorVersion{}
		name := packages.OperatorVersionName(k.Spec.Package, k.Spec.AppVersion, k.Spec.OperatorVersion)
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ov)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("OperatorVersion %s of package %s is not installed in namespace %s: "+
				"install it with kubectl kudo install %s --operator-version %s --skip-instance",
				name, k.Spec.Package, ns, k.Spec.Package, k.Spec.OperatorVersion)
		}
		return ov, err
	}
	list := &kudov1beta1.OperatorVersionList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var newest *kudov1beta1.OperatorVersion
	for i := range list.Items {
		ov := &list.Items[i]
		if ov.Spec.Operator.Name != k.Spec.Package || (k.Spec.AppVersion != "" && ov.Spec.AppVersion != k.Spec.AppVersion) {
			continue
		}
		if newest == nil || newer(ov.Spec.Version, newest.Spec.Version) {
			newest = ov
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("no OperatorVersion of package %s is installed in namespace %s: "+
			"install it with kubectl kudo install %s --skip-instance", k.Spec.Package, ns, k.Spec.Package)
	}
	return newest, nil
}

func newer(a, b string) bool {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	if errA != nil || errB != nil {
		return a > b
	}
	return va.GreaterThan(vb)
}

// parameters renders the parameterFile into the child's parameter values.
func (k *KudoOperator) parameters(env *Env, ov *kudov1beta1.OperatorVersion) (map[string]string, error) {
	if k.Spec.ParameterFile == "" {
		return nil, nil
	}
	vars := env.variables()
	text, err := render.Template(k.Spec.ParameterFile, env.OperatorVersion.Spec.Templates[k.Spec.ParameterFile], &vars)
	if err != nil {
		return nil, &FatalError{Err: err}
	}
	raw := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &raw); err != nil {
		return nil, Fatalf("parameter file %s is not a YAML map of parameters: %v", k.Spec.ParameterFile, err)
	}
	types := map[string]kudov1beta1.ParameterType{}
	for _, p := range ov.Spec.Parameters {
		types[p.Name] = p.Type
	}
	out := make(map[string]string, len(raw))
	for name, v := range raw {
		t, ok := types[name]
		if !ok {
			return nil, Fatalf("parameter file %s sets %s, which OperatorVersion %s does not define", k.Spec.ParameterFile, name, ov.Name)
		}
		s, err := params.Wrap(v, t)
		if err != nil {
			return nil, Fatalf("parameter file %s: parameter %s: %v", k.Spec.ParameterFile, name, err)
		}
		out[name] = s
	}
	return out, nil
}
