package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"text/tabwriter"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/internal/webhook"
)

// PreviewOptions are --dry-run and --diff of install, update and upgrade:
// say what the change would do in the cluster, and write nothing.
type PreviewOptions struct {
	DryRun string
	Diff   bool
	Output string
}

// DryRunServer is --dry-run=server, a preview.
const DryRunServer = "server"

// AddFlags adds --dry-run, --diff and -o.
func (o *PreviewOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.DryRun, "dry-run", "none", `"server" (or --dry-run alone): write nothing, print the plan that would run and `+
		"what it would do to each object, as the API server answers dry runs made with your credentials (kudo-ng)")
	f.Lookup("dry-run").NoOptDefVal = DryRunServer
	f.BoolVar(&o.Diff, "diff", false, "Write nothing, and print the plan that would run and the diff of each object it would "+
		"change, create or delete, as kubectl diff does; exit 1 when anything would change, 0 when nothing would (kudo-ng)")
	f.StringVarP(&o.Output, "output", "o", "", "With --dry-run=server or --diff: print the preview as json or yaml")
}

// Check refuses flags that do not go together: a preview with --wait,
// which waits for a change a preview does not make.
func (o *PreviewOptions) Check(wait bool) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if wait && o.Enabled() {
		return errors.New("--wait waits for the change, which a preview (--dry-run=server, --diff) does not make")
	}
	return nil
}

// Enabled reports whether the verb previews rather than changes.
func (o *PreviewOptions) Enabled() bool { return o.DryRun == DryRunServer || o.Diff }

// Validate refuses values the flags do not take.
func (o *PreviewOptions) Validate() error {
	switch o.DryRun {
	case "", "none", DryRunServer:
	case "client":
		return errors.New(`--dry-run=client: what a package renders offline is kubectl kudo package render; ` +
			`--dry-run=server previews against the cluster`)
	default:
		return fmt.Errorf(`--dry-run=%s: the values are "none" and "server"`, o.DryRun)
	}
	switch o.Output {
	case "":
	case "json", "yaml":
		if !o.Enabled() {
			return fmt.Errorf("-o %s prints a preview: add --dry-run=server or --diff", o.Output)
		}
	default:
		return fmt.Errorf("-o %s: the formats are json and yaml", o.Output)
	}
	return nil
}

// ErrWouldChange is a preview's answer that the change would change
// something: kubectl kudo exits 1, as kubectl diff does.
var ErrWouldChange = errors.New("the change would change the cluster")

// PreviewFailed marks an error of a preview itself: kubectl kudo exits 2
// then, as kubectl diff does, so that a script tells it from a change.
type PreviewFailed struct{ Err error }

func (e *PreviewFailed) Error() string { return e.Err.Error() }
func (e *PreviewFailed) Unwrap() error { return e.Err }

// ExitCode is 2.
func (e *PreviewFailed) ExitCode() int { return 2 }

// Preview runs one preview and prints it: exit 0 when nothing would change,
// 1 when something would (ErrWouldChange), 2 when the preview failed.
func (o *PreviewOptions) Preview(w io.Writer, report func() (*preview.Report, error)) error {
	r, err := report()
	if err != nil {
		return &PreviewFailed{Err: err}
	}
	return o.Print(w, r)
}

// Print prints the reports, as text or -o json|yaml, and returns
// ErrWouldChange when any would change something.
func (o *PreviewOptions) Print(w io.Writer, reports ...*preview.Report) error {
	var err error
	if o.Output != "" {
		err = o.printData(w, reports)
	} else {
		for _, r := range reports {
			if err = r.Print(w, o.Diff); err != nil {
				break
			}
		}
		if err == nil && len(reports) > 1 {
			err = printFleet(w, reports)
		}
	}
	if err != nil {
		return err
	}
	if slices.ContainsFunc(reports, (*preview.Report).Changes) {
		return ErrWouldChange
	}
	return nil
}

// printData prints v as -o asks: json or yaml.
func (o *PreviewOptions) printData(w io.Writer, v any) error {
	var b []byte
	var err error
	if o.Output == "json" {
		if b, err = json.MarshalIndent(v, "", "  "); err == nil {
			b = append(b, '\n')
		}
	} else {
		b, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// printFleet sums up the reports of a fleet, one line per Instance, its
// children's objects included.
func printFleet(w io.Writer, reports []*preview.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "INSTANCE\tPLAN\tCREATE\tCONFIGURE\tDELETE\tKEEP\tREFUSE\tUNCHANGED")
	for _, r := range reports {
		plan := r.Plan
		switch {
		case r.Refusal != "":
			plan = "(refused)"
		case plan == "":
			plan = "(none)"
		}
		c := r.Total()
		_, _ = fmt.Fprintf(tw, "%s/%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", r.Namespace, r.Instance, plan,
			c[preview.Create], c[preview.Configure], c[preview.Delete]+c[preview.Prune], c[preview.Keep], c[preview.Refuse], c[preview.Unchanged])
	}
	return tw.Flush()
}

// maxChildDepth bounds how deep the preview follows KudoOperator tasks;
// install refuses cycles, and no real package nests this deep.
const maxChildDepth = 8

// previewer says what a change of an Instance would do, as the caller:
// everything is read with the caller's credentials and every write is a
// server-side dry run, so a preview shows no more than the caller may read,
// and what the caller may not write shows as refused. The objects' writes
// go through objects.Manager, the manager's own layer, so that ownership,
// the applied hash and pruning's guards decide as they would.
type previewer struct {
	cfg    Config
	dryRun client.Client
	served migrate.Served
	scope  render.Scope
	// versions are OperatorVersions the change would install, which
	// KudoOperator tasks' children may run.
	versions []*kudov1beta1.OperatorVersion
}

func newPreviewer(cfg Config, versions []*Version) *previewer {
	mapper := cfg.Client.RESTMapper()
	p := &previewer{cfg: cfg, dryRun: client.NewDryRunClient(cfg.Client), served: migrate.ServedByMapper(mapper),
		scope: render.MapperScope(mapper)}
	for _, v := range versions {
		p.versions = append(p.versions, v.OperatorVersion())
	}
	return p
}

// writeVersions dry-runs the writes of the OperatorVersions: admission
// checks them (a typed API's breaking change) as it would.
func (p *previewer) writeVersions(ctx context.Context, versions []*Version) error {
	for _, v := range versions {
		if err := v.Write(ctx, p.dryRun, io.Discard); err != nil {
			return err
		}
	}
	return nil
}

// report says what moving the Instance from before (nil: a new one) to
// after, of ov, would do. after carries before's status.
func (p *previewer) report(ctx context.Context, action string, before, after *kudov1beta1.Instance,
	ov *kudov1beta1.OperatorVersion, depth int) (*preview.Report, error) {
	r := &preview.Report{Instance: after.Name, Namespace: after.Namespace, OperatorVersion: ov.Name, Action: action}
	plan, err := p.admit(ctx, before, after, ov)
	if err != nil {
		return refused(r, err)
	}
	if r.Plan = plan; plan == "" {
		return r, nil
	}
	values, err := p.parameters(ctx, after)
	if err != nil {
		return refused(r, err)
	}
	if after.UID == "" {
		// A new Instance has no uid yet; its objects' owner references
		// need one, which no object in the cluster has.
		after.UID = uuid.NewUUID()
	}
	owner := task.OwnerReference(after)
	tasks, err := preview.Plan(&preview.Input{
		OperatorVersion: ov, InstanceName: after.Name, Namespace: after.Namespace, Parameters: values, PlanName: plan,
		Served: p.served, Scope: p.scope, Owner: &owner, PlanUID: uuid.NewUUID(), Dependencies: p.dependencies(ctx),
		Shard: after.Labels[kudov1beta1.ShardLabel], Capabilities: p.cfg.Capabilities,
	})
	if err != nil {
		return refused(r, err)
	}
	r.Steps = preview.StepsOf(tasks)
	run := &previewRun{
		previewer: p, report: r, instance: after, depth: depth,
		objects: objects.NewManager(after, p.dryRun, objects.Options{APIReader: p.cfg.Client}),
		redactor: params.NewRedactor(params.WithDefaults(ov.Spec.Parameters, values),
			params.Sensitive(ov.Spec.Parameters, after.Spec.SecretParameters)),
		applied: map[kudov1beta1.ObjectRef]*unstructured.Unstructured{},
	}
	for _, t := range tasks {
		if err := run.task(ctx, &t); err != nil {
			return nil, err
		}
	}
	for _, s := range preview.Stale(after.Status.Inventory, tasks) {
		if err := run.remove(ctx, s.Task, preview.Prune, s.Ref, objects.Removal); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// previewRun is the preview of one Instance's plan, task after task.
type previewRun struct {
	*previewer
	report   *preview.Report
	instance *kudov1beta1.Instance
	depth    int
	objects  *objects.Manager
	redactor *params.Redactor
	// applied are what the plan's earlier tasks would apply, as the dry
	// runs answered: a later task that deletes one deletes that.
	applied map[kudov1beta1.ObjectRef]*unstructured.Unstructured
}

// refused is the report of a change refused: by admission, by the rules of
// the package, or because what it needs may not be read. Only an API server
// not reached fails the preview itself.
func refused(r *preview.Report, err error) (*preview.Report, error) {
	var unreachable net.Error
	if errors.As(err, &unreachable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	r.Refusal = err.Error()
	return r, nil
}

// admit is what admission decides of the Instance's write: the plan it
// schedules, or its refusal. The webhook's own rules decide, here with the
// OperatorVersion the change would install; when that one is installed
// already, the API server is asked too, with a dry run of the write, so
// that the caller's rights and every webhook have their say.
func (p *previewer) admit(ctx context.Context, before, after *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) (string, error) {
	if before == nil {
		webhook.DefaultCreate(after, ov)
		if err := webhook.ValidateCreate(after, ov); err != nil {
			return "", err
		}
	} else {
		webhook.DefaultUpdate(before, after, ov)
		if err := webhook.ValidateUpdate(before, after, ov); err != nil {
			return "", err
		}
	}
	plan := after.Spec.PlanExecution.PlanName
	if before != nil && after.Spec.PlanExecution == before.Spec.PlanExecution {
		plan = ""
	}
	if typedapi.HolderOf(after) != nil {
		// The typed objects' controller writes this Instance, not the
		// caller, whose write of the typed object is checked instead.
		return plan, nil
	}
	installed := &kudov1beta1.OperatorVersion{}
	switch err := p.cfg.Client.Get(ctx, client.ObjectKeyFromObject(ov), installed); {
	case apierrors.IsNotFound(err):
		return plan, nil
	case err != nil:
		return "", err
	}
	written := after.DeepCopy()
	if before == nil {
		written.UID = ""
		return plan, p.dryRun.Create(ctx, written)
	}
	return plan, p.dryRun.Patch(ctx, written, client.MergeFrom(before))
}

// parameters are the values templates receive: the spec's, and those of
// the Secret keys spec.secretParameters names, read as the caller.
func (p *previewer) parameters(ctx context.Context, i *kudov1beta1.Instance) (map[string]string, error) {
	values := maps.Clone(i.Spec.Parameters)
	if values == nil {
		values = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(i.Spec.SecretParameters)) {
		ref := i.Spec.SecretParameters[name]
		secret := &corev1.Secret{}
		if err := p.cfg.Client.Get(ctx, client.ObjectKey{Namespace: i.Namespace, Name: ref.Name}, secret); err != nil {
			return nil, fmt.Errorf("parameter %s: reading Secret %s: %w", name, ref.Name, err)
		}
		value, ok := secret.Data[ref.Key]
		if !ok {
			return nil, fmt.Errorf("parameter %s: Secret %s has no key %s", name, ref.Name, ref.Key)
		}
		values[name] = string(value)
	}
	return values, nil
}

// dependencies reads the ConfigMaps and Secrets pods mount, as the caller.
func (p *previewer) dependencies(ctx context.Context) render.Dependencies {
	return func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
		err := p.cfg.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return obj, err == nil, err
	}
}

// task adds what one task would do to the report.
func (run *previewRun) task(ctx context.Context, t *preview.Task) error {
	r := run.report
	switch t.Action {
	case task.ActionApply:
		for _, stage := range objects.Stages(t.Objects) {
			for _, obj := range stage {
				o, err := run.apply(ctx, t.Name, obj)
				if err != nil {
					return err
				}
				r.Objects = append(r.Objects, o)
			}
		}
	case task.ActionDelete:
		for _, obj := range t.Objects {
			if err := run.remove(ctx, t.Name, preview.Delete, inventory.RefOf(obj), task.Deletion); err != nil {
				return err
			}
		}
	case task.ActionRun:
		r.Runs = append(r.Runs, fmt.Sprintf("task %s (%s): %s", t.Name, t.Kind, t.Note))
	case task.ActionInstall:
		child, err := run.child(ctx, t, run.instance, run.depth)
		if err != nil {
			return err
		}
		r.Children = append(r.Children, child)
	}
	return nil
}

// apply is the fate of an object an Apply task applies: the dry run of the
// manager's own apply, compared with the object as it is.
func (run *previewRun) apply(ctx context.Context, taskName string, obj *unstructured.Unstructured) (preview.Object, error) {
	ref := inventory.RefOf(obj)
	live, err := run.objects.Get(ctx, ref)
	if err != nil {
		return preview.Refused(taskName, obj, err.Error()), nil
	}
	change, err := run.objects.Apply(ctx, obj.DeepCopy())
	switch {
	case meta.IsNoMatchError(err):
		// Its kind comes with the plan (a CRD an earlier step applies):
		// the server cannot check it before.
		run.applied[ref] = obj
		o, err := preview.Compare(taskName, nil, obj, run.redactor)
		o.Note = "not checked by the API server: it does not serve the kind yet"
		return o, err
	case err != nil:
		return preview.Refused(taskName, obj, err.Error()), nil
	case change.Action == objects.Unchanged:
		run.applied[ref] = live
		return preview.Compare(taskName, live, live, run.redactor)
	}
	run.applied[ref] = change.Object
	return preview.Compare(taskName, live, change.Object, run.redactor)
}

// remove adds the fate of an object a delete would remove: the dry run of
// the manager's own delete, with its guards; what an earlier task of the
// plan would apply is deleted as it would be then.
func (run *previewRun) remove(ctx context.Context, taskName string, verb preview.Verb, ref kudov1beta1.ObjectRef,
	opts objects.DeleteOptions) error {
	r := run.report
	named := &unstructured.Unstructured{}
	named.SetAPIVersion(ref.APIVersion)
	named.SetKind(ref.Kind)
	named.SetNamespace(ref.Namespace)
	named.SetName(ref.Name)
	change, err := run.objects.Delete(ctx, ref, opts)
	if err == nil && change.Action == objects.Gone && run.applied[ref] != nil {
		change = objects.Change{Object: run.applied[ref], Action: objects.Deleting}
	}
	switch {
	case err != nil:
		r.Objects = append(r.Objects, preview.Refused(taskName, named, err.Error()))
	case change.Action == objects.Deleting:
		o, err := preview.Removed(taskName, verb, change.Object, run.redactor)
		if err != nil {
			return err
		}
		r.Objects = append(r.Objects, o)
	case change.Action != objects.Gone:
		r.Objects = append(r.Objects, preview.Kept(taskName, named, fmt.Sprintf("%s (%s)", change.Action, change.Note)))
	}
	return nil
}

// child is what a KudoOperator task would do to the Instance it makes: its
// OperatorVersion is the one the task names, in the cluster or installed
// with the change.
func (p *previewer) child(ctx context.Context, t *preview.Task, parent *kudov1beta1.Instance, depth int) (*preview.Report, error) {
	r := &preview.Report{Instance: t.Child.Name, Namespace: parent.Namespace, Action: "install"}
	if depth >= maxChildDepth {
		r.Refusal = fmt.Sprintf("KudoOperator tasks nest deeper than %d", maxChildDepth)
		return r, nil
	}
	ov, err := task.ChildOperatorVersion(ctx, p.cfg.Client, parent, &t.Spec.KudoOperatorTaskSpec, p.versions)
	if err != nil {
		return refused(r, err)
	}
	r.OperatorVersion = ov.Name
	values, err := t.Child.Values(ov)
	if err != nil {
		return refused(r, err)
	}
	after := &kudov1beta1.Instance{}
	var before *kudov1beta1.Instance
	switch err := p.cfg.Client.Get(ctx, types.NamespacedName{Namespace: parent.Namespace, Name: t.Child.Name}, after); {
	case apierrors.IsNotFound(err):
		after.Name, after.Namespace = t.Child.Name, parent.Namespace
		after.Labels = map[string]string{kudov1beta1.OperatorLabel: ov.Spec.Operator.Name}
	case err != nil:
		return refused(r, err)
	default:
		before = after.DeepCopy()
		r.Action = "update"
		if before.Spec.OperatorVersion.Name != ov.Name {
			r.Action = "upgrade"
		}
	}
	after.Spec.OperatorVersion.Name = ov.Name
	after.Spec.Parameters = values
	return p.report(ctx, r.Action, before, after, ov, depth+1)
}
