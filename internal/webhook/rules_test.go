package webhook

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const (
	inProgress = kudov1beta1.ExecutionInProgress
	errored    = kudov1beta1.ExecutionError
	complete   = kudov1beta1.ExecutionComplete
	fatal      = kudov1beta1.ExecutionFatalError
	cancelled  = kudov1beta1.ExecutionCancelled
	retry      = kudov1beta1.ExecutionRetry
)

// operatorVersion is web-0.1.0: a parameter of every kind the rules look
// at, and the plans deploy, update, mood (MOOD's trigger) and cleanup, each
// applying one template.
func operatorVersion(changes ...func(*kudov1beta1.OperatorVersion)) *kudov1beta1.OperatorVersion {
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator:  corev1.ObjectReference{Name: "web"},
			Version:   "0.1.0",
			Templates: map[string]string{"app.yaml": "kind: ConfigMap"},
			Tasks: []kudov1beta1.Task{{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
				Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"app.yaml"}}}}},
			Parameters: []kudov1beta1.Parameter{
				{Name: "SIZE", Default: ptr.To("small"), Immutable: ptr.To(true)},
				{Name: "GREETING", Default: ptr.To("hello"), Immutable: ptr.To(false)},
				{Name: "MOOD", Default: ptr.To("calm"), Trigger: "mood"},
				{Name: "COUNT", Default: ptr.To("1"), Type: kudov1beta1.IntegerValueType},
				{Name: "LEVEL", Default: ptr.To("low"), Enum: &[]string{"low", "high"}},
				{Name: "TOKEN", Required: ptr.To(true)},
				{Name: "NOTE", Required: ptr.To(false)},
			},
			Plans: map[string]kudov1beta1.Plan{},
		},
	}
	withPlans("deploy", "update", "mood", "cleanup")(ov)
	for _, change := range changes {
		change(ov)
	}
	return ov
}

// upgrade is the OperatorVersion web-0.2.0 with these plans: the target of
// an upgrade.
func upgrade(plans ...string) *kudov1beta1.OperatorVersion {
	return operatorVersion(func(ov *kudov1beta1.OperatorVersion) {
		ov.Name, ov.Spec.Version = "web-0.2.0", "0.2.0"
		ov.Spec.Plans = map[string]kudov1beta1.Plan{}
		withPlans(plans...)(ov)
	})
}

func with(ov *kudov1beta1.OperatorVersion, changes ...func(*kudov1beta1.OperatorVersion)) *kudov1beta1.OperatorVersion {
	for _, change := range changes {
		change(ov)
	}
	return ov
}

func withPlans(names ...string) func(*kudov1beta1.OperatorVersion) {
	return func(ov *kudov1beta1.OperatorVersion) {
		for _, name := range names {
			ov.Spec.Plans[name] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{
				{Name: "main", Steps: []kudov1beta1.Step{{Name: "app", Tasks: []string{"app"}}}},
			}}
		}
	}
}

func withoutPlans(names ...string) func(*kudov1beta1.OperatorVersion) {
	return func(ov *kudov1beta1.OperatorVersion) {
		for _, name := range names {
			delete(ov.Spec.Plans, name)
		}
	}
}

func makeImmutable(name string) func(*kudov1beta1.OperatorVersion) {
	return func(ov *kudov1beta1.OperatorVersion) {
		for k := range ov.Spec.Parameters {
			if ov.Spec.Parameters[k].Name == name {
				ov.Spec.Parameters[k].Immutable = ptr.To(true)
			}
		}
	}
}

func withParameter(p kudov1beta1.Parameter) func(*kudov1beta1.OperatorVersion) {
	return func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters = append(ov.Spec.Parameters, p) }
}

// instance is an Instance of web-0.1.0 as DefaultCreate left it, whose
// deploy (uid-0) has finished and whose planExecution the controller has
// cleared: nothing runs.
func instance(changes ...func(*kudov1beta1.Instance)) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: "web-0.1.0"},
			Parameters:      map[string]string{"TOKEN": "t", "SIZE": "small"},
		},
		Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{
			"deploy": {Name: "deploy", Status: complete, UID: "uid-0"},
		}},
	}
	for _, change := range changes {
		change(i)
	}
	return i
}

// scheduled sets spec.planExecution, as a user or the defaulter does.
func scheduled(plan string, uid types.UID, status ...kudov1beta1.ExecutionStatus) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: plan, UID: uid}
		if len(status) > 0 {
			i.Spec.PlanExecution.Status = status[0]
		}
	}
}

// ran records the status of a run of plan, as the controller does.
func ran(plan string, uid types.UID, status kudov1beta1.ExecutionStatus) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		i.Status.PlanStatus[plan] = kudov1beta1.PlanStatus{Name: plan, Status: status, UID: uid}
	}
}

// active makes plan the Instance's active plan, in status.
func active(plan string, status kudov1beta1.ExecutionStatus) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: plan, Status: status}
	}
}

// failed: the last run of plan, as uid, ended in FATAL_ERROR.
func failed(plan string, uid types.UID) func(*kudov1beta1.Instance) {
	return edits(ran(plan, uid, fatal), active(plan, fatal))
}

// runs: plan was scheduled as uid-run and is in progress.
func runs(plan string) func(*kudov1beta1.Instance) {
	return edits(scheduled(plan, "uid-run"), ran(plan, "uid-run", inProgress))
}

func set(name, value string) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) { i.Spec.Parameters[name] = value }
}

func unset(name string) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) { delete(i.Spec.Parameters, name) }
}

// upgraded moves the Instance to web-0.2.0.
func upgraded(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Name = "web-0.2.0" }

func label(i *kudov1beta1.Instance) { i.Labels = map[string]string{"team": "web"} }

func edits(changes ...func(*kudov1beta1.Instance)) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		for _, change := range changes {
			change(i)
		}
	}
}

// fixedUIDs makes NewUID return uid-1, uid-2, ... for the rest of the test.
func fixedUIDs(t *testing.T) {
	t.Helper()
	original := NewUID
	t.Cleanup(func() { NewUID = original })
	n := 0
	NewUID = func() types.UID {
		n++
		return types.UID(fmt.Sprintf("uid-%d", n))
	}
}

// checkErr fails unless err contains want, or is nil when want is empty.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("refused: %v", err)
	case want != "" && err == nil:
		t.Errorf("accepted, want an error containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("error %q, want one containing %q", err, want)
	}
}

func TestDefaultCreate(t *testing.T) {
	tests := []struct {
		name       string
		ov         *kudov1beta1.OperatorVersion
		parameters map[string]string
		pe         kudov1beta1.PlanExecution
		want       kudov1beta1.InstanceSpec
	}{
		{
			name:       "schedules deploy with a new uid and writes the default of each immutable parameter only",
			parameters: map[string]string{"TOKEN": "t"},
			want: kudov1beta1.InstanceSpec{
				Parameters:    map[string]string{"TOKEN": "t", "SIZE": "small"},
				PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
			},
		},
		{
			name:       "keeps the value an Instance gives an immutable parameter",
			parameters: map[string]string{"TOKEN": "t", "SIZE": "large"},
			want: kudov1beta1.InstanceSpec{
				Parameters:    map[string]string{"TOKEN": "t", "SIZE": "large"},
				PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
			},
		},
		{
			name: "writes immutable defaults into an Instance that sets no parameters",
			want: kudov1beta1.InstanceSpec{
				Parameters:    map[string]string{"SIZE": "small"},
				PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
			},
		},
		{
			name:       "leaves an immutable parameter without default unset",
			ov:         operatorVersion(withParameter(kudov1beta1.Parameter{Name: "ZONE", Immutable: ptr.To(true), Required: ptr.To(false)})),
			parameters: map[string]string{"TOKEN": "t"},
			want: kudov1beta1.InstanceSpec{
				Parameters:    map[string]string{"TOKEN": "t", "SIZE": "small"},
				PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
			},
		},
		{
			name:       "leaves an explicit planExecution alone",
			parameters: map[string]string{"TOKEN": "t"},
			pe:         kudov1beta1.PlanExecution{PlanName: "deploy", UID: "mine"},
			want: kudov1beta1.InstanceSpec{
				Parameters:    map[string]string{"TOKEN": "t", "SIZE": "small"},
				PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "mine"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixedUIDs(t)
			ov := tt.ov
			if ov == nil {
				ov = operatorVersion()
			}
			i := instance()
			i.Spec.Parameters, i.Spec.PlanExecution = tt.parameters, tt.pe
			DefaultCreate(i, ov)
			tt.want.OperatorVersion = i.Spec.OperatorVersion
			if !reflect.DeepEqual(i.Spec, tt.want) {
				t.Errorf("spec = %+v, want %+v", i.Spec, tt.want)
			}
		})
	}
}

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name       string
		ov         *kudov1beta1.OperatorVersion
		parameters map[string]string
		pe         kudov1beta1.PlanExecution
		wantErr    string
	}{
		{
			name:       "accepts parameters that are defined, typed and complete, with deploy scheduled",
			parameters: map[string]string{"TOKEN": "t", "SIZE": "small", "COUNT": " 3 ", "LEVEL": "high", "NOTE": "n"},
			pe:         kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
		},
		{
			name:       "accepts an optional parameter without default left unset",
			parameters: map[string]string{"TOKEN": "t"},
		},
		{
			name:       "refuses an OperatorVersion without a deploy plan",
			ov:         operatorVersion(withoutPlans("deploy")),
			parameters: map[string]string{"TOKEN": "t"},
			wantErr:    "OperatorVersion web-0.1.0 has no deploy plan",
		},
		{
			name:       "accepts 100 KiB of parameters",
			parameters: map[string]string{"TOKEN": "t", "NOTE": strings.Repeat("n", 100<<10)},
		},
		{
			name:       "refuses parameters past 128 KiB, naming the largest",
			parameters: map[string]string{"TOKEN": "t", "NOTE": strings.Repeat("n", 129<<10)},
			wantErr:    "spec.parameters take 129 KiB (the largest, NOTE, 129 KiB), more than the 128 KiB an Instance holds",
		},
		{
			name:       "refuses a first plan other than deploy",
			parameters: map[string]string{"TOKEN": "t"},
			pe:         kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
			wantErr:    "a new Instance runs deploy first; spec.planExecution asks for mood",
		},
		{
			name:    "refuses a missing required parameter",
			wantErr: "parameter TOKEN is required and has no default: set spec.parameters.TOKEN",
		},
		{
			name:       "refuses a required parameter set to the empty value",
			parameters: map[string]string{"TOKEN": ""},
			wantErr:    "parameter TOKEN is required and has no default: set spec.parameters.TOKEN",
		},
		{
			name:       "accepts a parameter whose required is unset, as KUDO: optional at the API level",
			ov:         operatorVersion(withParameter(kudov1beta1.Parameter{Name: "TOLERATIONS", Type: kudov1beta1.ArrayValueType})),
			parameters: map[string]string{"TOKEN": "t"},
		},
		{
			name:       "accepts an empty value of any type: it is no value, as KUDO",
			parameters: map[string]string{"TOKEN": "t", "COUNT": "", "LEVEL": ""},
		},
		{
			name:       "refuses an undefined parameter",
			parameters: map[string]string{"TOKEN": "t", "COLOUR": "red"},
			wantErr:    "parameter COLOUR is not defined by OperatorVersion web-0.1.0",
		},
		{
			name:       "refuses a value of the wrong type",
			parameters: map[string]string{"TOKEN": "t", "COUNT": "many"},
			wantErr:    `parameter COUNT: "many" is not an integer`,
		},
		{
			name:       "refuses a value outside the enum",
			parameters: map[string]string{"TOKEN": "t", "LEVEL": "max"},
			wantErr:    `parameter LEVEL: "max" is not one of low, high`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov := tt.ov
			if ov == nil {
				ov = operatorVersion()
			}
			i := instance()
			i.Spec.Parameters, i.Spec.PlanExecution = tt.parameters, tt.pe
			before := i.DeepCopy()
			checkErr(t, ValidateCreate(i, ov), tt.wantErr)
			if !reflect.DeepEqual(i, before) {
				t.Errorf("ValidateCreate changed the Instance: %+v", i.Spec)
			}
		})
	}
}

func TestDefaultUpdate(t *testing.T) {
	none := kudov1beta1.PlanExecution{}
	tests := []struct {
		name   string
		ov     *kudov1beta1.OperatorVersion
		old    *kudov1beta1.Instance
		change func(*kudov1beta1.Instance)
		want   kudov1beta1.PlanExecution
	}{
		{
			name:   "schedules update for a parameter without trigger",
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "uid-1"},
		},
		{
			name:   "schedules deploy for a parameter without trigger when there is no update plan",
			ov:     operatorVersion(withoutPlans("update")),
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
		},
		{
			name:   "schedules the trigger of the changed parameter",
			change: set("MOOD", "dark"),
			want:   kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
		},
		{
			name:   "schedules the trigger of a parameter that is removed",
			old:    instance(set("MOOD", "dark")),
			change: unset("MOOD"),
			want:   kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
		},
		{
			name:   "schedules upgrade on an upgrade",
			ov:     upgrade("deploy", "update", "upgrade"),
			change: upgraded,
			want:   kudov1beta1.PlanExecution{PlanName: "upgrade", UID: "uid-1"},
		},
		{
			name:   "schedules update on an upgrade to a version without upgrade plan",
			ov:     upgrade("deploy", "update"),
			change: upgraded,
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "uid-1"},
		},
		{
			name:   "schedules deploy on an upgrade to a version with neither upgrade nor update plan",
			ov:     upgrade("deploy"),
			change: upgraded,
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-1"},
		},
		{
			name:   "schedules the upgrade plan, not the trigger, when an upgrade also changes parameters",
			ov:     upgrade("deploy", "mood", "upgrade"),
			change: edits(upgraded, set("MOOD", "dark")),
			want:   kudov1beta1.PlanExecution{PlanName: "upgrade", UID: "uid-1"},
		},
		{
			name:   "schedules a plan once the last one has finished, before the controller clears planExecution",
			old:    instance(scheduled("deploy", "uid-0")),
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "uid-1"},
		},
		{
			name:   "schedules a plan once the last one has failed fatally",
			old:    instance(scheduled("mood", "uid-5"), ran("mood", "uid-5", fatal)),
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "uid-1"},
		},
		{
			name:   "schedules a plan once the cancelled one has stopped",
			old:    instance(scheduled("mood", "uid-5", cancelled), ran("mood", "uid-5", cancelled)),
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "uid-1"},
		},
		{
			name:   "schedules nothing for a metadata-only update",
			change: label,
			want:   none,
		},
		{
			name:   "schedules nothing for a metadata-only update after a plan has finished",
			old:    instance(scheduled("deploy", "uid-0")),
			change: label,
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-0"},
		},
		{
			name:   "starts the running plan over with a new uid when a change triggers it, as KUDO",
			old:    instance(runs("mood")),
			change: set("MOOD", "dark"),
			want:   kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
		},
		{
			name:   "starts a plan that retries an error over when a change triggers it",
			old:    instance(scheduled("mood", "uid-5"), ran("mood", "uid-5", errored)),
			change: set("MOOD", "dark"),
			want:   kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
		},
		{
			name:   "schedules nothing while a scheduled plan has not started a run of its own",
			old:    instance(scheduled("deploy", "uid-5")),
			change: set("GREETING", "hi"),
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-5"},
		},
		{
			name:   "gives a scheduled plan that has not started a new uid when a change triggers it",
			old:    instance(scheduled("mood", "uid-5")),
			change: set("MOOD", "dark"),
			want:   kudov1beta1.PlanExecution{PlanName: "mood", UID: "uid-1"},
		},
		{
			name:   "schedules nothing on an upgrade while a plan runs",
			ov:     upgrade("deploy", "upgrade"),
			old:    instance(runs("deploy")),
			change: upgraded,
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-run"},
		},
		{
			name:   "schedules nothing when the changed parameters trigger different plans",
			change: edits(set("GREETING", "hi"), set("MOOD", "dark")),
			want:   none,
		},
		{
			name:   "leaves an explicit planExecution alone",
			change: edits(set("MOOD", "dark"), scheduled("update", "mine")),
			want:   kudov1beta1.PlanExecution{PlanName: "update", UID: "mine"},
		},
		{
			name:   "leaves a cancel alone",
			old:    instance(runs("deploy")),
			change: edits(set("GREETING", "hi"), scheduled("deploy", "uid-run", cancelled)),
			want:   kudov1beta1.PlanExecution{PlanName: "deploy", UID: "uid-run", Status: cancelled},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixedUIDs(t)
			ov, old := tt.ov, tt.old
			if ov == nil {
				ov = operatorVersion()
			}
			if old == nil {
				old = instance()
			}
			i := old.DeepCopy()
			tt.change(i)
			want := i.DeepCopy()
			want.Spec.PlanExecution = tt.want
			oldBefore := old.DeepCopy()
			DefaultUpdate(old, i, ov)
			if !reflect.DeepEqual(i, want) {
				t.Errorf("planExecution = %+v, want %+v; spec %+v", i.Spec.PlanExecution, tt.want, i.Spec)
			}
			if !reflect.DeepEqual(old, oldBefore) {
				t.Errorf("DefaultUpdate changed the old Instance: %+v", old.Spec)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	zone := withParameter(kudov1beta1.Parameter{Name: "ZONE", Immutable: ptr.To(true), Required: ptr.To(false)})
	tests := []struct {
		name    string
		ov      *kudov1beta1.OperatorVersion
		old     *kudov1beta1.Instance
		change  func(*kudov1beta1.Instance)
		wantErr string
	}{
		// Parameters.
		{
			name:    "refuses an undefined parameter",
			change:  set("COLOUR", "red"),
			wantErr: "parameter COLOUR is not defined by OperatorVersion web-0.1.0",
		},
		{
			name:    "refuses a value of the wrong type",
			change:  set("COUNT", "many"),
			wantErr: `parameter COUNT: "many" is not an integer`,
		},
		{
			name:    "refuses a value outside the enum",
			change:  set("LEVEL", "max"),
			wantErr: `parameter LEVEL: "max" is not one of low, high`,
		},
		{
			name:    "refuses the removal of a required parameter without default",
			change:  unset("TOKEN"),
			wantErr: "parameter TOKEN is required and has no default",
		},
		{
			name:    "refuses a change of an immutable parameter",
			change:  set("SIZE", "large"),
			wantErr: `parameter SIZE is immutable: it cannot change from "small" to "large"; to change it, install a new Instance`,
		},
		{
			name:    "refuses the removal of an immutable parameter",
			change:  unset("SIZE"),
			wantErr: `parameter SIZE is immutable: it cannot change from "small" to ""`,
		},
		{
			name:    "refuses a value for an immutable parameter that was unset",
			ov:      operatorVersion(zone),
			change:  set("ZONE", "eu"),
			wantErr: `parameter ZONE is immutable: it cannot change from "" to "eu"`,
		},
		{
			name:    "refuses an empty value for an immutable parameter that was unset",
			ov:      operatorVersion(zone),
			change:  set("ZONE", ""),
			wantErr: "parameter ZONE is immutable",
		},
		{
			name:    "refuses an upgrade that leaves a parameter it makes immutable, without default, unset",
			ov:      with(upgrade("deploy", "upgrade"), zone),
			change:  edits(upgraded, scheduled("upgrade", "uid-1")),
			wantErr: "parameter ZONE is immutable in OperatorVersion web-0.2.0 and has no default: the upgrade must give it a value",
		},
		{
			name:    "refuses parameters that trigger different plans",
			change:  edits(set("GREETING", "hi"), set("MOOD", "dark")),
			wantErr: "parameters that trigger different plans cannot change together (GREETING triggers update; MOOD triggers mood)",
		},
		{
			name:    "refuses a parameter whose trigger the OperatorVersion does not define",
			ov:      operatorVersion(withoutPlans("mood")),
			change:  set("MOOD", "dark"),
			wantErr: `plan "mood", triggered by MOOD, is not defined`,
		},
		{
			name:    "refuses a parameter that triggers another plan than the running one",
			old:     instance(runs("deploy")),
			change:  set("MOOD", "dark"),
			wantErr: "plan deploy is running, and changing MOOD would start plan mood: change them when deploy has finished, or cancel it first",
		},
		{
			name:    "refuses an upgrade while a plan runs",
			ov:      upgrade("deploy", "upgrade"),
			old:     instance(runs("deploy")),
			change:  upgraded,
			wantErr: "plan deploy is running: upgrade to web-0.2.0 when it has finished, or cancel it first",
		},
		// Plans asked for by hand.
		{
			name:    "refuses a plan the OperatorVersion does not define",
			change:  scheduled("backup", "uid-1"),
			wantErr: `plan "backup" is not defined by OperatorVersion web-0.1.0; the plans are cleanup, deploy, mood, update`,
		},
		{
			name:    "refuses cleanup by hand",
			change:  scheduled("cleanup", "uid-1"),
			wantErr: "the cleanup plan runs when the Instance is deleted and cannot be started by hand",
		},
		{
			name:    "refuses a plan without a uid",
			change:  scheduled("update", ""),
			wantErr: "spec.planExecution needs a new uid to run plan update",
		},
		{
			name:    "refuses a plan while another runs",
			old:     instance(runs("deploy")),
			change:  scheduled("mood", "uid-1"),
			wantErr: "plan deploy is running: start mood when it has finished, or cancel it first",
		},
		{
			name:   "accepts a new run of the running plan, which starts it over, as KUDO",
			old:    instance(runs("deploy")),
			change: scheduled("deploy", "uid-1"),
		},
		{
			name:    "refuses another plan while one runs",
			old:     instance(runs("deploy")),
			change:  scheduled("mood", "uid-1"),
			wantErr: "plan deploy is running: start mood when it has finished",
		},
		{
			name:    "refuses a plan while a scheduled plan has not started yet",
			old:     instance(scheduled("mood", "uid-5")),
			change:  scheduled("update", "uid-1"),
			wantErr: "plan mood is running: start update",
		},
		// Cancel and status.
		{
			name:    "refuses a cancel when nothing runs",
			change:  scheduled("deploy", "uid-0", cancelled),
			wantErr: "only the running plan can be cancelled",
		},
		{
			name:    "refuses a cancel of a run that has finished",
			old:     instance(scheduled("deploy", "uid-0")),
			change:  scheduled("deploy", "uid-0", cancelled),
			wantErr: "only the running plan can be cancelled",
		},
		{
			name:    "refuses a cancel of another plan than the running one",
			old:     instance(runs("deploy")),
			change:  scheduled("mood", "uid-run", cancelled),
			wantErr: "only the running plan can be cancelled",
		},
		{
			name:    "refuses a cancel of another run than the running one",
			old:     instance(runs("deploy")),
			change:  scheduled("deploy", "uid-0", cancelled),
			wantErr: "only the running plan can be cancelled",
		},
		{
			name:    "refuses a status other than CANCELLED",
			old:     instance(runs("deploy")),
			change:  scheduled("deploy", "uid-run", complete),
			wantErr: `spec.planExecution.status "COMPLETE" cannot be set: only CANCELLED, to cancel the running plan, or RETRY, to resume a failed one`,
		},
		// Retry.
		{
			name:   "accepts a retry of the last run, which failed",
			old:    instance(failed("mood", "uid-7")),
			change: scheduled("mood", "uid-7", retry),
		},
		{
			name:    "refuses a retry of a run that completed",
			old:     instance(edits(ran("mood", "uid-7", complete), active("mood", complete))),
			change:  scheduled("mood", "uid-7", retry),
			wantErr: `plan "mood" cannot be retried: only the last plan run can, once it has failed, and the last plan run, of mood, is COMPLETE`,
		},
		{
			name:    "refuses a retry of a plan that failed before the last run",
			old:     instance(edits(failed("mood", "uid-7"), ran("deploy", "uid-8", complete), active("deploy", complete))),
			change:  scheduled("mood", "uid-7", retry),
			wantErr: `plan "mood" cannot be retried: only the last plan run can, once it has failed, and the last plan run, of deploy, is COMPLETE`,
		},
		{
			name:    "refuses a retry of another run than the failed one",
			old:     instance(failed("mood", "uid-7")),
			change:  scheduled("mood", "uid-6", retry),
			wantErr: "spec.planExecution.uid must be uid-7, the uid of the failed run of plan mood, to retry it",
		},
		// Acceptances.
		{
			name:   "accepts a metadata-only update while a plan runs",
			old:    instance(runs("deploy")),
			change: label,
		},
		{
			name:   "accepts the cancel of the running plan",
			old:    instance(runs("deploy")),
			change: scheduled("deploy", "uid-run", cancelled),
		},
		{
			name:   "accepts a metadata-only update while a cancel waits for the controller",
			old:    instance(scheduled("deploy", "uid-run", cancelled), ran("deploy", "uid-run", inProgress)),
			change: label,
		},
		{
			name:   "accepts a change of the running plan's own trigger",
			old:    instance(runs("mood")),
			change: set("MOOD", "dark"),
		},
		{
			name:   "accepts a parameter change with the plan it triggers scheduled",
			change: edits(set("MOOD", "dark"), scheduled("mood", "uid-1")),
		},
		{
			name:   "accepts an explicit plan when nothing runs",
			change: scheduled("mood", "uid-1"),
		},
		{
			name:   "accepts an explicit plan once the last one has finished, before the controller clears planExecution",
			old:    instance(scheduled("deploy", "uid-0")),
			change: scheduled("mood", "uid-1"),
		},
		{
			name:   "accepts the controller clearing planExecution when the plan has ended",
			old:    instance(scheduled("deploy", "uid-0")),
			change: scheduled("", ""),
		},
		{
			name:   "accepts an upgrade with the upgrade plan scheduled",
			ov:     upgrade("deploy", "upgrade"),
			change: edits(upgraded, scheduled("upgrade", "uid-1")),
		},
		{
			name:   "accepts an upgrade that leaves a parameter it makes immutable, with a default, unset",
			ov:     with(upgrade("deploy", "upgrade"), makeImmutable("GREETING")),
			change: edits(upgraded, scheduled("upgrade", "uid-1")),
		},
		{
			name:   "accepts an upgrade that gives a parameter it makes immutable a value",
			ov:     with(upgrade("deploy", "upgrade"), zone),
			change: edits(upgraded, set("ZONE", "eu"), scheduled("upgrade", "uid-1")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov, old := tt.ov, tt.old
			if ov == nil {
				ov = operatorVersion()
			}
			if old == nil {
				old = instance()
			}
			i := old.DeepCopy()
			tt.change(i)
			oldBefore, before := old.DeepCopy(), i.DeepCopy()
			checkErr(t, ValidateUpdate(old, i, ov), tt.wantErr)
			if !reflect.DeepEqual(old, oldBefore) || !reflect.DeepEqual(i, before) {
				t.Errorf("ValidateUpdate changed an Instance")
			}
		})
	}
}
