package render

import (
	"strings"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kudoTask and kudoCluster are the fixtures for which KUDO v0.19.0's own
// enhancer computed the dependencies hashes of TestDependenciesHashIsKUDOs.
// The values were obtained by a throwaway module outside this repository
// that requires github.com/kudobuilder/kudo v0.19.0 (with its own
// dependencies: apimachinery v0.19.2, sigs.k8s.io/yaml v1.2.0, gopkg.in/yaml.v2
// v2.3.0), parses kudoTask with renderer.YamlToObject, puts kudoCluster in
// controller-runtime's fake client and runs renderer.DefaultEnhancer.Apply
// (Metadata: instance demo in namespace ns, operator demo-op, version 0.1.0,
// owner an Instance), then reads kudo.dev/dependencies-hash off each pod
// template. The cluster objects below are as that fake client returned them.
// The only differences: there the CronJob was batch/v1beta1 (KUDO's client-go
// knew no batch/v1 CronJob), which does not enter the hash; and there
// changed-secret had no last-applied annotation (see the "stale" case).
const kudoTask = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
      annotations: {existing: kept}
    spec:
      imagePullSecrets:
      - name: registry
      containers:
      - name: web
        image: nginx
        envFrom:
        - configMapRef: {name: env-only}
        env:
        - name: X
          valueFrom:
            secretKeyRef: {name: env-only-secret, key: x}
      volumes:
      - name: config
        configMap: {name: app-config}
      - name: secret
        secret: {secretName: app-secret}
      - name: projected
        projected:
          sources:
          - configMap: {name: projected-only}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  labels: {app: demo}
data:
  a.properties: |
    x=1
    y=2
  b: "2"
  JAVA_OPTS: "-Xms512m -Xmx2g -XX:+UseG1GC -XX:MaxGCPauseMillis=200 -Dlog4j.configuration=file:/etc/app/log4j.properties -Dapp.mode=production"
  quoted: "a value with a\ttab that is long enough to be folded by newer yaml.v2 at the eightieth column, surely"
---
apiVersion: v1
kind: Secret
metadata:
  name: app-secret
  annotations: {note: ignored}
type: Opaque
data:
  password: cGFzc3dvcmQ=
stringData:
  user: admin
---
apiVersion: v1
kind: Secret
metadata:
  name: registry
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: eyJhdXRocyI6e319
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: skipped
  annotations:
    kudo.dev/skip-hash-calculation: ""
data:
  changes: often
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: postgres
      volumes:
      - name: secret
        secret: {secretName: app-secret}
      - name: config
        configMap: {name: app-config}
      - name: config-again
        configMap: {name: app-config}
      - name: missing
        configMap: {name: missing}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: busybox
          volumes:
          - name: skipped
            configMap: {name: skipped}
          - name: external-secret
            secret: {secretName: external-secret}
          - name: external-config
            configMap: {name: external-config}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: only-missing
spec:
  selector:
    matchLabels: {app: only-missing}
  template:
    metadata:
      labels: {app: only-missing}
    spec:
      containers:
      - name: c
        image: busybox
      volumes:
      - name: missing
        secret: {secretName: missing}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: only-skipped
spec:
  selector:
    matchLabels: {app: only-skipped}
  template:
    metadata:
      labels: {app: only-skipped}
    spec:
      containers:
      - name: c
        image: busybox
      volumes:
      - name: skipped
        configMap: {name: skipped}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: empty
  labels: {}
data: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: typed
spec:
  selector:
    matchLabels: {app: typed}
  template:
    metadata:
      labels: {app: typed}
    spec:
      containers:
      - name: c
        image: busybox
      volumes:
      - name: empty
        configMap: {name: empty}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: stale
spec:
  selector:
    matchLabels: {app: stale}
  template:
    metadata:
      labels: {app: stale}
    spec:
      containers:
      - name: c
        image: busybox
      volumes:
      - name: changed
        secret: {secretName: changed-secret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: no-deps
spec:
  selector:
    matchLabels: {app: no-deps}
  template:
    metadata:
      labels: {app: no-deps}
    spec:
      containers:
      - name: c
        image: busybox
        envFrom:
        - configMapRef: {name: app-config}
`

const kudoCluster = `
apiVersion: v1
data:
  token: czNjcjN0
kind: Secret
metadata:
  annotations:
    kudo.dev/last-applied-configuration: '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"external-secret","namespace":"ns","creationTimestamp":null,"labels":{"heritage":"kudo","kudo.dev/instance":"demo","kudo.dev/operator":"demo-op"},"annotations":{"kudo.dev/plan":"deploy"},"ownerReferences":[{"apiVersion":"kudo.dev/v1beta1","kind":"Instance","name":"demo","uid":"11111111-2222-3333-4444-555555555555","controller":true,"blockOwnerDeletion":true}]},"stringData":{"token":"s3cr3t"}}'
    kudo.dev/plan: deploy
  creationTimestamp: "2021-03-04T05:06:07Z"
  labels:
    heritage: kudo
    kudo.dev/instance: demo
    kudo.dev/operator: demo-op
  name: external-secret
  namespace: ns
  resourceVersion: "4711"
  uid: 7f1b8a3e-0000-4000-8000-000000000001
type: Opaque
---
apiVersion: v1
data:
  key: value
kind: ConfigMap
metadata:
  annotations:
    owner: someone-else
  creationTimestamp: "2021-03-04T05:06:08Z"
  labels:
    app: external
  name: external-config
  namespace: ns
  resourceVersion: "4712"
  uid: 7f1b8a3e-0000-4000-8000-000000000002
---
apiVersion: v1
data:
  token: bmV3LXZhbHVl
kind: Secret
metadata:
  annotations:
    kudo.dev/last-applied-configuration: '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"changed-secret","namespace":"ns","creationTimestamp":null,"labels":{"heritage":"kudo","kudo.dev/instance":"demo","kudo.dev/operator":"demo-op"}},"data":{"token":"b2xkLXZhbHVl"},"type":"Opaque"}'
  creationTimestamp: "2021-03-04T05:06:09Z"
  labels:
    heritage: kudo
    kudo.dev/instance: demo
    kudo.dev/operator: demo-op
  name: changed-secret
  namespace: ns
  resourceVersion: "4713"
  uid: 7f1b8a3e-0000-4000-8000-000000000003
type: Opaque
`

// TestDependenciesHashIsKUDOs: kudo.dev/dependencies-hash has the value KUDO
// v0.19 computed for the same objects, so that the first plan kudo-ng runs on
// an Instance that KUDO managed does not restart its pods.
func TestDependenciesHashIsKUDOs(t *testing.T) {
	objs := mustObjects(t, kudoTask)
	cluster := mustObjects(t, kudoCluster)
	deps := func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
		for _, o := range cluster {
			if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
				return o, true, nil
			}
		}
		return nil, false, nil
	}
	owner := metav1.OwnerReference{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: "demo", UID: "11111111-2222-3333-4444-555555555555"}
	md := &Metadata{
		InstanceName: "demo", Namespace: "ns", OperatorName: "demo-op", OperatorVersion: "0.1.0",
		PlanName: "deploy", PhaseName: "main", StepName: "app", PlanUID: "plan-uid", Owner: &owner,
	}
	if err := Enhance(objs, md, BuiltinScope, deps); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kind, name string
		want       string // "" for no annotation
		why        string
	}{
		{"Deployment", "web", "800ac7a228210f72434a9560dd2cf208",
			"imagePullSecrets and volumes (long values that newer yaml.v2 would fold); not env, envFrom nor projected volumes"},
		{"StatefulSet", "db", "f30eba037ec47f3526c56c2322d12fb0", "a ConfigMap mounted twice counts twice; a missing one as zero bytes"},
		// KUDO applied external-secret with stringData and no type; the
		// cluster has data and type Opaque: the annotation counts.
		{"CronJob", "backup", "393ed6c8f0baec67d3f991a7ef675cfe",
			"the job's pod template; a skipped ConfigMap, a cluster Secret as last applied, a cluster ConfigMap as it is"},
		{"Deployment", "only-missing", "4ae71336e44bf9bf79d2752e234818a5", "only a missing Secret: the MD5 of 16 zero bytes"},
		{"Deployment", "only-skipped", "4ae71336e44bf9bf79d2752e234818a5",
			"only a ConfigMap annotated kudo.dev/skip-hash-calculation, even with an empty value"},
		{"Deployment", "typed", "d0d612f8d4e7b4ded5e4a4a08fd85e72", "a rendered ConfigMap as its Go type has it: no empty data nor labels"},
		// KUDO would have hashed the stale annotation; the hash follows the
		// Secret as it is (KUDO's value for it without the annotation).
		{"Deployment", "stale", "367d667a7f69eab129552f0d2aae891f",
			"a cluster Secret whose last-applied annotation no longer matches its data counts as it is"},
		{"Deployment", "no-deps", "", "a ConfigMap only read by envFrom is no dependency"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.name, func(t *testing.T) {
			var obj *unstructured.Unstructured
			for _, o := range objs {
				if o.GetKind() == tt.kind && o.GetName() == tt.name {
					obj = o
				}
			}
			path := []string{"spec", "template", "metadata", "annotations"}
			if tt.kind == "CronJob" {
				path = []string{"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}
			}
			annotations, _, _ := unstructured.NestedStringMap(obj.Object, path...)
			got, found := annotations[kudov1beta1.DependenciesHashAnnotation]
			if got != tt.want || found != (tt.want != "") {
				t.Errorf("%s: got %q (present %t), want %q", tt.why, got, found, tt.want)
			}
		})
	}
}

// TestKudoYAMLDoesNotFoldLongStrings: dependencies are serialized as KUDO
// serialized them, with gopkg.in/yaml.v2 v2.3.0, which never folded a long
// string (later versions fold at the 80th column). The expected text is
// what gopkg.in/yaml.v2 v2.3.0 wrote for &unstructured.Unstructured{Object:
// obj}, as KUDO's ToYaml did, in the throwaway module described above.
func TestKudoYAMLDoesNotFoldLongStrings(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("lorem ipsum ", 12))
	obj := map[string]any{
		"data": map[string]any{
			"plain":   long,
			"single":  "- " + long,
			"double":  "\t" + long + "  two  spaces  " + long,
			"literal": long + "\n" + long + "\n",
			"short":   "a b",
		},
		"list": []any{long, int64(3), nil, true},
	}
	const want = `object:
  data:
    double: "\tlorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum  two  spaces  lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum"
    literal: |
      lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum
      lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum
    plain: lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum
    short: a b
    single: '- lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum'
  list:
  - lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum
  - 3
  - null
  - true
`
	got, err := kudoYAML(obj)
	if err != nil || string(got) != want {
		t.Errorf("got %v\n%s\nwant\n%s", err, got, want)
	}
}
