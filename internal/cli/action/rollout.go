package action

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/rollout"
)

// RolloutWave is a wave a Rollout would plan, and what upgrading each of its
// Instances would do.
type RolloutWave struct {
	Cluster   string            `json:"cluster,omitempty"`
	Instances []string          `json:"instances"`
	Reports   []*preview.Report `json:"reports"`
}

// PreviewRollout is `kubectl kudo rollout preview`: the waves the Rollout
// would plan now (rollout.Fleet, rollout.Waves, as its controller plans
// them), and each Instance's upgrade previewed as the caller (previewer).
func PreviewRollout(ctx context.Context, cfg Config, ro *kudov1alpha1.Rollout) ([]RolloutWave, error) {
	instances := &kudov1beta1.InstanceList{}
	if err := cfg.Client.List(ctx, instances, client.InNamespace(ro.Namespace)); err != nil {
		return nil, err
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := cfg.Client.List(ctx, versions, client.InNamespace(ro.Namespace)); err != nil {
		return nil, err
	}
	fleet, err := rollout.Fleet(instances.Items, versions.Items, &ro.Spec)
	if err != nil {
		return nil, err
	}
	waves, err := rollout.PlanWaves(fleet, ro)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]rollout.Candidate, len(fleet))
	for _, c := range fleet {
		byName[c.Instance.Name] = c
	}
	p := newPreviewer(cfg, nil)
	out := make([]RolloutWave, 0, len(waves))
	for _, wave := range waves {
		w := RolloutWave{Cluster: wave.Cluster, Instances: wave.Instances}
		for _, name := range wave.Instances {
			c := byName[name]
			after := c.Instance.DeepCopy()
			after.Spec.OperatorVersion.Name = c.Target.Name
			r, err := p.report(ctx, "upgrade", c.Instance, after, c.Target, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			w.Reports = append(w.Reports, r)
		}
		out = append(out, w)
	}
	return out, nil
}

// PrintRollout prints a rollout's preview: each wave's Instances and a line
// each, with every report in full when the options ask for diffs; -o json
// and yaml print the waves as data.
func (o *PreviewOptions) PrintRollout(w io.Writer, waves []RolloutWave) error {
	var all []*preview.Report
	if o.Output != "" {
		if err := o.printData(w, waves); err != nil {
			return err
		}
	}
	for n, wave := range waves {
		all = append(all, wave.Reports...)
		if o.Output != "" {
			continue
		}
		if _, err := fmt.Fprintf(w, "Wave %d%s: %s\n", n+1, onCluster(wave.Cluster), strings.Join(wave.Instances, ", ")); err != nil {
			return err
		}
		if o.Diff {
			for _, r := range wave.Reports {
				if err := r.Print(w, true); err != nil {
					return err
				}
			}
		}
		if err := printFleet(w, wave.Reports); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(all, (*preview.Report).Changes) {
		return ErrWouldChange
	}
	return nil
}

// onCluster is how a wave's line names its cluster, when it has one.
func onCluster(cluster string) string {
	if cluster == "" {
		return ""
	}
	return " (cluster " + cluster + ")"
}
