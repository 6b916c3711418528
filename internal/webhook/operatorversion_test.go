package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestValidateOperatorVersion(t *testing.T) {
	kind := func(k kudov1beta1.TaskKind, spec kudov1beta1.TaskSpec) func(*kudov1beta1.OperatorVersion) {
		return func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Tasks[0].Kind, ov.Spec.Tasks[0].Spec = k, spec }
	}
	tests := []struct {
		name   string
		change func(*kudov1beta1.OperatorVersion)
		want   []string // each error begins with its entry
	}{
		{
			name:   "accepts plans whose tasks are defined and triggers whose plans exist",
			change: func(*kudov1beta1.OperatorVersion) {},
		},
		{
			name: "accepts what KUDO accepted: an empty deploy plan and no templates",
			change: func(ov *kudov1beta1.OperatorVersion) {
				ov.Spec.Templates, ov.Spec.Tasks, ov.Spec.Parameters = nil, nil, nil
				ov.Spec.Plans = map[string]kudov1beta1.Plan{"deploy": {}}
			},
		},
		{
			name:   "accepts a Dummy task without spec",
			change: kind(kudov1beta1.DummyTaskKind, kudov1beta1.TaskSpec{}),
		},
		{
			name:   "accepts a Toggle task with its parameter",
			change: kind(kudov1beta1.ToggleTaskKind, kudov1beta1.TaskSpec{ToggleTaskSpec: kudov1beta1.ToggleTaskSpec{Parameter: "ENABLED"}}),
		},
		{
			name: "accepts a Pipe task with its pod and files",
			change: kind(kudov1beta1.PipeTaskKind, kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
				Pod: "pipe-pod.yaml", Pipe: []kudov1beta1.PipeSpec{{File: "/tmp/out", Kind: "Secret", Key: "out"}},
			}}),
		},
		{
			name:   "accepts a KudoOperator task with its package",
			change: kind(kudov1beta1.KudoOperatorTaskKind, kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "zookeeper"}}),
		},
		{
			name: "refuses a plan naming an undefined task",
			change: func(ov *kudov1beta1.OperatorVersion) {
				ov.Spec.Plans["mood"] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{
					{Name: "one", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"app"}}}},
					{Name: "two", Steps: []kudov1beta1.Step{{Name: "a"}, {Name: "b", Tasks: []string{"app", "ghost"}}}},
				}}
			},
			want: []string{`spec.plans[mood].phases[1].steps[1].tasks[1]: Not found: "ghost"`},
		},
		{
			name:   "accepts a trigger naming a missing plan, as KUDO did: it is a warning (TestTheRulesOfGoodPackagingAreWarnings)",
			change: func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters[1].Trigger = "scale" },
		},
		{
			name:   "refuses an Apply task without templates",
			change: kind(kudov1beta1.ApplyTaskKind, kudov1beta1.TaskSpec{}),
			want:   []string{"spec.tasks[0].spec.resources: Required value: an Apply task needs the templates it renders"},
		},
		{
			name:   "refuses a Delete task without templates",
			change: kind(kudov1beta1.DeleteTaskKind, kudov1beta1.TaskSpec{}),
			// Only the start: the detail says "an Delete task".
			want: []string{"spec.tasks[0].spec.resources: Required value: "},
		},
		{
			name:   "refuses a Toggle task without its parameter",
			change: kind(kudov1beta1.ToggleTaskKind, kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"app.yaml"}}}),
			want:   []string{"spec.tasks[0].spec.parameter: Required value: a Toggle task needs the boolean parameter that switches it"},
		},
		{
			name:   "refuses a Pipe task without a pod",
			change: kind(kudov1beta1.PipeTaskKind, kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{Pipe: []kudov1beta1.PipeSpec{{File: "/tmp/out", Kind: "Secret", Key: "out"}}}}),
			want:   []string{"spec.tasks[0].spec.pod: Required value: a Pipe task needs a pod template and the files it pipes"},
		},
		{
			name:   "refuses a Pipe task without files",
			change: kind(kudov1beta1.PipeTaskKind, kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{Pod: "pipe-pod.yaml"}}),
			want:   []string{"spec.tasks[0].spec.pod: Required value: a Pipe task needs a pod template and the files it pipes"},
		},
		{
			name:   "refuses a KudoOperator task without its package",
			change: kind(kudov1beta1.KudoOperatorTaskKind, kudov1beta1.TaskSpec{}),
			want:   []string{"spec.tasks[0].spec.package: Required value: a KudoOperator task needs the package it installs"},
		},
		{
			name: "reports every error, tasks first, then plans by name",
			change: func(ov *kudov1beta1.OperatorVersion) {
				ov.Spec.Tasks[0].Spec.Resources = nil
				ov.Spec.Plans["update"] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"u"}}}}}}
				ov.Spec.Plans["deploy"] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"d"}}}}}}
				ov.Spec.Parameters[0].Trigger = "scale"
			},
			want: []string{
				"spec.tasks[0].spec.resources: Required value: an Apply task needs the templates it renders",
				`spec.plans[deploy].phases[0].steps[0].tasks[0]: Not found: "d"`,
				`spec.plans[update].phases[0].steps[0].tasks[0]: Not found: "u"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov := operatorVersion(tt.change)
			var got []string
			for _, err := range ValidateOperatorVersion(ov) {
				got = append(got, err.Error())
			}
			ok := len(got) == len(tt.want)
			for k := 0; ok && k < len(got); k++ {
				ok = strings.HasPrefix(got[k], tt.want[k])
			}
			if !ok {
				t.Errorf("errors = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTheRulesOfGoodPackagingAreWarnings: admission takes what KUDO took
// (KUDO's upgrade-with-dependencies upgrades to a package whose trigger names
// no plan) and says what install would warn about.
func TestTheRulesOfGoodPackagingAreWarnings(t *testing.T) {
	const missing = "scale"
	ov := operatorVersion(func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters[1].Trigger = missing })
	none := fake.NewClientBuilder().WithScheme(testScheme()).Build()
	w := &operatorVersions{instances: none, policies: none}
	warnings, err := w.ValidateCreate(context.Background(), ov)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	want := fmt.Sprintf(`OperatorVersion: spec.parameters[1] %s: trigger %q names no plan of operator.yaml`, ov.Spec.Parameters[1].Name, missing)
	if !slices.Contains(warnings, want) {
		t.Errorf("warnings %q, want %q among them", warnings, want)
	}

	changed := ov.DeepCopy()
	changed.Spec.Parameters[1].Trigger = "tune"
	warnings, err = w.ValidateUpdate(context.Background(), ov, changed)
	if err != nil || len(warnings) == 0 {
		t.Errorf("update of an unused OperatorVersion: warnings %q, error %v", warnings, err)
	}

	warnings, err = w.ValidateCreate(context.Background(), operatorVersion())
	if err != nil || slices.Contains(warnings, want) {
		t.Errorf("its trigger fixed: warnings %q, error %v", warnings, err)
	}
}

// TestAnOperatorVersionInUseCannotChange: the code Instances run changes
// only as a new OperatorVersion (issue 45: the author of a shared one
// changed what ran in another namespace). Its metadata may change, and so
// may one no Instance uses.
func TestAnOperatorVersionInUseCannotChange(t *testing.T) {
	ov := operatorVersion()
	ov.Namespace = sharedNamespace
	user := instance(func(i *kudov1beta1.Instance) { i.Namespace, i.Spec.OperatorVersion.Namespace = "apps", sharedNamespace })
	other := instance(func(i *kudov1beta1.Instance) { i.Name = "other" })
	edited := ov.DeepCopy()
	edited.Spec.Templates["app.yaml"] += "# changed\n"
	labelled := ov.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	for _, tt := range []struct {
		name      string
		instances []client.Object
		new       *kudov1beta1.OperatorVersion
		want      string
	}{
		{"its spec, used by an Instance of another namespace", []client.Object{user, other}, edited,
			"spec: OperatorVersion shared/web-0.1.0 is used by an Instance of another namespace, and the code Instances run cannot change under them: " +
				"install the package as a new version (bump operatorVersion in operator.yaml) and upgrade to it"},
		{"its spec, used by none", []client.Object{other}, edited, ""},
		{"its labels, used", []client.Object{user}, labelled, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tt.instances...).Build()
			w := &operatorVersions{instances: c, policies: c}
			_, err := w.ValidateUpdate(context.Background(), ov, tt.new)
			if tt.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.want != "" && (err == nil || err.Error() != tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestAnOperatorVersionInUseCannotBeDeleted is issue 62's sixth attack: a
// package author deleted the OperatorVersion an Instance of another
// namespace ran and made it again with his image. Deleting it is refused
// while it is used, naming only the Instances of its own namespace.
func TestAnOperatorVersionInUseCannotBeDeleted(t *testing.T) {
	ov := operatorVersion()
	ov.Namespace = sharedNamespace
	inApps := func(name string) *kudov1beta1.Instance {
		return instance(func(i *kudov1beta1.Instance) {
			i.Name, i.Namespace, i.Spec.OperatorVersion.Namespace = name, "apps", sharedNamespace
		})
	}
	inShared := func(name string) *kudov1beta1.Instance {
		return instance(func(i *kudov1beta1.Instance) { i.Name, i.Namespace = name, sharedNamespace })
	}
	unrelated := instance(func(i *kudov1beta1.Instance) { i.Name, i.Spec.OperatorVersion.Name = "other", "other-0.1.0" })
	for _, tt := range []struct {
		name      string
		instances []client.Object
		want      string
	}{
		{"used by none", []client.Object{unrelated}, ""},
		{"used by an Instance of another namespace", []client.Object{inApps("web")},
			"OperatorVersion shared/web-0.1.0 is used by an Instance of another namespace, and the code Instances run cannot be taken from under them: " +
				"uninstall them, or upgrade them to another version, first"},
		{"used in its namespace and others", []client.Object{inShared("a"), inShared("b"), inApps("c"), inApps("d")},
			"OperatorVersion shared/web-0.1.0 is used by Instance a and 1 more of its namespace and 2 Instances of other namespaces, "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tt.instances...).Build()
			_, err := (&operatorVersions{instances: c, policies: c}).ValidateDelete(context.Background(), ov)
			if tt.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func testScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = kudov1beta1.AddToScheme(scheme)
	_ = kudov1alpha1.AddToScheme(scheme)
	return scheme
}

// A package a TrustPolicy enforces signatures on is rendered once the
// manager verified it, not at admission.
func TestAPackageATrustPolicyEnforcesSignaturesOnIsNotRenderedAtAdmission(t *testing.T) {
	ov := operatorVersion(func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters[1].Trigger = "grow" })
	for _, tt := range []struct {
		mode kudov1alpha1.TrustMode
		want string
	}{
		{kudov1alpha1.Enforce, "TrustPolicy signed enforces signatures on this package"},
		{kudov1alpha1.Audit, "grow"},
	} {
		policy := &kudov1alpha1.TrustPolicy{ObjectMeta: metav1.ObjectMeta{Name: "signed"}, Spec: kudov1alpha1.TrustPolicySpec{Mode: tt.mode}}
		c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(policy).Build()
		warnings, err := (&operatorVersions{instances: c, policies: c}).ValidateCreate(context.Background(), ov)
		if err != nil || len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), tt.want) {
			t.Errorf("%s: %v, %v; want a warning with %q", tt.mode, warnings, err, tt.want)
		}
	}
}
