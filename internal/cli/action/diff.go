package action

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// kubectlFieldOwner is the field manager of kubectl apply --server-side,
// whose write of the manifest the preview makes, as a dry run.
const kubectlFieldOwner = "kubectl"

// MaxManifestBytes bounds the manifests kubectl kudo diff reads: typed
// objects are small; a file past it is not one.
const MaxManifestBytes = 4 << 20

// Diff is `kubectl kudo diff -f FILE`: what applying the typed objects of
// a manifest would do to the Instances they make, as a preview.
type Diff struct {
	// File is the manifest, "-" for standard input.
	File string
	In   io.Reader
}

// Preview says what applying each typed object of the manifest would do.
func (a *Diff) Preview(ctx context.Context, cfg Config) ([]*preview.Report, error) {
	objs, err := a.read(cfg.Namespace)
	if err != nil {
		return nil, err
	}
	reports := make([]*preview.Report, 0, len(objs))
	for _, obj := range objs {
		r, err := previewTyped(ctx, cfg, obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", clientutil.TypedName(obj), err)
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// read reads the manifest's objects, within MaxManifestBytes; an object
// without a namespace is of the namespace the verb acts in.
func (a *Diff) read(ns string) ([]*unstructured.Unstructured, error) {
	data, err := clientutil.ReadFile(a.File, a.In, MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	if err := yamlbound.Check(data, yamlbound.Within(MaxManifestBytes)); err != nil {
		return nil, fmt.Errorf("%s: %w", a.File, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.File, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yamlbound.Unmarshal(doc, &obj.Object, yamlbound.Within(MaxManifestBytes)); err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", a.File, n, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("%s, document %d: an object needs a kind and metadata.name", a.File, n)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s holds no object", a.File)
	}
	return objs, nil
}

// previewTyped is what applying the typed object obj would do: its own
// write is a dry run as the caller, which admission checks, and the
// Instance it would make is the one the typed objects' controller makes
// of the server's answer (typedapi.InstanceOf).
func previewTyped(ctx context.Context, cfg Config, obj *unstructured.Unstructured) (*preview.Report, error) {
	versions := &kudov1beta1.OperatorVersionList{}
	if err := cfg.Client.List(ctx, versions, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	operator, err := operatorOfKind(versions.Items, obj)
	if err != nil {
		return nil, err
	}
	r := &preview.Report{Instance: obj.GetName(), Namespace: obj.GetNamespace(), Action: "install"}
	p := newPreviewer(cfg, nil)
	written := obj.DeepCopy()
	if err := objects.ServerSideApply(ctx, p.dryRun, written, kubectlFieldOwner); err != nil {
		return refused(r, err)
	}
	before := &kudov1beta1.Instance{}
	switch err := cfg.Client.Get(ctx, client.ObjectKeyFromObject(obj), before); {
	case apierrors.IsNotFound(err):
		before = nil
	case err != nil:
		return refused(r, err)
	default:
		if err := clientutil.ReadRecord(ctx, cfg.Client, before); err != nil {
			return nil, err
		}
	}
	current := ""
	if before != nil {
		current = before.Spec.OperatorVersion.Name
	}
	desired, ov, err := typedapi.InstanceOf(ctx, written, current, operator, versions.Items)
	if ov != nil {
		r.OperatorVersion = ov.Name
	}
	if err != nil {
		return refused(r, err)
	}
	after := desired
	if before != nil {
		r.Action = "update"
		if current != ov.Name {
			r.Action = "upgrade"
		}
		after = before.DeepCopy()
		after.Spec.OperatorVersion.Name = desired.Spec.OperatorVersion.Name
		after.Spec.Parameters, after.Spec.SecretParameters = desired.Spec.Parameters, desired.Spec.SecretParameters
		after.Spec.ServiceAccountName = desired.Spec.ServiceAccountName
	}
	return p.report(ctx, r.Action, before, after, ov, 0)
}

// operatorOfKind is the package whose typed API obj's kind is, among the
// OperatorVersions of its namespace.
func operatorOfKind(versions []kudov1beta1.OperatorVersion, obj *unstructured.Unstructured) (string, error) {
	gvk := obj.GroupVersionKind()
	for i := range versions {
		names, err := typedapi.NamesOf(versions[i].Spec.Operator.Name, versions[i].Spec.TypedAPI)
		if err == nil && names.Group == gvk.Group && names.Kind == gvk.Kind {
			return versions[i].Spec.Operator.Name, nil
		}
	}
	return "", fmt.Errorf("%s is the typed API of no package installed in namespace %s (docs/typed-apis.md)",
		gvk.GroupKind(), obj.GetNamespace())
}
