// Package initcmd is `kubectl kudo init`: install kudo-ng — its CRDs, or
// everything `make deploy` installs — into a cluster, or print it, and
// upgrade an installed manager.
package initcmd

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/config"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/webhookcert"
)

// The names config/default gives the manager's objects.
const (
	namespace      = "kudo-system"
	deploymentName = "kudo-controller-manager"
	webhookService = "kudo-webhook-service"
	webhookSecret  = "webhook-server-cert"
	managerName    = "manager"
	deploymentKind = "Deployment"
)

// Options are the flags of init.
type Options struct {
	DryRun  bool
	Output  string
	CRDOnly bool
	// Image and ImagePullPolicy replace the manager container's; Version
	// replaces only its tag.
	Image           string
	Version         string
	ImagePullPolicy string
	// ServiceAccount is the manager's service account, instead of
	// kudo-controller-manager.
	ServiceAccount string
	// ClientOnly only configures $KUDO_HOME; Verify only checks an
	// installed kudo-ng.
	ClientOnly, Verify bool
	// Replicas replaces the manager Deployment's replicas when set.
	Replicas *int32
	// SelfSignedCA makes the webhooks trust a CA of init's own rather than
	// cert-manager's.
	SelfSignedCA bool
	// Upgrade allows changing the image of an installed manager.
	Upgrade     bool
	Wait        bool
	WaitTimeout time.Duration
}

// NewCmd returns the init command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	var waitSeconds int64
	var replicas int32
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install kudo-ng's CRDs, RBAC, webhooks and manager, or print them",
		Long: `Install kudo-ng's CRDs, RBAC, webhooks and manager into the cluster.

The admission webhooks need a serving certificate: cert-manager issues it where
it is installed; --unsafe-self-signed-webhook-ca makes one here instead, signed
by a CA of its own that the webhooks trust.

Where KUDO v0.19 runs, --upgrade replaces it: it deletes KUDO's manager and
waits until its pods are gone, deletes its webhook, certificate and
cluster-admin binding, and applies kudo-ng's CRDs over KUDO's (every stored
Instance, OperatorVersion and Operator stays). kudo-ng's manager then adopts
each Instance as KUDO left it, without running a plan.`,
		Example: `  kubectl kudo init --unsafe-self-signed-webhook-ca --wait
  kubectl kudo init --upgrade --kudo-image ghcr.io/kudo-ng/kudo:v0.2.0 --wait
  kubectl kudo init --upgrade --unsafe-self-signed-webhook-ca --wait   # replace KUDO v0.19
  kubectl kudo init --replicas 1
  kubectl kudo init --dry-run -o yaml
  kubectl kudo init --crd-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.WaitTimeout = time.Duration(waitSeconds) * time.Second
			opts.Replicas = &replicas
			if err := checkKUDOFlags(opts); err != nil {
				return err
			}
			if opts.Output == "" {
				if err := configureHome(streams.Out); err != nil {
					return err
				}
			}
			if opts.ClientOnly {
				return nil
			}
			var c client.Client
			// --upgrade --dry-run looks for KUDO, to say what it would delete.
			if !opts.DryRun || opts.Upgrade {
				var err error
				if c, _, err = clientutil.New(flags); err != nil {
					return err
				}
			}
			if opts.Verify {
				return verifyInstallation(cmd.Context(), c, streams.Out)
			}
			return Run(cmd.Context(), c, streams, opts)
		},
	}
	addFlags(cmd.Flags(), opts, &replicas, &waitSeconds)
	return cmd
}

// addFlags binds the flags of init to opts, but --replicas and
// --wait-timeout to replicas and waitSeconds, which the command turns into
// opts.Replicas and opts.WaitTimeout.
func addFlags(f *pflag.FlagSet, opts *Options, replicas *int32, waitSeconds *int64) {
	f.BoolVar(&opts.DryRun, "dry-run", false, "Print the manifests instead of applying them (with -o yaml)")
	f.StringVarP(&opts.Output, "output", "o", "", "Output format of --dry-run: yaml")
	f.BoolVar(&opts.CRDOnly, "crd-only", false, "Only the CustomResourceDefinitions")
	f.StringVarP(&opts.Image, "kudo-image", "i", "", "Override the manager's image")
	f.StringVar(&opts.Version, "version", "", "Override the version (the tag) of the manager's image")
	f.StringVar(&opts.ServiceAccount, "service-account", "", "Override the manager's service account, "+defaultServiceAccount)
	f.BoolVarP(&opts.ClientOnly, "client-only", "c", false, "Only configure $KUDO_HOME; install nothing in the cluster")
	f.BoolVar(&opts.Verify, "verify", false, "Verify an installed kudo-ng: its CRDs, its webhooks, its manager")
	f.StringVar(&opts.ImagePullPolicy, "kudo-image-pull-policy", string(corev1.PullAlways),
		"Override the manager image's pull policy: Always, IfNotPresent or Never")
	f.BoolVar(&opts.SelfSignedCA, "unsafe-self-signed-webhook-ca", false,
		"Serve the webhooks with a certificate signed by a self-signed CA instead of cert-manager's")
	f.Int32Var(replicas, "replicas", 2, "How many manager replicas to run: one leads and reconciles, "+
		"all serve the webhooks; with 2 or more, Instances can still be changed while one restarts")
	f.BoolVar(&opts.Upgrade, "upgrade", false,
		"Upgrade an installed manager, to the image of --kudo-image; or replace KUDO's, adopting its Instances without running a plan")
	f.BoolVarP(&opts.Wait, "wait", "w", false, "Wait until the manager is rolled out and ready")
	f.Int64Var(waitSeconds, "wait-timeout", 300, "How many seconds --wait waits")
}

// Run prints or server-side applies the manifests.
func Run(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, opts *Options) error {
	if err := checkValues(opts); err != nil {
		return err
	}
	kudo, err := kudoToReplace(ctx, c, opts)
	if err != nil {
		return err
	}
	objs, err := manifests(opts.CRDOnly)
	if err != nil {
		return err
	}
	if !opts.CRDOnly {
		if objs, err = prepare(ctx, c, objs, opts); err != nil {
			return err
		}
	}
	if len(kudo) > 0 {
		if opts.DryRun {
			describeTakeover(streams.Out, kudo)
		} else if err := removeKUDO(ctx, c, streams.Out, kudo, cmp.Or(opts.WaitTimeout, 5*time.Minute)); err != nil {
			return err
		}
	}
	for _, obj := range objs {
		if opts.DryRun {
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(streams.Out, "---\n%s", b)
			continue
		}
		if err := objects.ServerSideApply(ctx, c, obj, objects.CLIFieldOwner); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(streams.Out, "%s/%s applied\n", obj.GetKind(), obj.GetName())
	}
	if opts.Wait && !opts.DryRun && !opts.CRDOnly {
		return waitForManager(ctx, c, streams, opts.WaitTimeout)
	}
	return nil
}

// checkValues refuses flag values init cannot act on.
func checkValues(opts *Options) error {
	if opts.DryRun && opts.Output != "yaml" {
		return fmt.Errorf("--dry-run prints the manifests: add -o yaml")
	}
	switch corev1.PullPolicy(opts.ImagePullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever, "":
	default:
		return fmt.Errorf("--kudo-image-pull-policy %q is not Always, IfNotPresent or Never", opts.ImagePullPolicy)
	}
	if opts.Replicas != nil && *opts.Replicas < 1 {
		return fmt.Errorf("--replicas %d: run at least 1 manager replica; 2, the default, keep the webhooks answering while one restarts",
			*opts.Replicas)
	}
	return nil
}

// kudoToReplace is the KUDO installed in the cluster, none without a
// client, and refuses to go on unless the flags replace it with a manager.
func kudoToReplace(ctx context.Context, c client.Client, opts *Options) ([]foundKUDO, error) {
	if c == nil {
		return nil, nil
	}
	kudo, err := findKUDO(ctx, c)
	if err != nil {
		return nil, err
	}
	switch {
	case len(kudo) > 0 && !opts.Upgrade:
		return nil, fmt.Errorf("KUDO is installed (%s): pass --upgrade to replace it with kudo-ng, which adopts its Instances "+
			"without running a plan (--upgrade --dry-run -o yaml shows what changes)", kudo[0])
	case len(kudo) > 0 && opts.CRDOnly:
		return nil, fmt.Errorf("KUDO is installed (%s): --crd-only would leave its Instances with no manager; "+
			"replace it with kubectl kudo init --upgrade", kudo[0])
	}
	return kudo, nil
}

// prepare sets the manager's image and replicas and the webhooks'
// certificate, and refuses to change an installed manager's image without
// --upgrade.
func prepare(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts *Options) ([]*unstructured.Unstructured, error) {
	image, err := configureManager(objs, opts)
	if err != nil {
		return nil, err
	}
	if c != nil && !opts.Upgrade {
		if err := refuseImageChange(ctx, c, image); err != nil {
			return nil, err
		}
	}
	if !opts.SelfSignedCA {
		if c == nil {
			return objs, nil
		}
		return objs, requireCertManager(ctx, c)
	}
	return withSelfSignedCA(ctx, c, objs)
}

// configureManager sets the manager Deployment's image, pull policy and
// replicas and the manager's service account, and returns its image.
func configureManager(objs []*unstructured.Unstructured, opts *Options) (string, error) {
	var image string
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" || obj.GetName() != deploymentName {
			continue
		}
		var err error
		if image, err = setImage(obj, opts.Image, opts.ImagePullPolicy); err != nil {
			return "", err
		}
		if opts.Version != "" {
			if image, err = setImage(obj, imageOfVersion(image, opts.Version), ""); err != nil {
				return "", err
			}
		}
		if opts.Replicas != nil {
			if err := unstructured.SetNestedField(obj.Object, int64(*opts.Replicas), "spec", "replicas"); err != nil {
				return "", err
			}
		}
	}
	if opts.ServiceAccount != "" {
		if err := renameServiceAccount(objs, opts.ServiceAccount); err != nil {
			return "", err
		}
	}
	return image, nil
}

// refuseImageChange refuses to change the image of an installed manager:
// that takes --upgrade.
func refuseImageChange(ctx context.Context, c client.Reader, image string) error {
	installed := &appsv1.Deployment{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deploymentName}, installed)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("looking for an installed manager: %w", err)
	case len(installed.Spec.Template.Spec.Containers) > 0 && installed.Spec.Template.Spec.Containers[0].Image != image:
		return fmt.Errorf("kudo-ng is already installed with image %s: pass --upgrade to change it to %s",
			installed.Spec.Template.Spec.Containers[0].Image, image)
	}
	return nil
}

// requireCertManager refuses a cluster without cert-manager, which would
// issue the webhooks' certificate.
func requireCertManager(ctx context.Context, c client.Reader) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	err := c.Get(ctx, client.ObjectKey{Name: "certificates.cert-manager.io"}, crd)
	if apierrors.IsNotFound(err) {
		return errors.New("cert-manager is not installed, and the webhooks need a certificate: install cert-manager, " +
			"or pass --unsafe-self-signed-webhook-ca")
	}
	return err
}

// withSelfSignedCA makes the webhooks trust init's own CA, and adds the
// Secret that serves them a certificate it signed.
func withSelfSignedCA(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	bundle, err := webhookBundle(ctx, c)
	if err != nil {
		return nil, err
	}
	if objs, err = webhookcert.Trust(objs, "", bundle.CA); err != nil {
		return nil, err
	}
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	secret.SetNamespace(namespace)
	secret.SetName(webhookSecret)
	secret.Object["type"] = string(corev1.SecretTypeTLS)
	secret.Object["data"] = map[string]any{
		corev1.TLSCertKey:       base64.StdEncoding.EncodeToString(bundle.Cert),
		corev1.TLSPrivateKeyKey: base64.StdEncoding.EncodeToString(bundle.Key),
		"ca.crt":                base64.StdEncoding.EncodeToString(bundle.CA),
	}
	return append(objs, secret), nil
}

// setImage sets the manager container's image and pull policy, and returns
// the image.
func setImage(deployment *unstructured.Unstructured, image, pullPolicy string) (string, error) {
	containers, _, err := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return "", err
	}
	for _, item := range containers {
		container, ok := item.(map[string]any)
		if !ok || container["name"] != managerName {
			continue
		}
		if image != "" {
			container["image"] = image
		}
		if pullPolicy != "" {
			container["imagePullPolicy"] = pullPolicy
		}
		image, _ = container["image"].(string)
	}
	return image, unstructured.SetNestedSlice(deployment.Object, containers, "spec", "template", "spec", "containers")
}

// webhookBundle keeps the certificate an earlier init made while it is
// valid, so that the webhooks go on trusting the pods that serve it while a
// new manager rolls out; otherwise it issues one.
func webhookBundle(ctx context.Context, c client.Client) (*webhookcert.Bundle, error) {
	now := time.Now()
	if c != nil {
		secret := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookSecret}, secret)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading the webhooks' certificate: %w", err)
		}
		kept := &webhookcert.Bundle{CA: secret.Data["ca.crt"], Cert: secret.Data[corev1.TLSCertKey], Key: secret.Data[corev1.TLSPrivateKeyKey]}
		if err == nil && kept.Verify(webhookService, namespace, now) == nil {
			return kept, nil
		}
	}
	return webhookcert.Issue(webhookService, namespace, now)
}

// waitForManager waits until the manager Deployment has rolled out: every
// replica runs the current template and is available.
func waitForManager(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, timeout time.Duration) error {
	key := client.ObjectKey{Namespace: namespace, Name: deploymentName}
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, key, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		st := d.Status
		last = fmt.Sprintf("%d of %d replicas updated, %d available, %d in all", st.UpdatedReplicas, want, st.AvailableReplicas, st.Replicas)
		return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("the manager (deployment %s/%s) did not roll out in %s: %s", namespace, deploymentName, timeout, last)
	}
	// A ready pod is not yet an admission the API server can make: its
	// Service's endpoints and the node's proxy rules follow it.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		probe := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "kudo-init-probe"}}
		err := c.Create(clientutil.Probe(ctx), probe, client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			last = err.Error()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the manager's webhooks did not answer in %s: %s", timeout, last)
	}
	_, _ = fmt.Fprintf(streams.Out, "kudo-ng is ready: deployment %s/%s rolled out, its webhooks answer\n", namespace, deploymentName)
	return nil
}

func manifests(crdOnly bool) ([]*unstructured.Unstructured, error) {
	var docs []byte
	if crdOnly {
		crds, err := config.CRDs()
		if err != nil {
			return nil, err
		}
		docs = bytes.Join(crds, []byte("\n---\n"))
	} else {
		var err error
		if docs, err = config.Release(); err != nil {
			return nil, err
		}
	}
	return decode(docs)
}

// decode reads a multi-document YAML into objects.
func decode(docs []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(docs)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
