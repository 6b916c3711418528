// Package health judges whether an applied object is ready, with kstatus
// for every kind and KUDO's rules where they differ: a failed Job fails the
// plan, and a child Instance is ready when its plan has finished.
package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Result is the verdict on one object.
type Result struct {
	Healthy bool
	// Fatal: the object failed for good (a failed Job, a child Instance
	// whose plan failed); the plan cannot go on.
	Fatal bool
	// Message says what is awaited, or, for a healthy object whose health
	// could not be judged, why it counts as healthy.
	Message string
	// Status is the verdict in kstatus's words: Current, InProgress, Failed.
	Status string
	// Rule is what judged: a package's health rule, or one of the Rule
	// constants.
	Rule string
	// Observed are the fields a package's rule read.
	Observed []kudov1beta1.ObservedField
}

// The verdicts, as kstatus words them.
const (
	Current    = string(status.CurrentStatus)
	InProgress = string(status.InProgressStatus)
	Failed     = string(status.FailedStatus)
)

// What judges an object when its package has no rule for it.
const (
	RuleKstatus   = "kstatus"
	RuleJob       = "KUDO's rule for Jobs: succeeded"
	RuleChildPlan = "KUDO's rule for Instances: plan complete"
	// RuleFirstConsumer: AwaitsFirstConsumer.
	RuleFirstConsumer = "kudo-ng's rule for claims: bound by their first pod"
)

// Record is the record of a verdict on obj that a waiting step keeps.
func Record(obj *unstructured.Unstructured, r Result) kudov1beta1.ObjectHealth {
	return kudov1beta1.ObjectHealth{
		APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Status: r.Status, Rule: r.Rule, Message: r.Message, Observed: r.Observed,
	}
}

var (
	instanceKind = kudov1beta1.GroupVersion.WithKind("Instance").GroupKind()
	jobKind      = schema.GroupKind{Group: "batch", Kind: "Job"}
	claimKind    = schema.GroupKind{Kind: "PersistentVolumeClaim"}
)

// Check judges an object as read from the cluster.
func Check(obj *unstructured.Unstructured) Result {
	ref := fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	var res Result
	switch obj.GroupVersionKind().GroupKind() {
	case instanceKind:
		res = instance(obj, ref)
		res.Rule = RuleChildPlan
	case jobKind:
		res = job(obj, ref)
		res.Rule = RuleJob
	default:
		res = kstatus(obj, ref)
		res.Rule = RuleKstatus
	}
	if res.Status == "" {
		switch {
		case res.Healthy:
			res.Status = Current
		case res.Fatal:
			res.Status = Failed
		default:
			res.Status = InProgress
		}
	}
	return res
}

func kstatus(obj *unstructured.Unstructured, ref string) Result {
	res, err := status.Compute(obj)
	if err != nil {
		return Result{Message: fmt.Sprintf("%s: cannot judge its status: %v", ref, err)}
	}
	switch res.Status {
	case status.CurrentStatus:
		if unjudged(obj) {
			return Result{Healthy: true, Message: ref + " reports no status; counted healthy once applied"}
		}
		return Result{Healthy: true}
	case status.FailedStatus:
		return Result{Message: fmt.Sprintf("%s has failed: %s", ref, res.Message), Status: Failed}
	default:
		msg := res.Message
		if msg == "" {
			msg = strings.ToLower(string(res.Status))
		}
		return Result{Message: fmt.Sprintf("waiting for %s: %s", ref, msg), Status: string(res.Status)}
	}
}

// State is an object's health without its progress: kstatus's status, a
// Job's outcome, a child Instance's plan status. A Deployment's status
// changes a dozen times as it rolls out, its State twice; only a new State
// can change the verdict of Check.
func State(obj *unstructured.Unstructured) string {
	switch obj.GroupVersionKind().GroupKind() {
	case instanceKind:
		st, _, _ := unstructured.NestedString(obj.Object, "status", "activePlan", "status")
		return st
	case jobKind:
		switch res := job(obj, ""); {
		case res.Healthy:
			return "Complete"
		case res.Fatal:
			return "Failed"
		}
		return "Running"
	}
	res, err := status.Compute(obj)
	if err != nil {
		return "Unknown"
	}
	return string(res.Status)
}

// PendingClaimClass is the StorageClass a PersistentVolumeClaim names while
// it is Pending; ok is false for any other object. Whether such a claim is
// healthy depends on the class, which Check does not read: see
// AwaitsFirstConsumer.
func PendingClaimClass(obj *unstructured.Unstructured) (class string, ok bool) {
	if obj.GroupVersionKind().GroupKind() != claimKind {
		return "", false
	}
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	class, _, _ = unstructured.NestedString(obj.Object, "spec", "storageClassName")
	return class, phase == "Pending" && class != ""
}

// AwaitsFirstConsumer is the verdict on a Pending claim whose StorageClass
// binds a volume only once a pod that uses the claim is scheduled
// (volumeBindingMode WaitForFirstConsumer, the default class's mode on kind
// and most clouds): only a later step's pod can bind it, so waiting for it
// would never end. KUDO counted every claim healthy at once.
func AwaitsFirstConsumer(obj *unstructured.Unstructured, class string) Result {
	return Result{Healthy: true, Status: Current, Rule: RuleFirstConsumer, Message: fmt.Sprintf(
		"%s %s is Pending until a pod uses it (StorageClass %s binds on first consumer); counted healthy", obj.GetKind(), obj.GetName(), class)}
}

// unjudged: a custom object with neither conditions nor an observed
// generation, which kstatus counts as Current only because it cannot tell.
func unjudged(obj *unstructured.Unstructured) bool {
	if builtinGroups[obj.GroupVersionKind().Group] {
		return false
	}
	_, hasConditions, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	_, hasObserved, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return !hasConditions && !hasObserved
}

// builtinGroups are Kubernetes' own API groups, whose kinds kstatus knows or
// which have no status to wait for (ConfigMaps, RBAC, ...).
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "policy": true, "rbac.authorization.k8s.io": true, "networking.k8s.io": true,
	"storage.k8s.io": true, "apiextensions.k8s.io": true, "admissionregistration.k8s.io": true, "autoscaling": true,
	"scheduling.k8s.io": true, "coordination.k8s.io": true, "discovery.k8s.io": true, "node.k8s.io": true,
	"certificates.k8s.io": true, "apiregistration.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
}

// job: KUDO waits for a Job to succeed, where kstatus is content once it
// has started; a failed Job fails the plan.
func job(obj *unstructured.Unstructured, ref string) Result {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || cond["status"] != "True" {
			continue
		}
		switch cond["type"] {
		case "Complete":
			return Result{Healthy: true}
		case "Failed":
			msg, _ := cond["message"].(string)
			reason, _ := cond["reason"].(string)
			return Result{Fatal: true, Message: fmt.Sprintf("%s failed: %s: %s", ref, reason, msg)}
		}
	}
	succeeded, _, _ := unstructured.NestedInt64(obj.Object, "status", "succeeded")
	active, _, _ := unstructured.NestedInt64(obj.Object, "status", "active")
	failed, _, _ := unstructured.NestedInt64(obj.Object, "status", "failed")
	return Result{Message: fmt.Sprintf("waiting for %s to complete: %d active, %d succeeded, %d failed", ref, active, succeeded, failed)}
}

// instance: a child Instance is ready when the plan it runs has finished.
func instance(obj *unstructured.Unstructured, ref string) Result {
	name, _, _ := unstructured.NestedString(obj.Object, "status", "activePlan", "name")
	st, _, _ := unstructured.NestedString(obj.Object, "status", "activePlan", "status")
	switch kudov1beta1.ExecutionStatus(st) {
	case kudov1beta1.ExecutionComplete:
		return Result{Healthy: true}
	case kudov1beta1.ExecutionFatalError:
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "planStatus", name, "message")
		return Result{Fatal: true, Message: fmt.Sprintf("%s: plan %s failed: %s", ref, name, msg)}
	case "":
		return Result{Message: fmt.Sprintf("waiting for %s to start its plan", ref)}
	default:
		return Result{Message: fmt.Sprintf("waiting for %s: plan %s is %s", ref, name, st)}
	}
}

// PodProblem describes why a pod is not ready, naming the container and the
// reason the kubelet gives (ErrImagePull, CrashLoopBackOff, ...), or how it
// failed (exit code and termination message); empty when it has none to
// give.
func PodProblem(pod *unstructured.Unstructured) string {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
		for _, s := range statuses {
			cs, ok := s.(map[string]any)
			if !ok {
				continue
			}
			if problem := containerProblem(cs); problem != "" {
				name, _, _ := unstructured.NestedString(cs, "name")
				return fmt.Sprintf("pod %s: container %s: %s", pod.GetName(), name, problem)
			}
		}
	}
	return ""
}

func containerProblem(cs map[string]any) string {
	reason, _, _ := unstructured.NestedString(cs, "state", "waiting", "reason")
	msg, _, _ := unstructured.NestedString(cs, "state", "waiting", "message")
	if reason == "" {
		code, _, _ := unstructured.NestedInt64(cs, "state", "terminated", "exitCode")
		if code == 0 {
			return ""
		}
		reason, _, _ = unstructured.NestedString(cs, "state", "terminated", "reason")
		reason = fmt.Sprintf("%s, exit code %d", reason, code)
		msg, _, _ = unstructured.NestedString(cs, "state", "terminated", "message")
	}
	if reason == "ContainerCreating" || reason == "PodInitializing" {
		return ""
	}
	if msg = strings.TrimSpace(msg); msg != "" {
		return reason + ": " + msg
	}
	return reason
}
