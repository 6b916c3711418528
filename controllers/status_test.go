package controllers

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
)

// TestConditionsHoldWhateverAPlanSays: a plan's error of any length becomes
// a condition message the CRD accepts.
func TestConditionsHoldWhateverAPlanSays(t *testing.T) {
	i := &kudov1beta1.Instance{}
	setReadiness(i, engine.Readiness{Ready: metav1.ConditionUnknown, Stalled: true, Reason: kudov1beta1.PlanFailedReason,
		Message: "Plan deploy failed: " + strings.Repeat("the API server said no; ", 5000)})
	for _, c := range i.Status.Conditions {
		if len(c.Message) > maxConditionMessage || !strings.HasSuffix(c.Message, "(cut)") {
			t.Errorf("%s: a message of %d bytes, ending %q", c.Type, len(c.Message), c.Message[len(c.Message)-20:])
		}
	}
}
