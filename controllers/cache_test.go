package controllers

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
			got, err := TrimForCache(object(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := object(t, tt.want).Object; !reflect.DeepEqual(got.(*unstructured.Unstructured).Object, want) {
				t.Errorf("TrimForCache = %v, want %v", got.(*unstructured.Unstructured).Object, want)
			}
		})
	}
}
