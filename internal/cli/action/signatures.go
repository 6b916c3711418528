package action

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/trust"
)

// VerifyFlag adds --verify.
func VerifyFlag(f *pflag.FlagSet, verify *bool) {
	f.BoolVar(verify, "verify", false, "Before writing anything, verify the signature of the package and of each dependency "+
		"against the cluster's TrustPolicies, as the manager will: a package none covers, or none of whose authorities signed it, is refused")
}

// VerifySignatures checks, before anything is written, that the
// TrustPolicies of the cluster that cover each OperatorVersion to install
// verify it as the manager will (trust.VerifyWith), with the CLI's access to
// registries: the signature of the package it was read from, by the digest
// its tag resolved to, and that it is that package.
func VerifySignatures(ctx context.Context, c client.Reader, versions []*Version, registry resolve.Registry, out io.Writer) error {
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := c.List(ctx, policies); err != nil {
		return fmt.Errorf("--verify: listing the cluster's TrustPolicies: %w", err)
	}
	for _, v := range versions {
		ov := v.OperatorVersion()
		covering := trust.Covering(policies.Items, ov)
		if len(covering) == 0 {
			origin := cmp.Or(ov.Annotations[kudov1beta1.PackageDigestAnnotation], "from no OCI registry")
			return fmt.Errorf("--verify: no TrustPolicy covers package %s (%s)", ov.Spec.Operator.Name, origin)
		}
		for _, policy := range covering {
			verified, err := trust.VerifyWith(ctx, ov, &policy, registry.Client)
			if err != nil {
				return fmt.Errorf("--verify: TrustPolicy %s: package %s: %w", policy.Name, ov.Spec.Operator.Name, err)
			}
			_, err = fmt.Fprintf(out, "Verified: %s, signed by %s of TrustPolicy %s\n", verified.Ref, verified.Authority, policy.Name)
			if err != nil {
				return err
			}
		}
	}
	return nil
}
