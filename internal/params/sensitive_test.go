package params

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestParseSecretReference(t *testing.T) {
	tests := []struct {
		value   string
		want    kudov1beta1.SecretKeyReference
		isRef   bool
		wantErr string
	}{
		{value: "plain"},
		{value: "@secret:db/password", want: kudov1beta1.SecretKeyReference{Name: "db", Key: "password"}, isRef: true},
		{value: "@secret:db", isRef: true, wantErr: `parameter P: "@secret:db" names no Secret key: write @secret:NAME/KEY`},
		{value: "@secret:/password", isRef: true, wantErr: "names no Secret key"},
		{value: "@secret:db/a/b", isRef: true, wantErr: "names no Secret key"},
	}
	for _, tt := range tests {
		got, isRef, err := ParseSecretReference("P", tt.value)
		if isRef != tt.isRef || got != tt.want || (err == nil) != (tt.wantErr == "") ||
			(err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("ParseSecretReference(%q) = %+v, %t, %v; want %+v, %t, %q", tt.value, got, isRef, err, tt.want, tt.isRef, tt.wantErr)
		}
	}
}

func TestResolveSecretReferences(t *testing.T) {
	defs := []kudov1beta1.Parameter{
		{Name: "USER", Default: ptr.To("admin")},
		{Name: "PASSWORD", Required: ptr.To(true), Sensitive: ptr.To(true)},
	}
	got, err := Resolve(defs, nil, []string{"PASSWORD=@secret:db/password"})
	if err != nil {
		t.Fatal(err)
	}
	want := Assigned{Values: map[string]string{}, Secrets: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "db", Key: "password"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve = %+v, want %+v", got, want)
	}
	if plain, err := Resolve(defs, nil, []string{"PASSWORD=hunter2"}); err != nil || !reflect.DeepEqual(plain.PlainSensitive(defs), []string{"PASSWORD"}) {
		t.Errorf("PlainSensitive of a value given on the command line = %v, %v", plain.PlainSensitive(defs), err)
	}
	if _, err := Resolve(defs, nil, []string{"PASSWORD=@secret:db"}); err == nil {
		t.Error("a reference without key is accepted")
	}

	spec := kudov1beta1.InstanceSpec{Parameters: map[string]string{"PASSWORD": "old", "USER": "u"}}
	got.ApplyTo(&spec)
	if _, ok := spec.Parameters["PASSWORD"]; ok || spec.SecretParameters["PASSWORD"].Name != "db" {
		t.Errorf("ApplyTo a reference: %+v", spec)
	}
	Assigned{Values: map[string]string{"PASSWORD": "new"}}.ApplyTo(&spec)
	if _, ok := spec.SecretParameters["PASSWORD"]; ok || spec.Parameters["PASSWORD"] != "new" {
		t.Errorf("ApplyTo a value: %+v", spec)
	}
}
