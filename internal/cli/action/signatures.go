package action

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/trust"
)

// VerifyFlag adds --verify.
func VerifyFlag(f *pflag.FlagSet, verify *bool) {
	f.BoolVar(verify, "verify", false, "Before writing anything, verify the signature of the package and of each dependency "+
		"against the cluster's TrustPolicies, as the manager will: a package none covers, or none of whose authorities signed it, is refused")
}

// VerifySignatures checks that the TrustPolicies of the cluster that cover
// each package verify its signature, with the CLI's access to registries.
// Each package was read by the digest its tag resolved to, so what is
// verified is what is installed.
func VerifySignatures(ctx context.Context, c client.Reader, pkgs []*packages.Package, registry resolve.Registry, out io.Writer) error {
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := c.List(ctx, policies); err != nil {
		return fmt.Errorf("--verify: listing the cluster's TrustPolicies: %w", err)
	}
	registries, err := registry.Client()
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		ov := &kudov1beta1.OperatorVersion{}
		if p.Origin != "" {
			ov.Annotations = map[string]string{kudov1beta1.PackageDigestAnnotation: p.Origin}
		}
		covering := trust.Covering(policies.Items, ov)
		if len(covering) == 0 {
			return fmt.Errorf("--verify: no TrustPolicy covers package %s (%s)", p.Operator.Name, originOf(p))
		}
		for _, policy := range covering {
			if p.Origin == "" {
				return fmt.Errorf("--verify: package %s comes from no OCI registry, so TrustPolicy %s, which covers it, "+
					"can verify no signature of it", p.Operator.Name, policy.Name)
			}
			authorities, err := trust.Authorities(&policy)
			if err != nil {
				return fmt.Errorf("--verify: TrustPolicy %s: %w", policy.Name, err)
			}
			verified, err := registries.Verify(ctx, p.Origin, authorities)
			if err != nil {
				return fmt.Errorf("--verify: TrustPolicy %s: %w", policy.Name, err)
			}
			_, err = fmt.Fprintf(out, "Verified: %s, signed by %s of TrustPolicy %s\n", verified.Ref, verified.Authority, policy.Name)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func originOf(p *packages.Package) string {
	if p.Origin == "" {
		return "from no OCI registry"
	}
	return p.Origin
}
