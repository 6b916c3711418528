package install

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
)

// runInCluster is KUDO's install --in-cluster: an Instance of an
// OperatorVersion the namespace holds, found by its operator's name.
func runInCluster(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	if opts.SkipInstance {
		return fmt.Errorf("--in-cluster installs an Instance of an installed OperatorVersion: --skip-instance would install nothing")
	}
	ov, err := installedVersion(ctx, c, ns, opts.Package, opts.OperatorVersion, opts.AppVersion)
	if err != nil {
		return err
	}
	assigned, err := params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters)
	if err != nil {
		return err
	}
	name := opts.Instance
	if name == "" {
		name = ov.Spec.Operator.Name + "-instance"
	}
	clientutil.WarnPlainSensitive(streams.ErrOut, assigned, ov.Spec.Parameters)
	if err := refuseExisting(ctx, c, ns, name); err != nil {
		return err
	}
	return createInstance(ctx, c, streams, opts, ov, name, assigned)
}

// installedVersion is the operator's OperatorVersion in the namespace of
// the versions asked for, else the newest.
func installedVersion(ctx context.Context, c client.Reader, ns, operator, version, appVersion string,
) (*kudov1beta1.OperatorVersion, error) {
	list := &kudov1beta1.OperatorVersionList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var found *kudov1beta1.OperatorVersion
	for k := range list.Items {
		ov := &list.Items[k]
		if ov.Spec.Operator.Name != operator || version != "" && ov.Spec.Version != version ||
			appVersion != "" && ov.Spec.AppVersion != appVersion {
			continue
		}
		if found == nil || newer(ov, found) {
			found = ov
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no OperatorVersion of operator %s%s in namespace %s: install the package first, "+
			"or install it from its package without --in-cluster", operator, versionsAsked(version, appVersion), ns)
	}
	return found, nil
}

// newer orders by operator version, then app version.
func newer(a, b *kudov1beta1.OperatorVersion) bool {
	if c := packages.CompareVersions(a.Spec.Version, b.Spec.Version); c != 0 {
		return c > 0
	}
	return packages.CompareVersions(a.Spec.AppVersion, b.Spec.AppVersion) > 0
}

func versionsAsked(version, appVersion string) string {
	out := ""
	if version != "" {
		out += " version " + version
	}
	if appVersion != "" {
		out += " app version " + appVersion
	}
	return out
}
