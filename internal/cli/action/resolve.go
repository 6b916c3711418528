package action

import (
	"context"

	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
)

// ResolvePackage finds the package a verb's flags name, and the packages
// its KudoOperator tasks install with it (resolve.PackageAndDependencies);
// repo is --repo, a repository's name or URL, or "" for the one in use.
func ResolvePackage(ctx context.Context, repo string, req resolve.Request, check func(*packages.Package) error) (
	*packages.Package, []*packages.Package, error) {
	url, err := repoconfig.Resolve(repo)
	if err != nil {
		return nil, nil, err
	}
	req.Repo = url
	return resolve.PackageAndDependencies(ctx, req, check)
}
