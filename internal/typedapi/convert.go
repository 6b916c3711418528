package typedapi

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// Parameters are the values a typed object's spec sets, as the Instance
// that runs it holds them: each parameter of the OperatorVersion whose field
// the spec has. Fields of no parameter of this version (an older version's,
// kept from pruning) are left out.
func Parameters(spec map[string]any, parameters []kudov1beta1.Parameter) (map[string]string, error) {
	fields, err := Fields(parameters)
	if err != nil {
		return nil, err
	}
	values := make(map[string]string, len(parameters))
	for _, p := range parameters {
		v, ok := spec[fields[p.Name]]
		if !ok {
			continue
		}
		s, err := params.Wrap(v, p.Type)
		if err != nil {
			return nil, fmt.Errorf("spec.%s: %w", fields[p.Name], err)
		}
		values[p.Name] = s
	}
	return values, nil
}

// SpecValues are parameter values as an Instance holds them, as the fields
// of a typed object's spec hold them: what kubectl kudo update writes to a
// typed object.
func SpecValues(values map[string]string, parameters []kudov1beta1.Parameter) (map[string]any, error) {
	fields, err := Fields(parameters)
	if err != nil {
		return nil, err
	}
	spec := make(map[string]any, len(values))
	for _, p := range parameters {
		s, ok := values[p.Name]
		if !ok {
			continue
		}
		v, err := Value(s, p.Type)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		spec[fields[p.Name]] = v
	}
	for name := range values {
		if _, ok := fields[name]; !ok {
			return nil, fmt.Errorf("parameter %s: the OperatorVersion has no such parameter", name)
		}
	}
	return spec, nil
}

// InstanceSpec is the spec of the Instance that runs a typed object whose
// spec is spec, with the OperatorVersion ov: the shared fields as they are,
// and the parameters from their fields, except those that secretParameters
// names (the API server defaults their fields too).
func InstanceSpec(spec map[string]any, ov *kudov1beta1.OperatorVersion) (kudov1beta1.InstanceSpec, error) {
	out := kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}}
	out.ServiceAccountName, _ = spec[ServiceAccountNameField].(string)
	if kc, ok := spec[KubeConfigField].(map[string]any); ok {
		ref, _ := kc["secretRef"].(map[string]any)
		name, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		out.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: name, Key: key}}
	}
	if secrets, ok := spec[SecretParametersField].(map[string]any); ok && len(secrets) > 0 {
		out.SecretParameters = make(map[string]kudov1beta1.SecretKeyReference, len(secrets))
		for name, ref := range secrets {
			r, _ := ref.(map[string]any)
			secret, _ := r["name"].(string)
			key, _ := r["key"].(string)
			out.SecretParameters[name] = kudov1beta1.SecretKeyReference{Name: secret, Key: key}
		}
	}
	values, err := Parameters(spec, ov.Spec.Parameters)
	if err != nil {
		return out, err
	}
	// An immutable parameter's default is written into the Instance at its
	// creation (webhook.DefaultCreate), as KUDO did; the object, whose kind
	// holds no defaults, names it the same on every change.
	for _, p := range ov.Spec.Parameters {
		if _, set := values[p.Name]; !set && p.Immutable != nil && *p.Immutable && p.Default != nil {
			if values == nil {
				values = map[string]string{}
			}
			values[p.Name] = *p.Default
		}
	}
	for name := range out.SecretParameters {
		delete(values, name)
	}
	if len(values) > 0 {
		out.Parameters = values
	}
	return out, nil
}

// OperatorVersionOf is the OperatorVersion a typed object runs, of those of
// its namespace: the one its spec names, else the one its Instance runs
// (current; an Operator's new version is not an upgrade until asked for),
// else the Operator's newest.
func OperatorVersionOf(spec map[string]any, current, operator string, versions []kudov1beta1.OperatorVersion) (
	*kudov1beta1.OperatorVersion, error,
) {
	name, _ := spec[OperatorVersionField].(string)
	name = cmpOr(name, current)
	var own []kudov1beta1.OperatorVersion
	for _, ov := range versions {
		if name != "" && ov.Name == name {
			if ov.Spec.Operator.Name != operator {
				return nil, fmt.Errorf("OperatorVersion %s is of Operator %s, not %s", ov.Name, ov.Spec.Operator.Name, operator)
			}
			return &ov, nil
		}
		if ov.Spec.Operator.Name == operator {
			own = append(own, ov)
		}
	}
	if name != "" {
		return nil, fmt.Errorf("OperatorVersion %q not found in the namespace: install it first (kubectl kudo install %s --skip-instance)",
			name, operator)
	}
	newest, _ := Newest(own)
	if newest == nil {
		return nil, fmt.Errorf("no OperatorVersion of Operator %s in the namespace: install the package first "+
			"(kubectl kudo install %s --skip-instance)", operator, operator)
	}
	return newest, nil
}

// NoOperatorVersionError says that a typed object has no OperatorVersion
// to run: not installed, or not its Operator's.
type NoOperatorVersionError struct{ Err error }

func (e *NoOperatorVersionError) Error() string { return e.Err.Error() }
func (e *NoOperatorVersionError) Unwrap() error { return e.Err }

// InstanceOf is the Instance that runs the typed object obj, of operator's
// kind, and its OperatorVersion, of versions (those of obj's namespace):
// the one place that decides it, for the typed objects' controller, which
// applies it, and their webhook, which admits it as it would the Instance.
// obj, of any API version of its kind, is read at the version its
// OperatorVersion serves. current is the OperatorVersion its Instance
// runs, "" when it has none. The Instance is controlled by obj and notes
// the generation it is of.
func InstanceOf(ctx context.Context, obj *unstructured.Unstructured, current, operator string, versions []kudov1beta1.OperatorVersion) (
	*kudov1beta1.Instance, *kudov1beta1.OperatorVersion, error,
) {
	spec, _ := obj.Object["spec"].(map[string]any)
	ov, err := OperatorVersionOf(spec, current, operator, versions)
	if err != nil {
		return nil, nil, &NoOperatorVersionError{Err: err}
	}
	e, err := EvolutionOf(operator, versions)
	if err != nil {
		return nil, ov, err
	}
	gvk := obj.GroupVersionKind()
	if err := e.upgradeKeepsValues(ctx, obj, current, ov); err != nil {
		return nil, ov, err
	}
	at, err := e.Convert(ctx, obj.Object, gvk.Group, gvk.Version, APIVersionOf(ov))
	if err != nil {
		return nil, ov, err
	}
	spec, _ = at.Object["spec"].(map[string]any)
	instanceSpec, err := InstanceSpec(spec, ov)
	if err != nil {
		return nil, ov, err
	}
	i := &kudov1beta1.Instance{
		TypeMeta: metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: obj.GetName(), Namespace: obj.GetNamespace(),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(obj, obj.GroupVersionKind())},
			Annotations:     map[string]string{kudov1beta1.TypedGenerationAnnotation: strconv.FormatInt(obj.GetGeneration(), 10)},
		},
		Spec: instanceSpec,
	}
	if shard, ok := obj.GetLabels()[kudov1beta1.ShardLabel]; ok {
		i.Labels = map[string]string{kudov1beta1.ShardLabel: shard}
	}
	return i, ov, nil
}

// upgradeKeepsValues refuses the upgrade of a typed object from the
// OperatorVersion current to ov when a field the object sets, read at
// current's API version, is a parameter of current whose value reaches no
// parameter of ov: no conversion rule carries it (a parameter renamed with
// no oldName, or removed), so the upgrade would drop it without a word.
func (e Evolution) upgradeKeepsValues(ctx context.Context, obj *unstructured.Unstructured, current string, ov *kudov1beta1.OperatorVersion) error {
	if current == "" || current == ov.Name {
		return nil
	}
	var running *kudov1beta1.OperatorVersion
	for i := range e {
		for j := range e[i].Versions {
			if e[i].Versions[j].Name == current {
				running = &e[i].Versions[j]
			}
		}
	}
	if running == nil {
		return nil
	}
	gvk := obj.GroupVersionKind()
	from, to := APIVersionOf(running), APIVersionOf(ov)
	at, err := e.Convert(ctx, obj.Object, gvk.Group, gvk.Version, from)
	if err != nil {
		return err
	}
	moved, err := e.Convert(ctx, at.Object, gvk.Group, from, to)
	if err != nil {
		return err
	}
	before, err := Fields(running.Spec.Parameters)
	if err != nil {
		return err
	}
	after, err := Fields(ov.Spec.Parameters)
	if err != nil {
		return err
	}
	kept := make(map[string]bool, len(after))
	for _, field := range after {
		kept[field] = true
	}
	spec, _ := at.Object["spec"].(map[string]any)
	var lost []string
	for name, field := range before {
		if _, set := spec[field]; set && !kept[moved.Carried[field]] {
			lost = append(lost, fmt.Sprintf("spec.%s (parameter %s)", field, name))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	slices.Sort(lost)
	return fmt.Errorf("the upgrade from %s to %s would lose the value of %s, which %s has no parameter for: "+
		"unset it, setting what replaces it, in the same change", current, ov.Name, strings.Join(lost, ", "), ov.Name)
}
