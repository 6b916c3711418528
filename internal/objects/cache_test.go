package objects

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/inventory"
)

func TestTrimForCache(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a Deployment keeps all but its pod template", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {kudo.dev/applied-hash: abc}
  managedFields: [{manager: kudo-ng, operation: Apply}]
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
status: {replicas: 2, readyReplicas: 2}`, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {kudo.dev/applied-hash: abc}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
status: {replicas: 2, readyReplicas: 2}`},
		{"a CronJob drops its job template", `apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  schedule: "@daily"
  jobTemplate: {spec: {template: {spec: {containers: [{name: backup, image: busybox}]}}}}`, `apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec: {schedule: "@daily"}`},
		{"a Pod keeps its metadata and status", `apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {kudo.dev/instance: web}}
spec: {containers: [{name: web, image: nginx}], nodeName: kwok-node-0}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}`, `apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {kudo.dev/instance: web}}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}`},
		{"a ConfigMap keeps its data: templates hash what pods mount", `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}`, `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testTrim.ForCache(object(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := object(t, tt.want).Object; !reflect.DeepEqual(got.(*unstructured.Unstructured).Object, want) {
				t.Errorf("ForCache = %v, want %v", got.(*unstructured.Unstructured).Object, want)
			}
		})
	}
}

func TestTrimForCacheTyped(t *testing.T) {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
	for _, obj := range []client.Object{
		&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: template}},
		&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: template}},
		&appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: template}},
		&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: template}},
		&corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: template.DeepCopy()}},
		&batchv1.Job{Spec: batchv1.JobSpec{Template: template}},
		&batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}},
		&corev1.Pod{Spec: template.Spec},
	} {
		gvk, err := apiutil.GVKForObject(obj, kubescheme.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(gvk.Kind, func(t *testing.T) {
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kudo-ng"}})
			if _, err := testTrim.ForCache(obj); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "nginx") || obj.GetManagedFields() != nil {
				t.Errorf("ForCache kept the pod spec or the managed fields: %s", b)
			}
		})
	}
}

// The inventory notes what the API server answered to an apply; the cache
// later shows the object decoded from a watch, typed for a built-in kind.
// Both must look the same, or every object would look changed by someone.
func TestAsCachedIsWhatTheCacheHolds(t *testing.T) {
	answers := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","uid":"u","resourceVersion":"7",` +
			`"creationTimestamp":"2026-11-24T02:37:17Z","labels":{"kudo.dev/instance":"i"},` +
			`"managedFields":[{"manager":"kudo-ng","operation":"Apply"}]},"data":{"mode":"fast"},"binaryData":{"b":"AAE="}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},"type":"Opaque","data":{"password":"c2VjcmV0"}}`,
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ns"},"spec":{"clusterIP":"None",` +
			`"clusterIPs":["None"],"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":"http"}],` +
			`"selector":{"app":"web"},"type":"ClusterIP","sessionAffinity":"None","ipFamilies":["IPv4"],` +
			`"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"busybox"}]},` +
			`"status":{"phase":"Running"}}`,
	}
	for _, answer := range answers {
		applied := &unstructured.Unstructured{}
		if err := applied.UnmarshalJSON([]byte(answer)); err != nil {
			t.Fatal(err)
		}
		t.Run(applied.GetKind(), func(t *testing.T) {
			got, err := testTrim.asCached(applied)
			if err != nil {
				t.Fatal(err)
			}
			typed, gvk, err := kubescheme.Codecs.UniversalDeserializer().Decode([]byte(answer), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			if _, err := testTrim.ForCache(typed); err != nil {
				t.Fatal(err)
			}
			cached := &unstructured.Unstructured{}
			if err := into(cached, typed, *gvk); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Object, cached.Object) {
				t.Errorf("asCached = %v\nthe cache holds %v", got.Object, cached.Object)
			}
			noted, err := testTrim.Observe(got)
			if err != nil {
				t.Fatal(err)
			}
			if seen, _ := testTrim.Observe(cached); inventory.Changed(noted, seen) {
				t.Errorf("the inventory noted %+v, the cache shows %+v", noted, seen)
			}
		})
	}
	t.Run("a custom resource", func(t *testing.T) {
		cr := object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, managedFields: [{manager: kudo-ng}]}\nspec: {size: 3}")
		got, err := testTrim.asCached(cr)
		if err != nil {
			t.Fatal(err)
		}
		if want := object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}"); !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("asCached = %v, want %v", got.Object, want.Object)
		}
	})
}

func TestObserve(t *testing.T) {
	configMap := func(data, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns", "resourceVersion": status, "labels": map[string]any{"a": "b"}},
			"data":     map[string]any{"k": data}}}
		return u
	}
	a, _ := testTrim.Observe(configMap("v", "1"))
	b, _ := testTrim.Observe(configMap("v", "2"))
	c, _ := testTrim.Observe(configMap("w", "1"))
	if inventory.Changed(a, b) {
		t.Error("a new resourceVersion alone is a change")
	}
	if !inventory.Changed(a, c) {
		t.Error("new data is no change")
	}
	d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "generation": int64(3)}, "status": map[string]any{"replicas": int64(1)}}}
	o, _ := testTrim.Observe(d)
	if o.Generation != 3 || o.Hash != "" {
		t.Errorf("a kind with a generation is seen by it: %+v", o)
	}
}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTheCacheHoldsNoSecretsData: a Secret's data is digested, so drift
// detection still sees a change of it, and neither form keeps a value.
func TestTheCacheHoldsNoSecretsData(t *testing.T) {
	secret := func(password string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
			Data: map[string][]byte{"password": []byte(password)}, StringData: map[string]string{"user": "admin"}}
	}
	trimmed := func(s *corev1.Secret) *corev1.Secret {
		out, err := testTrim.ForCache(s)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Secret)
	}
	one, same, other := trimmed(secret("hunter2-long")), trimmed(secret("hunter2-long")), trimmed(secret("changed"))
	b, _ := json.Marshal(one)
	if strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte("hunter2-long"))) || strings.Contains(string(b), "admin") ||
		len(one.Data) != 1 || one.StringData != nil {
		t.Errorf("the cached Secret holds its data: %s", b)
	}
	if !reflect.DeepEqual(one.Data, same.Data) || reflect.DeepEqual(one.Data, other.Data) {
		t.Errorf("the digest does not follow the data: %x, %x, %x", one.Data, same.Data, other.Data)
	}
	if again := trimmed(one.DeepCopy()); !reflect.DeepEqual(again.Data, one.Data) {
		t.Errorf("trimming a cached Secret again changes it: %x", again.Data)
	}
	u, err := Unstructured(one)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	if want := base64.StdEncoding.EncodeToString(one.Data[SecretDigestKey]); data[SecretDigestKey] != want || len(data) != 1 {
		t.Errorf("the unstructured form of a cached Secret has data %v, want its digest %s", data, want)
	}
}

// TestASecretsDigestIsKeyed: the inventory's hash of a Secret is made from
// its digest, so a reader of the Instance could try guesses of a weak value
// against an unkeyed one.
func TestASecretsDigestIsKeyed(t *testing.T) {
	data := map[string][]byte{"pin": []byte("1234")}
	unkeyed := sha256.Sum256([]byte(`{"pin":"MTIzNA=="}`))
	one := Trim{DigestKey: []byte("key one")}.secretDigest(data)[SecretDigestKey]
	two := Trim{DigestKey: []byte("key two")}.secretDigest(data)[SecretDigestKey]
	if bytes.Equal(one, unkeyed[:]) || bytes.Equal(one, two) {
		t.Errorf("the digest of a Secret's data does not depend on the key: %x, %x", one, two)
	}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "ns"},
		"data": map[string]any{"pin": "MTIzNA=="},
	}}
	seenOne, err := Trim{DigestKey: []byte("key one")}.Observe(secret)
	if err != nil {
		t.Fatal(err)
	}
	seenTwo, err := Trim{DigestKey: []byte("key two")}.Observe(secret)
	if err != nil {
		t.Fatal(err)
	}
	if seenOne == seenTwo {
		t.Errorf("the inventory's hash of a Secret does not depend on the key: %+v", seenOne)
	}
}

// testTrim trims as the manager does, with a key of its own.
var testTrim = Trim{DigestKey: []byte("test key")}
