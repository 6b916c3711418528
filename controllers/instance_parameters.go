package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// secretParametersIndex indexes Instances by the Secrets their secret
// parameters and their kubeconfig read, as namespace/name: a change of one
// wakes exactly them.
const secretParametersIndex = ".spec.secretParameters"

func secretsReadBy(o client.Object) []string {
	i := o.(*kudov1beta1.Instance)
	keys := make([]string, 0, len(i.Spec.SecretParameters)+1)
	for _, ref := range i.Spec.SecretParameters {
		keys = append(keys, types.NamespacedName{Namespace: i.Namespace, Name: ref.Name}.String())
	}
	if kc := i.Spec.KubeConfig; kc != nil {
		keys = append(keys, types.NamespacedName{Namespace: i.Namespace, Name: kc.SecretRef.Name}.String())
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// instanceParameters are an Instance's parameter values in one reconcile.
type instanceParameters struct {
	// values are what templates receive: spec.parameters, and the values of
	// the Secret keys spec.secretParameters names.
	values map[string]string
	// recorded are the values as the status records them and plan selection
	// compares them: sensitive ones masked.
	recorded map[string]string
	// keys mask the sensitive values, and verify the masks the status
	// recorded.
	keys params.MaskKeys
	// redactor hides the sensitive values in what the manager writes for
	// people.
	redactor *params.Redactor
	// err says which Secret key could not be read: no plan starts or
	// advances until it can.
	err error
}

// resolveParameters reads the Instance's secret parameters from the API
// server, as the Instance's identity: the cache holds no Secret's data, and
// an Instance may only read the Secrets its service account may.
func (r *InstanceReconciler) resolveParameters(ctx context.Context, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion,
	reader client.Reader) *instanceParameters {
	out := &instanceParameters{values: maps.Clone(i.Spec.Parameters), keys: r.MaskKeys.ForInstance(i.UID)}
	if out.values == nil {
		out.values = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(i.Spec.SecretParameters)) {
		v, err := readSecretKey(ctx, reader, i.Namespace, i.Spec.SecretParameters[name])
		if err != nil {
			out.err = fmt.Errorf("parameter %s: %w", name, err)
			break
		}
		out.values[name] = v
	}
	sensitive := params.Sensitive(ov.Spec.Parameters, i.Spec.SecretParameters)
	out.recorded = params.Masked(out.values, sensitive, out.keys)
	out.redactor = params.NewRedactor(params.WithDefaults(ov.Spec.Parameters, out.values), sensitive)
	r.redactors.set(client.ObjectKeyFromObject(i), out.redactor, len(sensitive) > 0)
	return out
}

func readSecretKey(ctx context.Context, reader client.Reader, namespace string, ref kudov1beta1.SecretKeyReference) (string, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("secret %s/%s not found", namespace, ref.Name)
		}
		return "", fmt.Errorf("reading Secret %s/%s: %w", namespace, ref.Name, err)
	}
	data, ok := secret.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %s", namespace, ref.Name, ref.Key)
	}
	return string(data), nil
}

// appliedValues are the values the last plan ran with, to render its tasks
// again (drift correction, adoption): the recorded ones, with the masked
// ones recovered from the current values, which must still match them.
func (p *planRun) appliedValues() (map[string]string, error) {
	return params.Unmask(p.instance.Status.AppliedParameters, p.params.values, p.params.keys)
}

// redactStatus hides sensitive values in the messages of the status: a
// step's error may quote what a template rendered.
func redactStatus(status *kudov1beta1.InstanceStatus, redactor *params.Redactor) {
	for name, ps := range status.PlanStatus {
		ps.Message = redactor.String(ps.Message)
		for k := range ps.Phases {
			phase := &ps.Phases[k]
			phase.Message = redactor.String(phase.Message)
			for n := range phase.Steps {
				phase.Steps[n].Message = redactor.String(phase.Steps[n].Message)
			}
		}
		status.PlanStatus[name] = ps
	}
	for k := range status.Conditions {
		status.Conditions[k].Message = redactor.String(status.Conditions[k].Message)
	}
}

// redactors are the Redactors of the Instances with sensitive parameters,
// by namespace and name, for the events recorded about them.
type redactors struct{ byName sync.Map }

func (rs *redactors) set(key types.NamespacedName, r *params.Redactor, sensitive bool) {
	if sensitive {
		rs.byName.Store(key, r)
	} else {
		rs.byName.Delete(key)
	}
}

func (rs *redactors) forget(key types.NamespacedName) { rs.byName.Delete(key) }

func (rs *redactors) of(obj runtime.Object) *params.Redactor {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	r, _ := rs.byName.Load(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
	redactor, _ := r.(*params.Redactor)
	return redactor
}

// redactingRecorder hides the sensitive values of an Instance in the events
// recorded about it, whatever reports them.
type redactingRecorder struct {
	record.EventRecorder
	redactors *redactors
}

func (r redactingRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	r.EventRecorder.Event(obj, eventType, reason, r.redactors.of(obj).String(message))
}

func (r redactingRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

func (r redactingRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason, format string,
	args ...any) {
	r.EventRecorder.AnnotatedEventf(obj, annotations, eventType, reason, "%s", r.redactors.of(obj).String(fmt.Sprintf(format, args...)))
}
