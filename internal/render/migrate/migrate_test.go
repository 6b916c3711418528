package migrate

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func TestObject(t *testing.T) {
	servedByAll := func(schema.GroupVersionKind) bool { return true }
	servedByNone := func(schema.GroupVersionKind) bool { return false }
	// minimal is an object with no spec, for kinds whose fields do not matter.
	minimal := func(apiVersion, kind string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: x\n", apiVersion, kind)
	}
	moved := func(kind, from, to string) *Migration { return &Migration{Kind: kind, Name: "x", From: from, To: to} }

	tests := []struct {
		name     string
		served   Served // nil: a Kubernetes 1.34 server
		in       string
		want     string // nil when obj must be unchanged
		migrated *Migration
		err      string
	}{
		{
			name:   "served version is left alone",
			served: servedByAll,
			in:     minimal("policy/v1beta1", "PodDisruptionBudget"),
		},
		{
			name:   "custom resource at a version the server does not serve is left alone",
			served: servedByNone,
			in:     minimal("zookeeper.example.com/v1beta1", "ZookeeperCluster"),
		},
		{
			name:   "successor not served",
			served: servedByNone,
			in:     minimal("policy/v1beta1", "PodDisruptionBudget"),
			err:    `PodDisruptionBudget "x": policy/v1beta1 is not served and its successor policy/v1 is not served either`,
		},
		{
			name:   "unknown kind at a built-in group/version",
			served: servedByNone,
			in:     minimal("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy"),
			err:    `ValidatingAdmissionPolicy "x": admissionregistration.k8s.io/v1beta1 is not served and no successor is known`,
		},

		// 1. policy
		{
			name: "PodDisruptionBudget: only apiVersion changes",
			in: `
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: zk-pdb, namespace: zk}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: zk}}
`,
			want: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: zk-pdb, namespace: zk}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: zk}}
`,
			migrated: &Migration{Kind: "PodDisruptionBudget", Name: "zk-pdb", From: "policy/v1beta1", To: "policy/v1"},
		},
		{
			name: "PodDisruptionBudget with an empty selector",
			in:   minimal("policy/v1beta1", "PodDisruptionBudget") + "spec: {minAvailable: 1, selector: {}}\n",
			err: `PodDisruptionBudget "x": cannot migrate policy/v1beta1 to policy/v1: spec.selector is empty, ` +
				`which matched no pods in policy/v1beta1 but matches every pod in policy/v1`,
		},
		{
			name: "policy/v1beta1 PodSecurityPolicy",
			in:   minimal("policy/v1beta1", "PodSecurityPolicy"),
			err: `PodSecurityPolicy "x": policy/v1beta1 is not served (removed in Kubernetes 1.25) and has no successor; ` +
				`PodSecurityPolicy was removed in Kubernetes 1.25: use Pod Security Admission namespace labels instead`,
		},
		{
			name: "extensions/v1beta1 PodSecurityPolicy",
			in:   minimal("extensions/v1beta1", "PodSecurityPolicy"),
			err: `PodSecurityPolicy "x": extensions/v1beta1 is not served (removed in Kubernetes 1.16) and has no successor; ` +
				`PodSecurityPolicy was removed in Kubernetes 1.25: use Pod Security Admission namespace labels instead`,
		},

		// 2. rbac
		{
			name: "Role: only apiVersion changes",
			in: `
apiVersion: rbac.authorization.k8s.io/v1beta1
kind: Role
metadata: {name: x}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
			want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: x}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
			migrated: moved("Role", "rbac.authorization.k8s.io/v1beta1", "rbac.authorization.k8s.io/v1"),
		},
		{
			name: "ClusterRoleBinding: only apiVersion changes",
			in: `
apiVersion: rbac.authorization.k8s.io/v1beta1
kind: ClusterRoleBinding
metadata: {name: x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: zk, namespace: zk}]
`,
			want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: zk, namespace: zk}]
`,
			migrated: moved("ClusterRoleBinding", "rbac.authorization.k8s.io/v1beta1", "rbac.authorization.k8s.io/v1"),
		},
		{
			name:     "ClusterRole and RoleBinding too",
			in:       minimal("rbac.authorization.k8s.io/v1beta1", "RoleBinding"),
			want:     minimal("rbac.authorization.k8s.io/v1", "RoleBinding"),
			migrated: moved("RoleBinding", "rbac.authorization.k8s.io/v1beta1", "rbac.authorization.k8s.io/v1"),
		},

		// 3. workloads
		{
			name: "extensions/v1beta1 Deployment: selector from template labels, one pod at a time, no rollbackTo",
			in: `
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: x}
spec:
  replicas: 3
  rollbackTo: {revision: 2}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
			migrated: moved("Deployment", "extensions/v1beta1", "apps/v1"),
		},
		{
			name: "extensions/v1beta1 Deployment: explicit selector and rolling update values are kept",
			in: `
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}
  template: {metadata: {labels: {app: web, tier: front}}}
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}
  template: {metadata: {labels: {app: web, tier: front}}}
`,
			migrated: moved("Deployment", "extensions/v1beta1", "apps/v1"),
		},
		{
			name: "extensions/v1beta1 Deployment with Recreate gets no rolling update",
			in: `
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: x}
spec:
  strategy: {type: Recreate}
  template: {metadata: {labels: {app: web}}}
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {app: web}}
  strategy: {type: Recreate}
  template: {metadata: {labels: {app: web}}}
`,
			migrated: moved("Deployment", "extensions/v1beta1", "apps/v1"),
		},
		{
			name: "apps/v1beta1 Deployment: selector, no rollbackTo, apps/v1 rolling update defaults",
			in: `
apiVersion: apps/v1beta1
kind: Deployment
metadata: {name: x}
spec:
  rollbackTo: {revision: 0}
  template: {metadata: {labels: {app: web}}}
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}}
`,
			migrated: moved("Deployment", "apps/v1beta1", "apps/v1"),
		},
		{
			name: "Deployment with neither selector nor template labels",
			in:   minimal("apps/v1beta2", "Deployment") + "spec: {template: {metadata: {labels: {}}}}\n",
			err: `Deployment "x": cannot migrate apps/v1beta2 to apps/v1: ` +
				`spec.selector is missing and spec.template.metadata.labels is empty`,
		},
		{
			name: "apps/v1beta1 StatefulSet: OnDelete stays the update strategy",
			in: `
apiVersion: apps/v1beta1
kind: StatefulSet
metadata: {name: x}
spec:
  serviceName: zk-hs
  template: {metadata: {labels: {app: zk}}}
`,
			want: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: x}
spec:
  serviceName: zk-hs
  selector: {matchLabels: {app: zk}}
  updateStrategy: {type: OnDelete}
  template: {metadata: {labels: {app: zk}}}
`,
			migrated: moved("StatefulSet", "apps/v1beta1", "apps/v1"),
		},
		{
			name: "apps/v1beta1 StatefulSet: explicit update strategy is kept",
			in: `
apiVersion: apps/v1beta1
kind: StatefulSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: zk}}
  updateStrategy: {type: RollingUpdate}
  template: {metadata: {labels: {app: zk}}}
`,
			want: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: zk}}
  updateStrategy: {type: RollingUpdate}
  template: {metadata: {labels: {app: zk}}}
`,
			migrated: moved("StatefulSet", "apps/v1beta1", "apps/v1"),
		},
		{
			name: "apps/v1beta2 StatefulSet: defaults already match apps/v1",
			in: `
apiVersion: apps/v1beta2
kind: StatefulSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: zk}}
  template: {metadata: {labels: {app: zk}}}
`,
			want: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: zk}}
  template: {metadata: {labels: {app: zk}}}
`,
			migrated: moved("StatefulSet", "apps/v1beta2", "apps/v1"),
		},
		{
			name: "extensions/v1beta1 DaemonSet: OnDelete stays, no templateGeneration",
			in: `
apiVersion: extensions/v1beta1
kind: DaemonSet
metadata: {name: x}
spec:
  templateGeneration: 4
  template: {metadata: {labels: {app: agent}}}
`,
			want: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: OnDelete}
  template: {metadata: {labels: {app: agent}}}
`,
			migrated: moved("DaemonSet", "extensions/v1beta1", "apps/v1"),
		},
		{
			name: "apps/v1beta2 DaemonSet: only apiVersion changes",
			in: `
apiVersion: apps/v1beta2
kind: DaemonSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}}
`,
			want: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}}
`,
			migrated: moved("DaemonSet", "apps/v1beta2", "apps/v1"),
		},
		{
			name: "extensions/v1beta1 ReplicaSet: selector from template labels",
			in: `
apiVersion: extensions/v1beta1
kind: ReplicaSet
metadata: {name: x}
spec:
  template: {metadata: {labels: {app: web}}}
`,
			want: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: x}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}}
`,
			migrated: moved("ReplicaSet", "extensions/v1beta1", "apps/v1"),
		},

		// 4. networking
		{
			name: "extensions/v1beta1 Ingress: defaultBackend, nested service backends, pathType",
			in: `
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: x}
spec:
  backend: {serviceName: default, servicePort: 80}
  tls: [{hosts: [a.example.com], secretName: tls}]
  rules:
  - host: a.example.com
    http:
      paths:
      - path: /
        backend: {serviceName: web, servicePort: http}
      - path: /api
        pathType: Prefix
        backend: {serviceName: api, servicePort: "8080"}
`,
			want: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: x}
spec:
  defaultBackend: {service: {name: default, port: {number: 80}}}
  tls: [{hosts: [a.example.com], secretName: tls}]
  rules:
  - host: a.example.com
    http:
      paths:
      - path: /
        pathType: ImplementationSpecific
        backend: {service: {name: web, port: {name: http}}}
      - path: /api
        pathType: Prefix
        backend: {service: {name: api, port: {number: 8080}}}
`,
			migrated: moved("Ingress", "extensions/v1beta1", "networking.k8s.io/v1"),
		},
		{
			name: "networking.k8s.io/v1beta1 Ingress: resource backends are kept",
			in: `
apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata: {name: x}
spec:
  ingressClassName: nginx
  backend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: static}}
  rules:
  - http:
      paths:
      - backend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: icons}}
`,
			want: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: x}
spec:
  ingressClassName: nginx
  defaultBackend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: static}}
  rules:
  - http:
      paths:
      - pathType: ImplementationSpecific
        backend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: icons}}
`,
			migrated: moved("Ingress", "networking.k8s.io/v1beta1", "networking.k8s.io/v1"),
		},
		{
			name: "Ingress backend without servicePort",
			in:   minimal("networking.k8s.io/v1beta1", "Ingress") + "spec: {rules: [{http: {paths: [{path: /}, {backend: {serviceName: web}}]}}]}\n",
			err: `Ingress "x": cannot migrate networking.k8s.io/v1beta1 to networking.k8s.io/v1: ` +
				`spec.rules[0].http.paths[1].backend: servicePort <nil> is neither a port number nor a port name`,
		},
		{
			name:     "IngressClass: only apiVersion changes",
			in:       minimal("networking.k8s.io/v1beta1", "IngressClass") + "spec: {controller: k8s.io/ingress-nginx}\n",
			want:     minimal("networking.k8s.io/v1", "IngressClass") + "spec: {controller: k8s.io/ingress-nginx}\n",
			migrated: moved("IngressClass", "networking.k8s.io/v1beta1", "networking.k8s.io/v1"),
		},
		{
			name: "extensions/v1beta1 NetworkPolicy",
			in:   minimal("extensions/v1beta1", "NetworkPolicy"),
			err: `NetworkPolicy "x": extensions/v1beta1 is not served (removed in Kubernetes 1.16) ` +
				`and is not migrated automatically; use networking.k8s.io/v1 instead`,
		},

		// 5. batch
		{
			name:     "CronJob: only apiVersion changes",
			in:       minimal("batch/v1beta1", "CronJob") + "spec: {schedule: '@daily', jobTemplate: {spec: {backoffLimit: 2}}}\n",
			want:     minimal("batch/v1", "CronJob") + "spec: {schedule: '@daily', jobTemplate: {spec: {backoffLimit: 2}}}\n",
			migrated: moved("CronJob", "batch/v1beta1", "batch/v1"),
		},

		// 6. apiextensions
		{
			name: "CustomResourceDefinition with a single version and top-level schema, subresources and columns",
			in: `
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  version: v1
  validation:
    openAPIV3Schema:
      type: object
      properties: {spec: {type: object}}
  subresources: {status: {}}
  additionalPrinterColumns:
  - {name: Phase, type: string, JSONPath: .status.phase}
`,
			want: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties: {spec: {type: object}}
        x-kubernetes-preserve-unknown-fields: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Phase, type: string, jsonPath: .status.phase}
`,
			migrated: moved("CustomResourceDefinition", "apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1"),
		},
		{
			name: "CustomResourceDefinition with versions, own schemas and preserveUnknownFields false",
			in: `
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  scope: Cluster
  version: v2
  preserveUnknownFields: false
  subresources: {status: {}}
  versions:
  - name: v1
    served: true
    storage: false
    additionalPrinterColumns: [{name: Age, type: date, JSONPath: .metadata.creationTimestamp}]
  - name: v2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
    subresources: {}
`,
			want: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    subresources: {status: {}}
    additionalPrinterColumns: [{name: Age, type: date, jsonPath: .metadata.creationTimestamp}]
  - name: v2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
    subresources: {}
`,
			migrated: moved("CustomResourceDefinition", "apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1"),
		},
		{
			name: "CustomResourceDefinition with a conversion webhook",
			in: `
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  preserveUnknownFields: true
  versions: [{name: v1, served: true, storage: true}]
  conversion:
    strategy: Webhook
    webhookClientConfig: {service: {name: conv, namespace: ops}}
`,
			want: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: x}
spec:
  group: example.com
  names: {kind: Backup, plural: backups}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  conversion:
    strategy: Webhook
    webhook:
      clientConfig: {service: {name: conv, namespace: ops}}
      conversionReviewVersions: [v1beta1]
`,
			migrated: moved("CustomResourceDefinition", "apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1"),
		},
		{
			name: "CustomResourceDefinition without a version",
			in:   minimal("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition") + "spec: {group: example.com}\n",
			err: `CustomResourceDefinition "x": cannot migrate apiextensions.k8s.io/v1beta1 to apiextensions.k8s.io/v1: ` +
				`spec.version and spec.versions are both missing`,
		},

		// 7. admissionregistration
		{
			name: "ValidatingWebhookConfiguration: v1beta1 defaults made explicit",
			in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingWebhookConfiguration
metadata: {name: x}
webhooks:
- name: check.example.com
  sideEffects: None
  clientConfig: {service: {name: hook, namespace: ops}}
`,
			want: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: x}
webhooks:
- name: check.example.com
  sideEffects: None
  clientConfig: {service: {name: hook, namespace: ops}}
  admissionReviewVersions: [v1beta1]
  failurePolicy: Ignore
  matchPolicy: Exact
  timeoutSeconds: 30
`,
			migrated: moved("ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1beta1", "admissionregistration.k8s.io/v1"),
		},
		{
			name: "MutatingWebhookConfiguration: explicit values kept, reinvocationPolicy made explicit",
			in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingWebhookConfiguration
metadata: {name: x}
webhooks:
- name: inject.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
  failurePolicy: Fail
  timeoutSeconds: 5
`,
			want: `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: x}
webhooks:
- name: inject.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
  failurePolicy: Fail
  matchPolicy: Exact
  timeoutSeconds: 5
  reinvocationPolicy: Never
`,
			migrated: moved("MutatingWebhookConfiguration", "admissionregistration.k8s.io/v1beta1", "admissionregistration.k8s.io/v1"),
		},
		{
			name: "webhook without sideEffects",
			in:   minimal("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration") + "webhooks: [{name: check.example.com}]\n",
			err: `ValidatingWebhookConfiguration "x": cannot migrate admissionregistration.k8s.io/v1beta1 to admissionregistration.k8s.io/v1: ` +
				`webhook "check.example.com" has no sideEffects, which v1beta1 took as Unknown and v1 does not allow: ` +
				`set sideEffects to None or NoneOnDryRun`,
		},
		{
			name: "webhook with sideEffects Unknown, after one that could migrate",
			in: minimal("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration") +
				"webhooks: [{name: a.example.com, sideEffects: None}, {name: b.example.com, sideEffects: Unknown}]\n",
			err: `MutatingWebhookConfiguration "x": cannot migrate admissionregistration.k8s.io/v1beta1 to admissionregistration.k8s.io/v1: ` +
				`webhook "b.example.com" has sideEffects Unknown, which v1 does not allow: set sideEffects to None or NoneOnDryRun`,
		},
		{
			name: "webhook with sideEffects Some",
			in:   minimal("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration") + "webhooks: [{name: c.example.com, sideEffects: Some}]\n",
			err: `ValidatingWebhookConfiguration "x": cannot migrate admissionregistration.k8s.io/v1beta1 to admissionregistration.k8s.io/v1: ` +
				`webhook "c.example.com" has sideEffects Some, which v1 does not allow: set sideEffects to None or NoneOnDryRun`,
		},

		// 8. the rest
		{
			name: "autoscaling/v2beta1 HorizontalPodAutoscaler",
			in:   minimal("autoscaling/v2beta1", "HorizontalPodAutoscaler"),
			err: `HorizontalPodAutoscaler "x": autoscaling/v2beta1 is not served (removed in Kubernetes 1.25) ` +
				`and is not migrated automatically because the metrics fields changed shape; use autoscaling/v2 instead`,
		},
		{
			name: "autoscaling/v2beta2 HorizontalPodAutoscaler",
			in:   minimal("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
			err: `HorizontalPodAutoscaler "x": autoscaling/v2beta2 is not served (removed in Kubernetes 1.26) ` +
				`and is not migrated automatically because the metrics fields changed shape; use autoscaling/v2 instead`,
		},
		{
			name: "CSIStorageCapacity",
			in:   minimal("storage.k8s.io/v1beta1", "CSIStorageCapacity"),
			err: `CSIStorageCapacity "x": storage.k8s.io/v1beta1 is not served (removed in Kubernetes 1.27) ` +
				`and is not migrated automatically; use storage.k8s.io/v1 instead`,
		},
		{
			name: "flowcontrol v1beta1 FlowSchema",
			in:   minimal("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
			err: `FlowSchema "x": flowcontrol.apiserver.k8s.io/v1beta1 is not served (removed in Kubernetes 1.26) ` +
				`and is not migrated automatically because the priority level concurrency shares changed name or meaning; ` +
				`use flowcontrol.apiserver.k8s.io/v1 instead`,
		},
		{
			name: "flowcontrol v1beta2 PriorityLevelConfiguration",
			in:   minimal("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration"),
			err: `PriorityLevelConfiguration "x": flowcontrol.apiserver.k8s.io/v1beta2 is not served (removed in Kubernetes 1.29) ` +
				`and is not migrated automatically because the priority level concurrency shares changed name or meaning; ` +
				`use flowcontrol.apiserver.k8s.io/v1 instead`,
		},
		{
			name: "flowcontrol v1beta3 PriorityLevelConfiguration",
			in:   minimal("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration"),
			err: `PriorityLevelConfiguration "x": flowcontrol.apiserver.k8s.io/v1beta3 is not served (removed in Kubernetes 1.32) ` +
				`and is not migrated automatically because the priority level concurrency shares changed name or meaning; ` +
				`use flowcontrol.apiserver.k8s.io/v1 instead`,
		},
		{
			name: "EndpointSlice",
			in:   minimal("discovery.k8s.io/v1beta1", "EndpointSlice"),
			err: `EndpointSlice "x": discovery.k8s.io/v1beta1 is not served (removed in Kubernetes 1.25) ` +
				`and is not migrated automatically because endpoint topology became deprecatedTopology; use discovery.k8s.io/v1 instead`,
		},
		{
			name: "events.k8s.io Event",
			in:   minimal("events.k8s.io/v1beta1", "Event"),
			err: `Event "x": events.k8s.io/v1beta1 is not served (removed in Kubernetes 1.25) ` +
				`and is not migrated automatically; use events.k8s.io/v1 instead`,
		},
		{
			name: "RuntimeClass",
			in:   minimal("node.k8s.io/v1beta1", "RuntimeClass"),
			err: `RuntimeClass "x": node.k8s.io/v1beta1 is not served (removed in Kubernetes 1.25) ` +
				`and is not migrated automatically; use node.k8s.io/v1 instead`,
		},
		{
			name: "CertificateSigningRequest",
			in:   minimal("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
			err: `CertificateSigningRequest "x": certificates.k8s.io/v1beta1 is not served (removed in Kubernetes 1.22) ` +
				`and is not migrated automatically because certificates.k8s.io/v1 requires spec.signerName; use certificates.k8s.io/v1 instead`,
		},
		{
			name: "TokenReview",
			in:   minimal("authentication.k8s.io/v1beta1", "TokenReview"),
			err: `TokenReview "x": authentication.k8s.io/v1beta1 is not served (removed in Kubernetes 1.22) ` +
				`and is not migrated automatically because a review is a request to the API server, not an object a package creates; ` +
				`use authentication.k8s.io/v1 instead`,
		},
		{
			name: "SubjectAccessReview",
			in:   minimal("authorization.k8s.io/v1beta1", "SubjectAccessReview"),
			err: `SubjectAccessReview "x": authorization.k8s.io/v1beta1 is not served (removed in Kubernetes 1.22) ` +
				`and is not migrated automatically because a review is a request to the API server, not an object a package creates; ` +
				`use authorization.k8s.io/v1 instead`,
		},
		{
			name: "ControllerRevision",
			in:   minimal("apps/v1beta2", "ControllerRevision"),
			err: `ControllerRevision "x": apps/v1beta2 is not served (removed in Kubernetes 1.16) ` +
				`and is not migrated automatically; use apps/v1 instead`,
		},
		{
			name:     "PriorityClass: only apiVersion changes",
			in:       minimal("scheduling.k8s.io/v1beta1", "PriorityClass") + "value: 1000\nglobalDefault: false\n",
			want:     minimal("scheduling.k8s.io/v1", "PriorityClass") + "value: 1000\nglobalDefault: false\n",
			migrated: moved("PriorityClass", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1"),
		},
		{
			name:     "Lease: only apiVersion changes",
			in:       minimal("coordination.k8s.io/v1beta1", "Lease") + "spec: {holderIdentity: zk-0, leaseDurationSeconds: 15}\n",
			want:     minimal("coordination.k8s.io/v1", "Lease") + "spec: {holderIdentity: zk-0, leaseDurationSeconds: 15}\n",
			migrated: moved("Lease", "coordination.k8s.io/v1beta1", "coordination.k8s.io/v1"),
		},
		{
			name:     "StorageClass: only apiVersion changes",
			in:       minimal("storage.k8s.io/v1beta1", "StorageClass") + "provisioner: ebs.csi.aws.com\nreclaimPolicy: Retain\n",
			want:     minimal("storage.k8s.io/v1", "StorageClass") + "provisioner: ebs.csi.aws.com\nreclaimPolicy: Retain\n",
			migrated: moved("StorageClass", "storage.k8s.io/v1beta1", "storage.k8s.io/v1"),
		},
		{
			name:     "CSIDriver: only apiVersion changes",
			in:       minimal("storage.k8s.io/v1beta1", "CSIDriver") + "spec: {attachRequired: false}\n",
			want:     minimal("storage.k8s.io/v1", "CSIDriver") + "spec: {attachRequired: false}\n",
			migrated: moved("CSIDriver", "storage.k8s.io/v1beta1", "storage.k8s.io/v1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := tt.served
			if served == nil {
				served = servedBy(t, "1.34")
			}
			obj := parse(t, tt.in)
			want := tt.want
			if want == "" {
				want = tt.in
			}

			migrated, err := Object(obj, served)

			if gotErr := fmt.Sprint(err); err != nil || tt.err != "" {
				if gotErr != tt.err {
					t.Errorf("error:\n got %s\nwant %s", gotErr, tt.err)
				}
			}
			if !reflect.DeepEqual(migrated, tt.migrated) {
				t.Errorf("migration: got %v, want %v", migrated, tt.migrated)
			}
			if wantObj := parse(t, want); !reflect.DeepEqual(obj.Object, wantObj.Object) {
				got, _ := yaml.Marshal(obj.Object)
				t.Errorf("object:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestMigrationString(t *testing.T) {
	tests := []struct {
		m    Migration
		want string
	}{
		{Migration{Kind: "PodDisruptionBudget", Name: "zk-pdb", From: "policy/v1beta1", To: "policy/v1"},
			`PodDisruptionBudget "zk-pdb": policy/v1beta1 → policy/v1`},
		{Migration{Kind: "CustomResourceDefinition", Name: "x", From: "apiextensions.k8s.io/v1beta1", To: "apiextensions.k8s.io/v1",
			Changes: []string{"schema .spec: type object added", "schema .spec.port: anyOf integer or string is now x-kubernetes-int-or-string"}},
			`CustomResourceDefinition "x": apiextensions.k8s.io/v1beta1 → apiextensions.k8s.io/v1 ` +
				`(schema .spec: type object added; schema .spec.port: anyOf integer or string is now x-kubernetes-int-or-string)`},
		{Migration{Kind: "Deployment", Name: "spark", From: "apps/v1", To: "apps/v1", Dropped: "spec.template.metadata.initializers"},
			`Deployment "spark": dropped field spec.template.metadata.initializers, which Kubernetes does not declare in apps/v1`},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
}

func TestServedBy(t *testing.T) {
	tests := []struct {
		version    string
		apiVersion string
		kind       string
		want       bool
	}{
		{"1.21", "rbac.authorization.k8s.io/v1beta1", "Role", true},
		{"1.21", "extensions/v1beta1", "Ingress", true},
		{"1.21", "extensions/v1beta1", "Deployment", false},
		{"1.21", "apps/v1beta2", "StatefulSet", false},
		{"1.22", "rbac.authorization.k8s.io/v1beta1", "Role", false},
		{"1.22", "networking.k8s.io/v1beta1", "Ingress", false},
		{"1.22", "policy/v1beta1", "PodDisruptionBudget", true},
		{"1.22", "storage.k8s.io/v1beta1", "CSIStorageCapacity", true},
		{"1.25", "policy/v1beta1", "PodDisruptionBudget", false},
		{"1.25", "autoscaling/v2beta1", "HorizontalPodAutoscaler", false},
		{"1.25", "autoscaling/v2beta2", "HorizontalPodAutoscaler", true},
		{"1.25", "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", true},
		{"v1.34.4", "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", false},
		{"1.34", "apps/v1", "Deployment", true},
		{"1.34", "policy/v1", "PodDisruptionBudget", true},
		{"1.34", "admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy", true},
		{"1.34", "zookeeper.example.com/v1beta1", "ZookeeperCluster", true},
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+tt.apiVersion+" "+tt.kind, func(t *testing.T) {
			served := servedBy(t, tt.version)
			if got := served(schema.FromAPIVersionAndKind(tt.apiVersion, tt.kind)); got != tt.want {
				t.Errorf("got %t, want %t", got, tt.want)
			}
		})
	}
}

func TestServedByInvalidVersion(t *testing.T) {
	for _, version := range []string{"", "latest", "1", "2.0", "1.x"} {
		t.Run(version, func(t *testing.T) {
			_, err := ServedBy(version)
			want := fmt.Sprintf("invalid Kubernetes version %q: want 1.<minor>[.<patch>], e.g. 1.34", version)
			if fmt.Sprint(err) != want {
				t.Errorf("got %v, want %s", err, want)
			}
		})
	}
}

func servedBy(t *testing.T, version string) Served {
	t.Helper()
	served, err := ServedBy(version)
	if err != nil {
		t.Fatal(err)
	}
	return served
}

func parse(t *testing.T, in string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return obj
}
