package webhook

import (
	"context"
	"strings"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestARequiredServiceAccountIsChecked(t *testing.T) {
	w := &Instances{RequireServiceAccount: true}
	without := instance()
	for name, check := range map[string]func() error{
		"create": func() error { _, err := w.ValidateCreate(context.Background(), without); return err },
		"update": func() error { _, err := w.ValidateUpdate(context.Background(), instance(), without); return err },
	} {
		if err := check(); err == nil || !strings.Contains(err.Error(), "spec.serviceAccountName is required") {
			t.Errorf("%s without a service account: %v", name, err)
		}
	}
	with := instance(func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "deployer" })
	if err := w.checkServiceAccount(with); err != nil {
		t.Errorf("an Instance with a service account: %v", err)
	}
	if err := (&Instances{}).checkServiceAccount(without); err != nil {
		t.Errorf("without --require-service-account: %v", err)
	}
}
