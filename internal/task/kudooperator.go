package task

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/Masterminds/semver/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
)

// kudoOperator runs another operator package as a child Instance in the
// parent's namespace, with parameters from its rendered parameterFile, and
// is done when the child's plan has finished. The child's OperatorVersion
// must be installed where the parent's is (kubectl kudo install installs
// dependencies with the package). Its sensitive values go to a Secret that
// its spec.secretParameters name, not to its spec, which whoever may read
// Instances reads.
type kudoOperator struct{}

func (kudoOperator) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	if spec.Package == "" {
		return field.ErrorList{field.Required(at.Child("package"), "a KudoOperator task needs the package it installs")}
	}
	if spec.ParameterFile != "" {
		return defs.template(spec.ParameterFile, at.Child("parameterFile"))
	}
	return nil
}

func (kudoOperator) Uses(spec *kudov1beta1.TaskSpec) Uses {
	if spec.ParameterFile == "" {
		return Uses{}
	}
	return Uses{Others: []string{spec.ParameterFile}}
}

// Child is the Instance a KudoOperator task makes, but for what only the
// cluster knows: the OperatorVersion when the task does not pin one, and the
// types of the parameters.
type Child struct {
	Name string
	// ParameterFile is the template the parameters come from, parameterText
	// what it rendered, Parameters that parsed.
	ParameterFile string
	parameterText string
	Parameters    map[string]any
	// parent hides the parent's sensitive values, and tells which of the
	// child's show one.
	parent *params.Redactor
}

func childOf(t *kudov1beta1.Task, site *render.Site, parent *params.Redactor) (*Child, error) {
	spec := &t.Spec.KudoOperatorTaskSpec
	c := &Child{Name: spec.InstanceName, ParameterFile: spec.ParameterFile, parent: parent}
	if c.Name == "" {
		c.Name = site.Instance + "-" + spec.Package
	}
	if spec.ParameterFile == "" {
		return c, nil
	}
	vars := site.Variables()
	text := site.OperatorVersion.Spec.Templates[spec.ParameterFile]
	var err error
	c.parameterText, c.Parameters, err = site.Limits.ParameterFile(spec.ParameterFile, text, &vars)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Values are the child's parameter values, typed by ov, the child's
// OperatorVersion.
func (c *Child) Values(ov *kudov1beta1.OperatorVersion) (map[string]string, error) {
	return typedParameters(c.ParameterFile, c.Parameters, ov)
}

// Sensitive are those of the child's values that go to its Secret: those
// ov, the child's OperatorVersion, marks sensitive, and those that show a
// sensitive value of the parent's.
func (c *Child) Sensitive(values map[string]string, ov *kudov1beta1.OperatorVersion) map[string]string {
	marked := params.Sensitive(ov.Spec.Parameters, nil)
	sensitive := map[string]string{}
	for name, v := range values {
		if marked[name] || c.parent.Reveals(v) {
			sensitive[name] = v
		}
	}
	return sensitive
}

func (kudoOperator) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	c, err := childOf(t, &in.Site, in.Redactor)
	if err != nil {
		return nil, err
	}
	spec := &t.Spec.KudoOperatorTaskSpec
	note := "installs package " + spec.Package
	if spec.OperatorVersion != "" {
		note += " version " + spec.OperatorVersion
	}
	note += " as Instance " + c.Name
	if c.parameterText != "" {
		note += " with parameters:\n" + c.parent.String(c.parameterText)
	}
	return &Intent{Action: ActionInstall, Note: note, Child: c}, nil
}

// Run creates or updates the child Instance and reports its plan.
func (kudoOperator) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	spec := &t.Spec.KudoOperatorTaskSpec
	parent := env.Instance
	// The child is an Instance beside its parent, whatever cluster their
	// objects live in: it takes the parent's spec.kubeConfig.
	env = env.atHome()
	if err := checkCycle(ctx, env, spec.Package); err != nil {
		return Result{}, err
	}
	c, err := childOf(t, &env.Site, env.Redactor)
	if err != nil {
		return Result{}, &FatalError{Err: err}
	}
	ov, err := ChildOperatorVersion(ctx, env.Client, env.Instance, spec, nil)
	if err != nil {
		return Result{}, err
	}
	values, err := c.Values(ov)
	if err != nil {
		return Result{}, err
	}
	secret, secretParameters, err := c.secretParameters(ctx, env, values, ov)
	if err != nil {
		return Result{}, err
	}
	res := Result{Applied: secret}
	obj, err := childInstance(parent, c.Name, spec.Package, ov, values, secretParameters)
	if err != nil {
		return Result{}, err
	}
	applied, err := applyOne(ctx, env, obj)
	if err != nil {
		return res, err
	}
	res.Applied = append(res.Applied, applied)
	current := applied.Object
	if current.GetGeneration() == 0 || observedGeneration(current) != current.GetGeneration() {
		res.Message = fmt.Sprintf("waiting for Instance %s to take up its spec", c.Name)
		return res, nil
	}
	verdict := health.Check(current)
	switch {
	case verdict.Fatal:
		return res, &FatalError{Err: fmt.Errorf("%s", verdict.Message)}
	case !verdict.Healthy:
		res.Message = verdict.Message
		return res, nil
	}
	res.Done = true
	return res, nil
}

// childInstance is the child Instance a KudoOperator task applies, as an
// object to apply: the parent's, in its namespace and shard, with its
// service account and its cluster.
func childInstance(parent *kudov1beta1.Instance, name, pkg string, ov *kudov1beta1.OperatorVersion, values map[string]string,
	secretParameters map[string]kudov1beta1.SecretKeyReference) (*unstructured.Unstructured, error) {
	instance := &kudov1beta1.Instance{
		TypeMeta: metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: parent.Namespace,
			Labels:          map[string]string{kudov1beta1.OperatorLabel: pkg, kudov1beta1.HeritageLabel: "kudo"},
			OwnerReferences: []metav1.OwnerReference{OwnerReference(parent)},
		},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion:    corev1.ObjectReference{Name: ov.Name, Kind: "OperatorVersion"},
			Parameters:         values,
			SecretParameters:   secretParameters,
			ServiceAccountName: parent.Spec.ServiceAccountName,
			KubeConfig:         parent.Spec.KubeConfig,
		},
	}
	if ov.Namespace != parent.Namespace {
		instance.Spec.OperatorVersion.Namespace = ov.Namespace
	}
	// The parent's manager reads the child's status from its cache, which
	// holds its own shard's Instances only.
	if shard, ok := parent.Labels[kudov1beta1.ShardLabel]; ok {
		instance.Labels[kudov1beta1.ShardLabel] = shard
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(instance)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: u}
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	return obj, nil
}

// secretParameters moves the child's sensitive values out of values into the
// Secret it applies, first, so that the child never runs without it, and
// returns what the child's spec.secretParameters name.
func (c *Child) secretParameters(ctx context.Context, env *Env, values map[string]string, ov *kudov1beta1.OperatorVersion) (
	[]objects.Change, map[string]kudov1beta1.SecretKeyReference, error) {
	sensitive := c.Sensitive(values, ov)
	if len(sensitive) == 0 {
		return nil, nil, nil
	}
	secret, err := childSecret(ctx, env, c.Name, sensitive)
	if err != nil {
		return nil, nil, err
	}
	refs := make(map[string]kudov1beta1.SecretKeyReference, len(sensitive))
	for name := range sensitive {
		refs[name] = kudov1beta1.SecretKeyReference{Name: secret.Object.GetName(), Key: name}
		delete(values, name)
	}
	return []objects.Change{secret}, refs, nil
}

// childSecret applies the Secret that holds a child's sensitive values, as
// the parent applies what it renders. Each run of the parent's plan has a
// Secret of its own: new values then change the child's spec, so the parent
// waits for the child to take them up as for any change of its spec, where a
// change of the Secret alone would find the child ready with the old ones.
// Those of earlier runs are pruned once the task completes.
func childSecret(ctx context.Context, env *Env, child string, values map[string]string) (objects.Change, error) {
	data := make(map[string]any, len(values))
	for name, v := range values {
		data[name] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	run := string(env.Site.PlanUID)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": secretKind, "type": string(corev1.SecretTypeOpaque),
		"metadata": map[string]any{"name": child + "-parameters-" + run[:min(8, len(run))]},
		"data":     data,
	}}
	md := env.Site.Metadata()
	if err := render.Enhance([]*unstructured.Unstructured{obj}, &md, env.Scope, nil); err != nil {
		return objects.Change{}, err
	}
	return applyOne(ctx, env, obj)
}

func observedGeneration(obj *unstructured.Unstructured) int64 {
	g, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return g
}

// checkCycle fails when the package is the parent's own operator or one of
// its ancestors' (Instances that own it through KudoOperator tasks).
func checkCycle(ctx context.Context, env *Env, pkg string) error {
	chain := []string{env.Site.OperatorVersion.Spec.Operator.Name}
	current := env.Instance
	for depth := 0; depth < 16; depth++ {
		if chain[len(chain)-1] == pkg || slices.Contains(chain[:len(chain)-1], pkg) {
			return Fatalf("circular dependency: %s → %s", strings.Join(chain, " → "), pkg)
		}
		owner := metav1.GetControllerOf(current)
		if owner == nil || owner.Kind != "Instance" {
			return nil
		}
		parent := &kudov1beta1.Instance{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: current.Namespace, Name: owner.Name}, parent); err != nil {
			return client.IgnoreNotFound(err)
		}
		chain = append([]string{parent.Labels[kudov1beta1.OperatorLabel]}, chain...)
		current = parent
	}
	return nil
}

// ChildOperatorVersion finds the child's OperatorVersion: the one named by
// the task's versions, or the newest of the package, in the namespace of the
// parent's OperatorVersion, where the package's dependencies were installed.
// installing are OperatorVersions a change is about to install there (a
// preview's), found as if they were.
func ChildOperatorVersion(ctx context.Context, r client.Reader, parent *kudov1beta1.Instance, spec *kudov1beta1.KudoOperatorTaskSpec,
	installing []*kudov1beta1.OperatorVersion) (*kudov1beta1.OperatorVersion, error) {
	ns := parent.OperatorVersionNamespace()
	list := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	candidates := make([]*kudov1beta1.OperatorVersion, 0, len(list.Items)+len(installing))
	for i := range list.Items {
		candidates = append(candidates, &list.Items[i])
	}
	for _, ov := range installing {
		if ov.Namespace == ns {
			candidates = append(candidates, ov)
		}
	}
	if spec.OperatorVersion != "" {
		name := kudov1beta1.OperatorVersionName(spec.Package, spec.AppVersion, spec.OperatorVersion)
		for _, ov := range candidates {
			if ov.Name == name {
				return ov, nil
			}
		}
		return nil, fmt.Errorf("OperatorVersion %s of package %s is not installed in namespace %s: "+
			"install it with kubectl kudo install %s --operator-version %s --skip-instance -n %s",
			name, spec.Package, ns, spec.Package, spec.OperatorVersion, ns)
	}
	var newest *kudov1beta1.OperatorVersion
	for _, ov := range candidates {
		if ov.Spec.Operator.Name != spec.Package || (spec.AppVersion != "" && ov.Spec.AppVersion != spec.AppVersion) {
			continue
		}
		if newest == nil || newer(ov.Spec.Version, newest.Spec.Version) {
			newest = ov
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("no OperatorVersion of package %s is installed in namespace %s: "+
			"install it with kubectl kudo install %s --skip-instance -n %s", spec.Package, ns, spec.Package, ns)
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

// typedParameters turns the parsed parameter file into the child's
// parameter values, by the types its OperatorVersion gives them.
func typedParameters(file string, raw map[string]any, ov *kudov1beta1.OperatorVersion) (map[string]string, error) {
	if raw == nil {
		return nil, nil
	}
	types := map[string]kudov1beta1.ParameterType{}
	for _, p := range ov.Spec.Parameters {
		types[p.Name] = p.Type
	}
	out := make(map[string]string, len(raw))
	for name, v := range raw {
		t, ok := types[name]
		if !ok {
			return nil, Fatalf("parameter file %s sets %s, which OperatorVersion %s does not define", file, name, ov.Name)
		}
		s, err := params.Wrap(v, t)
		if err != nil {
			return nil, Fatalf("parameter file %s: parameter %s: %v", file, name, err)
		}
		out[name] = s
	}
	return out, nil
}
