package webhook

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func fromSecret(name, secret, key string) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		delete(i.Spec.Parameters, name)
		if i.Spec.SecretParameters == nil {
			i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{}
		}
		i.Spec.SecretParameters[name] = kudov1beta1.SecretKeyReference{Name: secret, Key: key}
	}
}

func TestSecretParametersOnCreate(t *testing.T) {
	pin := withParameter(kudov1beta1.Parameter{Name: "PIN", Type: kudov1beta1.IntegerValueType, Sensitive: ptr.To(true)})
	tests := []struct {
		name    string
		change  func(*kudov1beta1.Instance)
		wantErr string
	}{
		{name: "accepts a required parameter taken from a Secret's key", change: fromSecret("TOKEN", "db", "token")},
		{
			name:    "refuses a Secret key for an undefined parameter",
			change:  fromSecret("COLOUR", "db", "colour"),
			wantErr: "spec.secretParameters.COLOUR: parameter COLOUR is not defined by OperatorVersion web-0.1.0",
		},
		{
			name:    "refuses a parameter both given a value and taken from a Secret",
			change:  edits(fromSecret("GREETING", "db", "greeting"), set("GREETING", "hi")),
			wantErr: "spec.secretParameters.GREETING: parameter GREETING has a value in spec.parameters too: set it in one of them",
		},
		{
			name:    "refuses a name no Secret can have",
			change:  fromSecret("TOKEN", "DB_creds", "token"),
			wantErr: `spec.secretParameters.TOKEN.name: "DB_creds" is not a Secret's name`,
		},
		{
			name:    "refuses a key no Secret can have",
			change:  fromSecret("TOKEN", "db", "a/b"),
			wantErr: `spec.secretParameters.TOKEN.key: "a/b" is not a Secret's key`,
		},
		{
			name:    "refuses a sensitive value of the wrong type without showing it",
			change:  set("PIN", "hunter2"),
			wantErr: "parameter PIN: its value is not an integer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := instance(tt.change)
			err := ValidateCreate(i, operatorVersion(pin))
			checkErr(t, err, tt.wantErr)
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows a sensitive value: %v", err)
			}
		})
	}
}

func TestSecretParametersOnUpdate(t *testing.T) {
	t.Run("another Secret key for a parameter runs the plan it triggers", func(t *testing.T) {
		old := instance(fromSecret("MOOD", "moods", "today"))
		i := instance(fromSecret("MOOD", "moods", "tomorrow"))
		DefaultUpdate(old, i, operatorVersion())
		if i.Spec.PlanExecution.PlanName != "mood" || i.Spec.PlanExecution.UID == "" {
			t.Errorf("planExecution = %+v, want mood with a new uid", i.Spec.PlanExecution)
		}
		checkErr(t, ValidateUpdate(old, i, operatorVersion()), "")
	})
	t.Run("an immutable parameter cannot move to a Secret", func(t *testing.T) {
		old := instance()
		i := instance(fromSecret("SIZE", "sizes", "size"))
		checkErr(t, ValidateUpdate(old, i, operatorVersion()),
			`parameter SIZE is immutable: it cannot change from "small" to "@secret:sizes/size"`)
	})
	t.Run("a sensitive immutable parameter's change is refused without its values", func(t *testing.T) {
		ov := operatorVersion(withParameter(kudov1beta1.Parameter{Name: "SEED", Immutable: ptr.To(true), Sensitive: ptr.To(true)}))
		old, i := instance(set("SEED", "s3cr3t-one")), instance(set("SEED", "s3cr3t-two"))
		err := ValidateUpdate(old, i, ov)
		checkErr(t, err, "parameter SEED is immutable: it cannot change; to change it, install a new Instance")
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error shows a sensitive value: %v", err)
		}
	})
}
