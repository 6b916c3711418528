// Package drift judges an Instance's objects against its inventory once its
// last plan completed, as plain data, in cert-manager's shape: the
// controller gathers what each object of the inventory is now (an
// Observation), Judge says what is wrong and what to do about it (a
// Verdict), and the controller carries that out.
package drift

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// AfterCorrection is when an Instance whose object was just applied again
// is judged again: its Ready condition shows the drift until then.
const AfterCorrection = time.Second

// Observation is what the controller found of one object of the inventory.
type Observation struct {
	// Live is the object as the cache holds it; nil when it is gone.
	Live *unstructured.Unstructured
	// Seen is Live as the inventory notes objects (objects.Observe).
	Seen kudov1beta1.InventoryObject
	// Rendered is the object as its task renders it, where the task last ran
	// and with the parameters its plan started from, when Moved: nil when
	// its task does not render it alone (a Pipe's file, a child Instance).
	Rendered *unstructured.Unstructured
	// Differs says whether applying Rendered would change Live (a
	// server-side dry run, objects.Manager.Diff), asked when Moved and Live
	// and Rendered are there.
	Differs bool
	// Health is Live's (objects.Manager.Health).
	Health health.Result
	// Pace says whether the object may be corrected now (inventory.Limiter).
	Pace inventory.Verdict
}

// Moved reports whether an object of the inventory is no longer as the
// inventory saw it, so that what its task renders is needed to judge it:
// it is gone (a Job aside: it runs once, and its TTL may delete it), or,
// unless annotated kudo.dev/reconcile: disabled, it changed. An object that
// did not move is judged from the cache alone: idle Instances cost no
// request.
func Moved(e inventory.Entry, live *unstructured.Unstructured, seen kudov1beta1.InventoryObject) bool {
	if live == nil {
		return !inventory.RunsOnce(e.ObjectRef)
	}
	return live.GetAnnotations()[kudov1beta1.ReconcileAnnotation] != kudov1beta1.Disabled &&
		inventory.Changed(e.InventoryObject, seen)
}

// Policy is what the Instance asks of drift.
type Policy struct {
	// Correct says whether objects gone or changed are applied again.
	Correct bool
	// OperatorVersion names the Instance's OperatorVersion in messages.
	OperatorVersion string
}

// Verdict is what Judge finds and what is to be done.
type Verdict struct {
	// Problems keep the Instance from being Ready.
	Problems []engine.Problem
	// Corrections are the objects to apply again.
	Corrections []Correction
	// Seen are what the inventory now notes of objects that changed in no
	// field kudo-ng applies (another manager's, an autoscaler's replicas),
	// or whose task does not render them alone.
	Seen []kudov1beta1.InventoryObject
	// Requeue, when not zero, is when the Instance is to be judged again.
	Requeue time.Duration
}

// Correction is an object to apply again as its task rendered it.
type Correction struct {
	Entry  inventory.Entry
	Object *unstructured.Unstructured
	// Fight says the object is changed again after each correction.
	Fight bool
	// Problem is what the correction mends, as reported.
	Problem string
}

// Judge judges each object of the inventory from what was observed of it
// (observations[n] is of entries[n]): gone is Missing; changed in what
// kudo-ng applied is Drifted; unhealthy is ResourceNotReady, as KUDO
// reported, changed or not. With correction on, what is missing or drifted
// is applied again at the pace the Limiter allows.
func Judge(entries []inventory.Entry, observations []Observation, policy Policy) Verdict {
	var v Verdict
	for n, e := range entries {
		o := &observations[n]
		ref := inventory.Describe(e.ObjectRef)
		if o.Live == nil {
			if Moved(e, nil, o.Seen) {
				missing := engine.Problem{Reason: kudov1beta1.MissingReason, Message: ref + " is missing"}
				v.Problems = append(v.Problems, v.correct(e, o, missing, policy))
			}
			continue
		}
		drifted := false
		if Moved(e, o.Live, o.Seen) {
			if o.Rendered != nil && o.Differs {
				drifted = true
			} else {
				v.Seen = append(v.Seen, o.Seen)
			}
		}
		var p *engine.Problem
		if drifted {
			p = &engine.Problem{Reason: kudov1beta1.DriftedReason, Message: ref + " was changed by another field manager"}
		}
		if !o.Health.Healthy {
			msg := o.Health.Message
			if drifted {
				msg += "; it was changed by another field manager"
			}
			p = &engine.Problem{Reason: kudov1beta1.ResourceNotReadyReason, Message: msg}
		}
		if drifted {
			*p = v.correct(e, o, *p, policy)
		}
		if p != nil {
			v.Problems = append(v.Problems, *p)
		}
	}
	return v
}

// correct decides the correction of an object gone or drifted, and returns
// the problem as reported.
func (v *Verdict) correct(e inventory.Entry, o *Observation, p engine.Problem, policy Policy) engine.Problem {
	if !policy.Correct {
		return p
	}
	if o.Rendered == nil {
		p.Message += fmt.Sprintf(" (not corrected: task %s is not an Apply task of OperatorVersion %s)", e.Task.Task, policy.OperatorVersion)
		return p
	}
	if o.Pace.Fight {
		p = engine.Problem{Reason: kudov1beta1.DriftFightReason, Message: fmt.Sprintf(
			"%s is changed again after each correction (%d in a row): another controller or user fights over it; "+
				"stop it, or annotate the object %s: %s",
			inventory.Describe(e.ObjectRef), o.Pace.Corrections, kudov1beta1.ReconcileAnnotation, kudov1beta1.Disabled)}
	}
	if o.Pace.Wait > 0 {
		v.requeueAfter(o.Pace.Wait)
		p.Message += fmt.Sprintf("; corrected again in %s", o.Pace.Wait.Round(time.Second))
		return p
	}
	v.Corrections = append(v.Corrections, Correction{Entry: e, Object: o.Rendered, Fight: o.Pace.Fight, Problem: p.Message})
	v.requeueAfter(AfterCorrection)
	p.Message += "; applied again"
	return p
}

func (v *Verdict) requeueAfter(d time.Duration) {
	if v.Requeue == 0 || d < v.Requeue {
		v.Requeue = d
	}
}
