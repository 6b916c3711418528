package migrate

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
)

// TestUndeclared: from objects of built-in kinds, exactly the fields their Go
// types do not declare are dropped, each reported, as KUDO's typed objects
// dropped them; everything else stays as it was, empty and null values
// included, and nothing is added.
func TestUndeclared(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // "" when unchanged
		dropped []string
	}{
		{
			name: "a Spark Deployment's pod template initializers, which Kubernetes removed",
			in: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: spark}
spec:
  paused: false
  replicas: 0
  strategy: {}
  selector: {matchLabels: {app: spark}}
  template:
    metadata:
      labels: {app: spark}
      initializers: {pending: [{name: podimage.initializer.kubernetes.io}]}
    spec:
      volumes: []
      nodeSelector: null
      containers: [{name: spark, image: spark, resources: {limits: {cpu: 0.5}}, ports: [{containerPort: 7077}]}]
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: spark}
spec:
  paused: false
  replicas: 0
  strategy: {}
  selector: {matchLabels: {app: spark}}
  template:
    metadata:
      labels: {app: spark}
    spec:
      volumes: []
      nodeSelector: null
      containers: [{name: spark, image: spark, resources: {limits: {cpu: 0.5}}, ports: [{containerPort: 7077}]}]
`,
			dropped: []string{"spec.template.metadata.initializers"},
		},
		{
			name: "fields of list items and of metadata, sorted by path",
			in: `
apiVersion: v1
kind: Pod
metadata: {name: p, initializers: null, clusterName: east}
spec:
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox, livenessProbe: {handler: {}, exec: {command: ["true"]}}, extra: 1}
`,
			want: `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox, livenessProbe: {exec: {command: ["true"]}}}
`,
			dropped: []string{
				"metadata.clusterName", "metadata.initializers",
				"spec.containers[1].extra", "spec.containers[1].livenessProbe.handler",
			},
		},
		{
			name: "an object with only declared fields",
			in: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, labels: {}, annotations: null}
data: {a: "1"}
immutable: false
`,
		},
		{
			name: "a custom resource is not known",
			in:   "apiVersion: example.com/v1\nkind: Backup\nmetadata: {name: b}\nspec: {anything: 1}\n",
		},
		{
			name: "an object that does not convert is left to the API server",
			in:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, initializers: {}}\nspec: {replicas: three}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, tt.in)
			want := tt.want
			if want == "" {
				want = tt.in
			}

			got := Undeclared(obj, scheme.Scheme)

			var dropped []string
			for _, m := range got {
				if m.Kind != obj.GetKind() || m.Name != obj.GetName() || m.From != obj.GetAPIVersion() || m.To != m.From {
					t.Errorf("migration %+v does not name the object", m)
				}
				dropped = append(dropped, m.Dropped)
			}
			if !reflect.DeepEqual(dropped, tt.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.dropped)
			}
			// Compare as JSON: the applied hash of an object is its JSON.
			gotJSON, _ := json.Marshal(obj.Object)
			wantJSON, _ := json.Marshal(parse(t, want).Object)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("object:\n %s\nwant\n %s", gotJSON, wantJSON)
			}
		})
	}
}
