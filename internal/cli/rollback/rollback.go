// Package rollback is `kubectl kudo rollback` (kudo-ng): return an Instance
// to the OperatorVersion and parameters of an earlier plan run, which runs
// the plan KUDO runs for that change of spec.
package rollback

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Options are the flags of rollback.
type Options struct {
	Instance string
	// Revision is the revision to return to; 0: the newest completed one
	// whose spec is not the Instance's.
	Revision int64
	Wait     bool
	WaitTime time.Duration
}

// NewCmd returns the rollback command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "rollback --instance NAME [--to-revision N]",
		Short: "Return an Instance to the OperatorVersion and parameters of an earlier plan run (kudo-ng)",
		Long: `Return an Instance to the OperatorVersion and parameters an earlier plan run started
from: its revision, as kubectl kudo plan history lists them. The plan KUDO runs for
that change of spec runs: upgrade (or deploy) for another OperatorVersion, the plans
the changed parameters trigger otherwise.`,
		Example: `  kubectl kudo rollback --instance zk --wait
  kubectl kudo rollback --instance zk --to-revision 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams, opts)
		},
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	cmd.Flags().Int64Var(&opts.Revision, "to-revision", 0,
		"The revision to return to (default: the newest completed one with another OperatorVersion or other parameters)")
	clientutil.WaitFlags(cmd.Flags(), &opts.Wait, &opts.WaitTime, "Wait until the plan the rollback runs has finished")
	return cmd
}

// Run checks that the revision can be returned to, then patches the spec.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	i, current, err := clientutil.GetInstance(ctx, c, ns, opts.Instance)
	if err != nil {
		return err
	}
	sensitive := params.Sensitive(current.Spec.Parameters, i.Spec.SecretParameters)
	target, err := engine.RollbackTarget(i, opts.Revision, sensitive)
	if err != nil {
		return err
	}
	ov := &kudov1beta1.OperatorVersion{}
	key := client.ObjectKey{Namespace: i.OperatorVersionKey().Namespace, Name: target.OperatorVersion}
	if err := c.Get(ctx, key, ov); err != nil {
		return fmt.Errorf("revision %d ran OperatorVersion %s, which cannot be read (%w): install it again to roll back to it",
			target.Number, target.OperatorVersion, err)
	}
	values, err := restoredValues(i, target, sensitive)
	if err != nil {
		return err
	}
	if err := checkImmutable(current, i, values, target); err != nil {
		return err
	}
	if typed := typedapi.HolderOf(i); typed != nil {
		if err := rollbackTyped(ctx, c, typed, i, ov, target, values); err != nil {
			return err
		}
	} else {
		patch := client.MergeFromWithOptions(i.DeepCopy(), client.MergeFromWithOptimisticLock{})
		i.Spec.OperatorVersion.Name = target.OperatorVersion
		i.Spec.Parameters = values
		i.Spec.SecretParameters = maps.Clone(target.SecretParameters)
		if err := c.Patch(ctx, i, patch); err != nil {
			return fmt.Errorf("rolling Instance %s back to revision %d: %w", i.Name, target.Number, err)
		}
	}
	_, _ = fmt.Fprintf(streams.Out, "Instance %s rolled back to revision %d: OperatorVersion %s, parameters %s\n",
		i.Name, target.Number, target.OperatorVersion, action.DescribeParameters(target))
	if !opts.Wait {
		return nil
	}
	return action.Wait(ctx, c, ns, streams.Out, i.Name, opts.WaitTime)
}

// rollbackTyped returns the typed object that makes the Instance to the
// revision, and waits until its Instance has it: the manager writes the
// Instance's spec.
func rollbackTyped(ctx context.Context, c client.Client, typed *unstructured.Unstructured, i *kudov1beta1.Instance,
	ov *kudov1beta1.OperatorVersion, target *kudov1beta1.Revision, values map[string]string) error {
	spec, err := clientutil.TypedReplacement(values, target.SecretParameters, i.Spec.SecretParameters, ov.Spec.Parameters)
	if err != nil {
		return err
	}
	if err := clientutil.AwaitTypedFields(ctx, c, typed, slices.Collect(maps.Keys(spec))); err != nil {
		return err
	}
	spec[typedapi.OperatorVersionField] = target.OperatorVersion
	if err := clientutil.PatchTyped(ctx, c, typed, spec); err != nil {
		return err
	}
	// The API server defaults the fields the revision did not set.
	restored := params.Assigned{Values: values, Secrets: target.SecretParameters}
	return clientutil.AwaitInstanceOf(ctx, c, typed, func(got *kudov1beta1.Instance) bool {
		return got.Spec.OperatorVersion.Name == target.OperatorVersion && restored.AppliedTo(got)
	})
}

// restoredValues are the spec.parameters of the revision: its values, but
// those taken from Secrets, which it names instead. A sensitive value the
// revision recorded masked is the Instance's own, when that is the one it
// ran with; kudo-ng keeps no other. Only the manager can make a mask: the
// mask of the Instance's value is the one the status recorded
// (engine.RecordedSpec), when it recorded the Instance's spec.
func restoredValues(i *kudov1beta1.Instance, target *kudov1beta1.Revision, sensitive map[string]bool) (map[string]string, error) {
	spec, known := engine.RecordedSpec(i, sensitive)
	values := map[string]string{}
	for name, v := range target.Parameters {
		if _, fromSecret := target.SecretParameters[name]; fromSecret {
			continue
		}
		if params.IsMasked(v) {
			now, set := i.Spec.Parameters[name]
			if set && !known {
				return nil, fmt.Errorf("parameter %s is sensitive, and the Instance's status does not tell yet whether "+
					"revision %d ran with the value it has: the last plan did not start from its spec as it is now "+
					"(a plan started from an earlier one runs, or the manager has not taken this one yet); "+
					"roll back once no plan runs, or set it again with kubectl kudo update -p %s=VALUE and roll back then",
					name, target.Number, name)
			}
			if !set || spec[name] != v {
				return nil, fmt.Errorf("parameter %s is sensitive: revision %d ran with another value than the Instance has, "+
					"which kudo-ng does not keep; set it again with kubectl kudo update -p %s=VALUE (or keep it in a Secret: "+
					"-p %s=%sSECRET/KEY) and roll back then", name, target.Number, name, name, params.SecretPrefix)
			}
			v = now
		}
		values[name] = v
	}
	return values, nil
}

// checkImmutable refuses a rollback that would change an immutable
// parameter of the current OperatorVersion, as admission would.
func checkImmutable(current *kudov1beta1.OperatorVersion, i *kudov1beta1.Instance, values map[string]string,
	target *kudov1beta1.Revision) error {
	now, then := params.Declared(i.Spec.Parameters, i.Spec.SecretParameters), params.Declared(values, target.SecretParameters)
	for _, p := range current.Spec.Parameters {
		if !ptr.Deref(p.Immutable, false) {
			continue
		}
		before, after := now[p.Name], then[p.Name]
		if before == after {
			continue
		}
		if p.IsSensitive() {
			return fmt.Errorf("parameter %s is immutable: revision %d ran with another value than the Instance has, "+
				"and rollback cannot change it", p.Name, target.Number)
		}
		return fmt.Errorf("parameter %s is immutable: revision %d ran with %q, the Instance has %q, and rollback cannot change it",
			p.Name, target.Number, after, before)
	}
	return nil
}
