package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// PrepareVersions verifies the packages to install or upgrade to, the last
// with verify and each before it, a dependency, with its defaults: the
// values its parent's KudoOperator task passes are known only when the plan
// runs. It prepares, in the same order, what installing them writes.
func PrepareVersions(ctx context.Context, c client.Reader, ns string, pkgs []*packages.Package, verify packages.VerifyOptions,
	replace bool, errOut io.Writer) ([]*Version, error) {
	versions := make([]*Version, 0, len(pkgs))
	for k, pkg := range pkgs {
		opts := packages.VerifyOptions{}
		if k == len(pkgs)-1 {
			opts = verify
		}
		if err := VerifyPackage(pkg, opts, errOut); err != nil {
			return nil, err
		}
		v, err := PrepareVersion(ctx, c, ns, pkg, replace)
		if err != nil {
			return nil, err
		}
		if err := warnOfTypedAPIConflict(ctx, c, v, errOut); err != nil {
			return nil, err
		}
		versions = append(versions, v)
	}
	return versions, nil
}

// warnOfTypedAPIConflict says, before anything is written, that the
// manager will not serve the package's kind in ns because another Operator
// holds the kind or its group, naming it, as the Operator's Ready condition
// will: its Instances run all the same, as KUDO's did. A user who may not
// list CustomResourceDefinitions learns it from that condition.
func warnOfTypedAPIConflict(ctx context.Context, c client.Reader, v *Version, errOut io.Writer) error {
	names, err := typedapi.NamesOf(v.operator.Name, v.ov.Spec.TypedAPI)
	if err != nil {
		return nil // package verify has named it
	}
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(kudocrd.V1.GroupVersion().WithKind("CustomResourceDefinitionList"))
	switch err := c.List(ctx, crds); {
	case apierrors.IsForbidden(err) || meta.IsNoMatchError(err):
		return nil
	case err != nil:
		return err
	}
	alive := func(key types.NamespacedName) bool {
		return !apierrors.IsNotFound(c.Get(ctx, key, &kudov1beta1.Operator{}))
	}
	if conflict := typedapi.Conflict(names, client.ObjectKeyFromObject(v.operator), crds.Items, alive); conflict != "" {
		_, _ = fmt.Fprintf(errOut, "Warning: package %s: no typed API in namespace %s: %s; its Instances run as Instances only\n",
			v.operator.Name, v.operator.Namespace, conflict)
	}
	return nil
}

// VerifyPackage verifies a package to install or upgrade to (opts.Install):
// it refuses one that cannot install or run, and prints the rules of good
// packaging it breaks as warnings, as package verify names them.
func VerifyPackage(p *packages.Package, opts packages.VerifyOptions, errOut io.Writer) error {
	opts.Install = true
	report := packages.Verify(p, opts)
	if len(report.Errors) > 0 {
		return fmt.Errorf("package %s is not valid: %s", p.Operator.Name, report.Errors[0])
	}
	for _, w := range report.Warnings {
		_, _ = fmt.Fprintf(errOut, "Warning: package %s: %s\n", p.Operator.Name, w)
	}
	return nil
}

// Version is what installing a package writes: its Operator and
// OperatorVersion. It is decided before anything is written.
type Version struct {
	operator *kudov1beta1.Operator
	ov       *kudov1beta1.OperatorVersion
	// installed is the OperatorVersion of the same name already in the
	// cluster: unchanged when its content is the package's, replaced if not.
	installed *kudov1beta1.OperatorVersion
}

// OperatorVersion is the package's OperatorVersion.
func (v *Version) OperatorVersion() *kudov1beta1.OperatorVersion { return v.ov }

// PrepareVersion converts the package for the namespace and compares it with
// what is installed. An installed Operator is reused, as KUDO does; an
// installed OperatorVersion of the same name is reused only when its content
// is the package's: KUDO silently kept the old one. One that differs is
// refused, or with replace replaced, but never under an Instance using it.
func PrepareVersion(ctx context.Context, c client.Reader, ns string, p *packages.Package, replace bool) (*Version, error) {
	op, ov, err := p.Convert(ns)
	if err != nil {
		return nil, err
	}
	v := &Version{operator: op, ov: ov}
	installed := &kudov1beta1.OperatorVersion{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(ov), installed); {
	case apierrors.IsNotFound(err):
		return v, nil
	case err != nil:
		return nil, err
	}
	fields, err := differentFields(&installed.Spec, &ov.Spec)
	if err != nil || len(fields) == 0 {
		return v, err
	}
	differs := fmt.Sprintf("OperatorVersion %s in namespace %s differs from package %s %s (in spec.%s)",
		ov.Name, ns, p.Operator.Name, ov.Spec.Version, strings.Join(fields, ", spec."))
	if !replace {
		return nil, fmt.Errorf("%s: bump operatorVersion in the package's operator.yaml, "+
			"or pass --replace-operator-version to replace it (if no Instance uses it)", differs)
	}
	users, err := instancesOf(ctx, c, installed)
	if err != nil {
		return nil, err
	}
	if len(users) > 0 {
		return nil, fmt.Errorf("%s, and Instances %s use it: it cannot be replaced under them; "+
			"bump operatorVersion in the package's operator.yaml and upgrade them with kubectl kudo upgrade",
			differs, strings.Join(users, ", "))
	}
	v.installed = installed
	return v, nil
}

// differentFields lists, sorted, the fields of two specs that differ as the
// API server stores them, where an empty list and a missing one are the same.
func differentFields(a, b *kudov1beta1.OperatorVersionSpec) ([]string, error) {
	var fields [2]map[string]json.RawMessage
	for k, spec := range []*kudov1beta1.OperatorVersionSpec{a, b} {
		data, err := json.Marshal(spec)
		if err == nil {
			err = json.Unmarshal(data, &fields[k])
		}
		if err != nil {
			return nil, err
		}
	}
	var differ []string
	for _, name := range sets.List(sets.KeySet(fields[0]).Union(sets.KeySet(fields[1]))) {
		if !bytes.Equal(fields[0][name], fields[1][name]) {
			differ = append(differ, name)
		}
	}
	return differ, nil
}

// instancesOf names the Instances that use the OperatorVersion, from any
// namespace (namespace/name) or, for a user who may not list Instances
// across namespaces, from its own, where almost all of them are.
func instancesOf(ctx context.Context, c client.Reader, ov *kudov1beta1.OperatorVersion) ([]string, error) {
	list := &kudov1beta1.InstanceList{}
	err := c.List(ctx, list)
	if apierrors.IsForbidden(err) {
		err = c.List(ctx, list, client.InNamespace(ov.Namespace))
	}
	if err != nil {
		return nil, fmt.Errorf("listing the Instances that use OperatorVersion %s: %w", ov.Name, err)
	}
	var names []string
	for i := range list.Items {
		if list.Items[i].OperatorVersionKey() == client.ObjectKeyFromObject(ov) {
			names = append(names, list.Items[i].Namespace+"/"+list.Items[i].Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Write creates the Operator and OperatorVersion, or replaces the
// OperatorVersion, and says what it did as kubectl does.
func (v *Version) Write(ctx context.Context, c client.Client, out io.Writer) error {
	if err := c.Create(ctx, v.operator); apierrors.IsAlreadyExists(err) {
		_, _ = fmt.Fprintf(out, "operator.kudo.dev/%s unchanged\n", v.operator.Name)
	} else if err != nil {
		return fmt.Errorf("creating Operator %s: %w", v.operator.Name, err)
	} else {
		_, _ = fmt.Fprintf(out, "operator.kudo.dev/%s created\n", v.operator.Name)
	}
	if v.installed != nil {
		replaced := v.installed.DeepCopy()
		replaced.Spec = v.ov.Spec
		if err := c.Update(clientutil.Warned(ctx), replaced); err != nil {
			return fmt.Errorf("replacing OperatorVersion %s: %w", v.ov.Name, err)
		}
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s replaced\n", v.ov.Name)
		return nil
	}
	if err := c.Create(clientutil.Warned(ctx), v.ov); apierrors.IsAlreadyExists(err) {
		// Checked by PrepareVersion to be the package's.
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s unchanged\n", v.ov.Name)
	} else if err != nil {
		return fmt.Errorf("creating OperatorVersion %s: %w", v.ov.Name, err)
	} else {
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s created\n", v.ov.Name)
	}
	return nil
}
