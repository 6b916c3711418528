package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const (
	never      = kudov1beta1.ExecutionNeverRun
	pending    = kudov1beta1.ExecutionPending
	inProgress = kudov1beta1.ExecutionInProgress
	complete   = kudov1beta1.ExecutionComplete
	errored    = kudov1beta1.ExecutionError
	fatal      = kudov1beta1.ExecutionFatalError
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// twoByTwo is a plan of two phases of two steps each.
func twoByTwo(planStrategy, phaseStrategy kudov1beta1.Ordering) *kudov1beta1.Plan {
	steps := func() []kudov1beta1.Step {
		return []kudov1beta1.Step{{Name: "a", Tasks: []string{"t"}}, {Name: "b", Tasks: []string{"t"}}}
	}
	return &kudov1beta1.Plan{Strategy: planStrategy, Phases: []kudov1beta1.Phase{
		{Name: "one", Strategy: phaseStrategy, Steps: steps()},
		{Name: "two", Strategy: phaseStrategy, Steps: steps()},
	}}
}

// withSteps sets the four step statuses (one/a, one/b, two/a, two/b) of a
// started plan and rolls them up, as a previous pass would have.
func withSteps(plan *kudov1beta1.Plan, s ...kudov1beta1.ExecutionStatus) kudov1beta1.PlanStatus {
	status := Start("deploy", plan, "uid-1", t0)
	results := map[StepRef]StepResult{}
	refs := []StepRef{{"one", "a"}, {"one", "b"}, {"two", "a"}, {"two", "b"}}
	for i, st := range s {
		switch st {
		case complete:
			results[refs[i]] = StepResult{Done: true}
		case inProgress:
			results[refs[i]] = StepResult{Message: "waiting"}
		case errored:
			results[refs[i]] = StepResult{Err: errors.New("boom")}
		case fatal:
			results[refs[i]] = StepResult{Err: errors.New("fatal boom"), Fatal: true}
		}
	}
	return Record(plan, &status, results, t0)
}

func TestDue(t *testing.T) {
	S, P := kudov1beta1.Serial, kudov1beta1.Parallel
	tests := []struct {
		name          string
		plan, phase   kudov1beta1.Ordering
		steps         []kudov1beta1.ExecutionStatus
		want          []StepRef
		wantUnchanged bool
	}{
		{"serial/serial starts with the first step", S, S, nil, []StepRef{{"one", "a"}}, false},
		{"serial/serial: next step after a COMPLETE one", S, S, []kudov1beta1.ExecutionStatus{complete}, []StepRef{{"one", "b"}}, false},
		{"serial/serial: next phase after a COMPLETE phase", S, S, []kudov1beta1.ExecutionStatus{complete, complete}, []StepRef{{"two", "a"}}, false},
		{"serial/serial: an unfinished step holds the phase", S, S, []kudov1beta1.ExecutionStatus{inProgress}, []StepRef{{"one", "a"}}, false},
		{"serial/serial: an ERROR step is retried", S, S, []kudov1beta1.ExecutionStatus{errored}, []StepRef{{"one", "a"}}, false},
		{"serial/serial: a FATAL_ERROR ends the plan", S, S, []kudov1beta1.ExecutionStatus{fatal}, nil, false},
		{"serial/parallel runs every step of the first phase", S, P, nil, []StepRef{{"one", "a"}, {"one", "b"}}, false},
		{"serial/parallel: only the unfinished steps", S, P, []kudov1beta1.ExecutionStatus{complete, inProgress}, []StepRef{{"one", "b"}}, false},
		{"serial/parallel: a failing step does not stop its siblings", S, P, []kudov1beta1.ExecutionStatus{errored, inProgress},
			[]StepRef{{"one", "a"}, {"one", "b"}}, false},
		{"parallel/serial runs the first step of every phase", P, S, nil, []StepRef{{"one", "a"}, {"two", "a"}}, false},
		{"parallel/serial: phases advance independently", P, S, []kudov1beta1.ExecutionStatus{complete, pending, inProgress},
			[]StepRef{{"one", "b"}, {"two", "a"}}, false},
		{"parallel/parallel runs everything", P, P, nil, []StepRef{{"one", "a"}, {"one", "b"}, {"two", "a"}, {"two", "b"}}, false},
		{"parallel/parallel: a fatal step ends the plan", P, P, []kudov1beta1.ExecutionStatus{complete, fatal, inProgress}, nil, false},
		{"a COMPLETE plan has nothing due", S, S, []kudov1beta1.ExecutionStatus{complete, complete, complete, complete}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := twoByTwo(tt.plan, tt.phase)
			status := withSteps(plan, tt.steps...)
			if got := Due(plan, &status); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Due = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDefaultStrategyIsSerial(t *testing.T) {
	plan := twoByTwo("", "")
	status := Start("deploy", plan, "uid", t0)
	if got := Due(plan, &status); !reflect.DeepEqual(got, []StepRef{{"one", "a"}}) {
		t.Errorf("Due = %v, want the first step only", got)
	}
}

func TestRecordRollsUp(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Parallel)
	type tree struct {
		plan   kudov1beta1.ExecutionStatus
		phases []kudov1beta1.ExecutionStatus
		msg    string
	}
	tests := []struct {
		name  string
		steps []kudov1beta1.ExecutionStatus
		want  tree
	}{
		{"nothing ran: PENDING", nil, tree{pending, []kudov1beta1.ExecutionStatus{pending, pending}, ""}},
		{"a step in progress", []kudov1beta1.ExecutionStatus{inProgress}, tree{inProgress, []kudov1beta1.ExecutionStatus{inProgress, pending}, ""}},
		{"one step done", []kudov1beta1.ExecutionStatus{complete}, tree{inProgress, []kudov1beta1.ExecutionStatus{inProgress, pending}, ""}},
		{"a phase done", []kudov1beta1.ExecutionStatus{complete, complete}, tree{inProgress, []kudov1beta1.ExecutionStatus{complete, pending}, ""}},
		{"all done", []kudov1beta1.ExecutionStatus{complete, complete, complete, complete},
			tree{complete, []kudov1beta1.ExecutionStatus{complete, complete}, ""}},
		{"a transient error", []kudov1beta1.ExecutionStatus{complete, errored},
			tree{errored, []kudov1beta1.ExecutionStatus{errored, pending}, "phase one: step b: boom (attempt 1; next try in 1s)"}},
		{"a fatal error wins over a transient one", []kudov1beta1.ExecutionStatus{errored, fatal},
			tree{fatal, []kudov1beta1.ExecutionStatus{fatal, pending}, "phase one failed: step b failed: fatal boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withSteps(plan, tt.steps...)
			phases := []kudov1beta1.ExecutionStatus{got.Phases[0].Status, got.Phases[1].Status}
			if got.Status != tt.want.plan || !reflect.DeepEqual(phases, tt.want.phases) || got.Message != tt.want.msg {
				t.Errorf("plan %s %v %q, want %s %v %q", got.Status, phases, got.Message, tt.want.plan, tt.want.phases, tt.want.msg)
			}
		})
	}
}

func TestStepTransitions(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	ref := StepRef{"one", "a"}
	tests := []struct {
		from   kudov1beta1.ExecutionStatus
		result StepResult
		want   kudov1beta1.ExecutionStatus
		msg    string
	}{
		{pending, StepResult{Message: "waiting for Deployment web: 1/3 available"}, inProgress, "waiting for Deployment web: 1/3 available"},
		{pending, StepResult{Done: true}, complete, ""},
		{inProgress, StepResult{Done: true}, complete, ""},
		{inProgress, StepResult{Err: errors.New("conflict")}, errored, "conflict (attempt 1; next try in 1s)"},
		{errored, StepResult{Err: errors.New("conflict")}, errored, "conflict (attempt 2; next try in 2s)"},
		{errored, StepResult{Message: "retrying"}, inProgress, "retrying"},
		{errored, StepResult{Done: true}, complete, ""},
		{inProgress, StepResult{Err: errors.New("job failed"), Fatal: true}, fatal, "job failed"},
	}
	for _, tt := range tests {
		status := withSteps(plan, tt.from)
		got := Record(plan, &status, map[StepRef]StepResult{ref: tt.result}, t0.Add(time.Minute))
		s := got.Phases[0].Steps[0]
		if s.Status != tt.want || s.Message != tt.msg {
			t.Errorf("%s + %+v = %s %q, want %s %q", tt.from, tt.result, s.Status, s.Message, tt.want, tt.msg)
		}
	}
}

func TestRecordTouchesTimestampOnlyOnChange(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	status := withSteps(plan, inProgress)
	same := Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Message: "waiting"}}, t0.Add(time.Hour))
	if !same.LastUpdatedTimestamp.Time.Equal(t0) {
		t.Errorf("an unchanged tree got a new timestamp %v", same.LastUpdatedTimestamp)
	}
	moved := Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Done: true}}, t0.Add(time.Hour))
	if !moved.LastUpdatedTimestamp.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("a changed tree kept its timestamp %v", moved.LastUpdatedTimestamp)
	}
	if status.Phases[0].Steps[0].Status != inProgress {
		t.Error("Record changed its input")
	}
}

func TestEmptyPlanCompletes(t *testing.T) {
	plan := &kudov1beta1.Plan{}
	status := Start("deploy", plan, "uid", t0)
	if due := Due(plan, &status); len(due) != 0 {
		t.Fatalf("Due = %v", due)
	}
	if got := Record(plan, &status, nil, t0); got.Status != complete {
		t.Errorf("an empty plan is %s, want COMPLETE", got.Status)
	}
}

func TestNewAndStart(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	n := NewPlanStatus("update", plan)
	if n.Status != never || n.Phases[1].Steps[1].Status != never || n.UID != "" || n.LastUpdatedTimestamp != nil {
		t.Errorf("NewPlanStatus = %+v", n)
	}
	s := Start("update", plan, "uid-2", t0)
	if s.Status != pending || s.Phases[0].Status != pending || s.Phases[1].Steps[0].Status != pending || s.UID != "uid-2" {
		t.Errorf("Start = %+v", s)
	}
}

func TestPlanForParameters(t *testing.T) {
	ov := &kudov1beta1.OperatorVersionSpec{
		Parameters: []kudov1beta1.Parameter{
			{Name: "NODE_COUNT"}, {Name: "MEMORY"}, {Name: "BACKUP", Trigger: "backup"}, {Name: "RESTORE", Trigger: "restore"},
			{Name: "SIZE", Trigger: "update"}, {Name: "GHOST", Trigger: "ghost", Default: ptr.To("x")},
		},
		Plans: map[string]kudov1beta1.Plan{"deploy": {}, "update": {}, "backup": {}, "restore": {}},
	}
	tests := []struct {
		changed []string
		want    string
		wantErr string
	}{
		{changed: []string{"NODE_COUNT"}, want: "update"},
		{changed: []string{"NODE_COUNT", "MEMORY", "SIZE"}, want: "update"},
		{changed: []string{"BACKUP"}, want: "backup"},
		{changed: nil, want: ""},
		{changed: []string{"BACKUP", "RESTORE", "MEMORY"}, wantErr: "parameters that trigger different plans cannot change together " +
			"(BACKUP triggers backup; MEMORY triggers update; RESTORE triggers restore): change them one plan at a time"},
		{changed: []string{"UNKNOWN"}, wantErr: "parameter UNKNOWN is not defined by the OperatorVersion"},
		{changed: []string{"GHOST"}, wantErr: `plan "ghost", triggered by GHOST, is not defined by the OperatorVersion`},
	}
	for _, tt := range tests {
		got, err := PlanForParameters(ov, tt.changed)
		if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) || got != tt.want {
			t.Errorf("PlanForParameters(%v) = %q, %v; want %q, %q", tt.changed, got, err, tt.want, tt.wantErr)
		}
	}
	// Without an update plan, untriggered parameters run deploy.
	delete(ov.Plans, "update")
	if got, err := PlanForParameters(ov, []string{"MEMORY"}); got != "deploy" || err != nil {
		t.Errorf("without update: %q, %v; want deploy", got, err)
	}
}

func TestPlanForUpgradeAndDelete(t *testing.T) {
	tests := []struct {
		plans       []string
		wantUpgrade string
		wantCleanup bool
	}{
		{[]string{"deploy", "update", "upgrade", "cleanup"}, "upgrade", true},
		{[]string{"deploy", "update"}, "update", false},
		{[]string{"deploy"}, "deploy", false},
	}
	for _, tt := range tests {
		plans := map[string]kudov1beta1.Plan{}
		for _, p := range tt.plans {
			plans[p] = kudov1beta1.Plan{}
		}
		if got := PlanForUpgrade(plans); got != tt.wantUpgrade {
			t.Errorf("PlanForUpgrade(%v) = %s, want %s", tt.plans, got, tt.wantUpgrade)
		}
		if _, ok := PlanForDelete(plans); ok != tt.wantCleanup {
			t.Errorf("PlanForDelete(%v) = %t", tt.plans, ok)
		}
	}
}

func TestChangedParameters(t *testing.T) {
	got := ChangedParameters(map[string]string{"A": "1", "B": "2", "C": "3"}, map[string]string{"A": "1", "B": "x", "D": "4"})
	if want := []string{"B", "C", "D"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ChangedParameters = %v, want %v", got, want)
	}
}

// TestAPlanWithNoPhasesCompletesAtOnce: deploy: {} is COMPLETE when it
// starts, as in KUDO, so nothing waits for it.
func TestAPlanWithNoPhasesCompletesAtOnce(t *testing.T) {
	status := Start("deploy", &kudov1beta1.Plan{}, "uid-1", t0)
	if status.Status != complete || status.UID != "uid-1" || len(Due(&kudov1beta1.Plan{}, &status)) != 0 {
		t.Errorf("an empty plan starts as %+v", status)
	}
}

func TestTimeouts(t *testing.T) {
	minute := &metav1.Duration{Duration: time.Minute}
	hour := &metav1.Duration{Duration: time.Hour}
	tests := []struct {
		name                    string
		planTimeout, stepTimout *metav1.Duration
		result                  StepResult
		at                      time.Duration
		wantStatus              kudov1beta1.ExecutionStatus
		wantMessage             string
	}{
		{"no timeout waits on", nil, nil, StepResult{Message: "waiting for Deployment ns/web"}, 24 * time.Hour,
			inProgress, "waiting for Deployment ns/web"},
		{"a step within its timeout", nil, minute, StepResult{Message: "waiting for Deployment ns/web"}, 59 * time.Second,
			inProgress, "waiting for Deployment ns/web"},
		{"a step past its timeout fails, naming what it waited for", nil, minute, StepResult{Message: "waiting for Deployment ns/web"}, time.Minute,
			fatal, "step a timed out after 1m0s: waiting for Deployment ns/web"},
		{"a step that keeps failing past its timeout fails for good", nil, minute, StepResult{Err: errors.New("connection refused")}, 2 * time.Minute,
			fatal, "step a timed out after 1m0s: connection refused"},
		{"a step done at its deadline is done", nil, minute, StepResult{Done: true}, 2 * time.Minute, complete, ""},
		{"the plan's timeout, when it comes first", minute, hour, StepResult{Message: "waiting"}, time.Minute,
			fatal, "plan deploy timed out after 1m0s: waiting"},
		{"the step's timeout, when it comes first", hour, minute, StepResult{Message: "waiting"}, time.Minute,
			fatal, "step a timed out after 1m0s: waiting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
			plan.Timeout, plan.Phases[0].Steps[0].Timeout = tt.planTimeout, tt.stepTimout
			status := Start("deploy", plan, "uid-1", t0)
			status = Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Message: "starting"}}, t0)
			got := Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: tt.result}, t0.Add(tt.at))
			step := got.Phases[0].Steps[0]
			if step.Status != tt.wantStatus || step.Message != tt.wantMessage {
				t.Errorf("step = %s %q, want %s %q", step.Status, step.Message, tt.wantStatus, tt.wantMessage)
			}
			if !step.StartedAt.Time.Equal(t0) {
				t.Errorf("the step started at %v, want %v", step.StartedAt, t0)
			}
		})
	}
}

func TestNextDeadline(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Parallel, kudov1beta1.Parallel)
	plan.Timeout = &metav1.Duration{Duration: time.Hour}
	plan.Phases[1].Steps[0].Timeout = &metav1.Duration{Duration: time.Minute}
	status := Start("deploy", plan, "uid-1", t0)
	if at, ok := NextDeadline(plan, &status); ok {
		t.Errorf("a plan whose steps have not started has a deadline %v", at)
	}
	status = withSteps(plan, inProgress, inProgress, inProgress, inProgress)
	if at, ok := NextDeadline(plan, &status); !ok || !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("NextDeadline = %v, %v; want the step's, %v", at, ok, t0.Add(time.Minute))
	}
	status = withSteps(plan, inProgress, inProgress, complete, inProgress)
	if at, ok := NextDeadline(plan, &status); !ok || !at.Equal(t0.Add(time.Hour)) {
		t.Errorf("NextDeadline = %v, %v; want the plan's, %v", at, ok, t0.Add(time.Hour))
	}
	status = withSteps(plan, fatal)
	if at, ok := NextDeadline(plan, &status); ok {
		t.Errorf("a failed plan has a deadline %v", at)
	}
}

func TestRetryResumesFromTheFailedSteps(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	failed := withSteps(plan, complete, fatal)
	if failed.Status != fatal {
		t.Fatalf("the plan is %s, want FATAL_ERROR", failed.Status)
	}
	later := t0.Add(time.Hour)
	got := Retry(&failed, later)
	if got.Status != inProgress || got.Message != "" || !got.StartedAt.Time.Equal(later) {
		t.Errorf("the plan is %s %q since %v, want IN_PROGRESS since %v", got.Status, got.Message, got.StartedAt, later)
	}
	first, second := got.Phases[0].Steps[0], got.Phases[0].Steps[1]
	if first.Status != complete || !first.StartedAt.Time.Equal(t0) {
		t.Errorf("the completed step is %s since %v: it must stay as it was", first.Status, first.StartedAt)
	}
	if second.Status != pending || second.Message != "" || second.StartedAt != nil {
		t.Errorf("the failed step is %+v, want PENDING with no message nor start", second)
	}
	if due := Due(plan, &got); !reflect.DeepEqual(due, []StepRef{{"one", "b"}}) {
		t.Errorf("Due = %v, want the failed step only", due)
	}
	if failed.Phases[0].Steps[1].Status != fatal {
		t.Error("Retry changed its input")
	}
}

func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		attempts int32
		want     time.Duration
	}{
		{0, 0}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {9, 256 * time.Second},
		{10, 5 * time.Minute}, {100, 5 * time.Minute},
	}
	for _, tt := range tests {
		if got := RetryBackoff(tt.attempts); got != tt.want {
			t.Errorf("RetryBackoff(%d) = %s, want %s", tt.attempts, got, tt.want)
		}
	}
}

func TestAttemptsCountFailuresInARow(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	ref := StepRef{"one", "a"}
	status := Start("deploy", plan, "uid-1", t0)
	fail := map[StepRef]StepResult{ref: {Err: errors.New("connection refused")}}
	// Each try once the backoff of the one before has passed: 1s, then 2s.
	for n, at := range []time.Duration{0, time.Second, 3 * time.Second} {
		status = Record(plan, &status, fail, t0.Add(at))
		if got, want := status.Phases[0].Steps[0].Attempts, int32(n+1); got != want {
			t.Fatalf("after %d failures: attempts = %d", want, got)
		}
	}
	if d, ok := NextRetry(&status, t0.Add(3*time.Second)); !ok || d != 4*time.Second {
		t.Errorf("NextRetry = %s, %v; want 4s", d, ok)
	}
	status = Record(plan, &status, map[StepRef]StepResult{ref: {Message: "waiting"}}, t0.Add(4*time.Second))
	if got := status.Phases[0].Steps[0].Attempts; got != 0 {
		t.Errorf("a try that did not fail left attempts at %d", got)
	}
	if _, ok := NextRetry(&status, t0.Add(4*time.Second)); ok {
		t.Error("a plan with no step in ERROR has a next try")
	}
}

// Events wake a step in ERROR many times within its backoff: those tries do
// not make the backoff grow, or a step that failed for a moment would wait
// minutes once it could go on.
func TestAttemptsGrowWithTimeNotWithEvents(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	ref := StepRef{"one", "a"}
	status := Start("deploy", plan, "uid-1", t0)
	fail := map[StepRef]StepResult{ref: {Err: errors.New("connection refused")}}
	status = Record(plan, &status, fail, t0)
	for at := 100 * time.Millisecond; at < time.Second; at += 100 * time.Millisecond {
		status = Record(plan, &status, fail, t0.Add(at))
	}
	step := status.Phases[0].Steps[0]
	if step.Attempts != 1 || step.Message != "connection refused (attempt 1; next try in 1s)" {
		t.Errorf("after tries within the first backoff: %d attempts, message %q", step.Attempts, step.Message)
	}
	if d, ok := NextRetry(&status, t0.Add(900*time.Millisecond)); !ok || d != 100*time.Millisecond {
		t.Errorf("NextRetry = %s, %v; want the rest of the first backoff, 100ms", d, ok)
	}
	status = Record(plan, &status, fail, t0.Add(time.Second))
	if got := status.Phases[0].Steps[0].Attempts; got != 2 {
		t.Errorf("a try after the backoff: attempts = %d, want 2", got)
	}
}

func TestAStepsMessageIsBounded(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Serial, kudov1beta1.Serial)
	status := withSteps(plan, pending)
	long := errors.New(strings.Repeat("rendered template line\n", 10000))
	got := Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Err: long, Fatal: true}}, t0)
	for name, msg := range map[string]string{"step": got.Phases[0].Steps[0].Message, "phase": got.Phases[0].Message, "plan": got.Message} {
		if len(msg) > MaxStepMessage+100 || !strings.HasSuffix(msg, "(cut)") {
			t.Errorf("the %s's message takes %d bytes: %.80q…", name, len(msg), msg)
		}
	}
}
