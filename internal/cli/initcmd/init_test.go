package initcmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
)

func TestDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml", CRDOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "kind: CustomResourceDefinition"); n != 5 {
		t.Errorf("--crd-only printed %d CRDs, want 5", n)
	}
	out.Reset()
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Deployment", "name: kudo-controller-manager", "kind: ValidatingWebhookConfiguration",
		"kind: Certificate", "kind: ClusterRole", "name: instances.kudo.dev"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("init --dry-run -o yaml lacks %q", want)
		}
	}
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true}); err == nil {
		t.Error("--dry-run without -o yaml must be refused")
	}
}

func TestDryRunWithASelfSignedCA(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	opts := &Options{DryRun: true, Output: "yaml", SelfSignedCA: true, Image: "kudo-ng.local/kudo:test", ImagePullPolicy: "Never"}
	if err := Run(context.Background(), nil, streams, opts); err != nil {
		t.Fatal(err)
	}
	printed := out.String()
	for _, want := range []string{"name: webhook-server-cert", "type: kubernetes.io/tls", "caBundle: ", "image: kudo-ng.local/kudo:test",
		"imagePullPolicy: Never"} {
		if !strings.Contains(printed, want) {
			t.Errorf("init --unsafe-self-signed-webhook-ca --dry-run lacks %q", want)
		}
	}
	for _, unwanted := range []string{"kind: Certificate", "kind: Issuer", "cert-manager.io/inject-ca-from"} {
		if strings.Contains(printed, unwanted) {
			t.Errorf("init --unsafe-self-signed-webhook-ca --dry-run prints %q", unwanted)
		}
	}
}

func TestAnUnknownPullPolicyIsRefused(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml", ImagePullPolicy: "Sometimes"})
	if err == nil || !strings.Contains(err.Error(), `--kudo-image-pull-policy "Sometimes"`) {
		t.Errorf("err = %v, want one naming --kudo-image-pull-policy", err)
	}
}

// printed runs init --dry-run -o yaml and returns the one Deployment and
// the one PodDisruptionBudget it prints, by kind.
func printed(t *testing.T, opts *Options) map[string]*unstructured.Unstructured {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	opts.DryRun, opts.Output = true, "yaml"
	if err := Run(context.Background(), nil, streams, opts); err != nil {
		t.Fatal(err)
	}
	objs, err := decode(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*unstructured.Unstructured{"Deployment": nil, "PodDisruptionBudget": nil}
	for _, obj := range objs {
		kind := obj.GetKind()
		if _, wanted := byKind[kind]; !wanted {
			continue
		}
		if byKind[kind] != nil {
			t.Fatalf("init prints two objects of kind %s", kind)
		}
		byKind[kind] = obj
	}
	for kind, obj := range byKind {
		if obj == nil {
			t.Fatalf("init prints no %s", kind)
		}
	}
	return byKind
}

func TestTheManagerRunsTheReplicasAskedFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int32
	}{
		{"two by default, so that one serves the webhooks while the other restarts", nil, 2},
		{"one", []string{"--replicas", "1"}, 1},
		{"three", []string{"--replicas", "3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			cmd := NewCmd(streams, genericclioptions.NewConfigFlags(false))
			cmd.SetArgs(append([]string{"--dry-run", "-o", "yaml"}, tc.args...))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			objs, err := decode(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			deployments := 0
			for _, obj := range objs {
				if obj.GetKind() != "Deployment" {
					continue
				}
				deployments++
				deployment := &appsv1.Deployment{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, deployment); err != nil {
					t.Fatal(err)
				}
				if got := ptr.Deref(deployment.Spec.Replicas, 0); got != tc.want {
					t.Errorf("spec.replicas = %d, want %d", got, tc.want)
				}
			}
			if deployments != 1 {
				t.Errorf("init printed %d Deployments, want 1", deployments)
			}
		})
	}
}

// An eviction may take one replica at a time, whatever their number: with
// one replica a drain must still evict it.
func TestEvictionsTakeOneManagerReplicaAtATime(t *testing.T) {
	for _, replicas := range []int32{1, 2, 3} {
		objs := printed(t, &Options{Replicas: ptr.To(replicas)})
		pdb := &policyv1.PodDisruptionBudget{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["PodDisruptionBudget"].Object, pdb); err != nil {
			t.Fatal(err)
		}
		if pdb.Spec.MinAvailable != nil || pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) {
			t.Errorf("--replicas %d: PodDisruptionBudget %s has minAvailable %v, maxUnavailable %v; want maxUnavailable 1 only",
				replicas, pdb.Name, pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable)
		}
		if !selects(t, pdb.Spec.Selector, objs["Deployment"]) {
			t.Errorf("--replicas %d: PodDisruptionBudget %s selects %v, not the manager's pods", replicas, pdb.Name, pdb.Spec.Selector)
		}
	}
}

// Replicas spread over nodes where they can, and all run on one node.
func TestManagerReplicasPreferDifferentNodes(t *testing.T) {
	deployment := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(printed(t, &Options{})["Deployment"].Object, deployment); err != nil {
		t.Fatal(err)
	}
	anti := deployment.Spec.Template.Spec.Affinity.PodAntiAffinity
	if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("podAntiAffinity = %+v, want one preferred term and none required", anti)
	}
	term := anti.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname {
		t.Errorf("podAntiAffinity's topologyKey = %q, want %q", term.TopologyKey, corev1.LabelHostname)
	}
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !selector.Matches(labels.Set(deployment.Spec.Template.Labels)) {
		t.Errorf("podAntiAffinity selects %v, not the manager's pods", term.LabelSelector)
	}
}

func TestFewerThanOneReplicaIsRefused(t *testing.T) {
	for _, replicas := range []int32{0, -1} {
		streams, _, _, _ := genericiooptions.NewTestIOStreams()
		err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml", Replicas: ptr.To(replicas)})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--replicas %d: run at least 1", replicas)) {
			t.Errorf("--replicas %d: err = %v, want one naming --replicas", replicas, err)
		}
	}
}

// selects tells whether selector selects the pods of deployment.
func selects(t *testing.T, selector *metav1.LabelSelector, deployment *unstructured.Unstructured) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		t.Fatal(err)
	}
	podLabels, _, _ := unstructured.NestedStringMap(deployment.Object, "spec", "template", "metadata", "labels")
	return !s.Empty() && s.Matches(labels.Set(podLabels))
}
