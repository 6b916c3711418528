// Package clientutil gives the cluster verbs of kubectl-kudo their client
// and namespace from the shared kubectl flags, the flags they share, and the
// reads they share.
package clientutil

import (
	"context"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Scheme knows Kubernetes' kinds and kudo.dev's.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kudov1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kudov1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// New returns a client of the cluster the flags name, and the namespace. Its
// writes are sent again while the API server cannot reach kudo-ng's
// admission webhooks, for which it admitted nothing.
func New(flags *genericclioptions.ConfigFlags) (client.Client, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach a cluster: %w", err)
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	cfg.WarningHandlerWithContext = newWarnings(os.Stderr)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, "", err
	}
	return retryUnreachableWebhooks(c, os.Stderr), ns, nil
}

// GetInstance reads the Instance and its OperatorVersion, with errors that say
// what to do.
func GetInstance(ctx context.Context, c client.Reader, ns, name string) (*kudov1beta1.Instance, *kudov1beta1.OperatorVersion, error) {
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, i); err != nil {
		return nil, nil, notFound(err, "Instance %s not found in namespace %s: see kubectl kudo get instances -n %s", name, ns, ns)
	}
	if err := ReadRecord(ctx, c, i); err != nil {
		return nil, nil, err
	}
	ov := &kudov1beta1.OperatorVersion{}
	if err := c.Get(ctx, i.OperatorVersionKey(), ov); err != nil {
		return nil, nil, notFound(err, "OperatorVersion %s of Instance %s not found in namespace %s",
			i.Spec.OperatorVersion.Name, name, i.OperatorVersionNamespace())
	}
	return i, ov, nil
}

// notFound says what is missing when err is a not-found, and passes any
// other error on.
func notFound(err error, format string, args ...any) error {
	if client.IgnoreNotFound(err) == nil {
		return fmt.Errorf(format, args...)
	}
	return err
}

// ReadFile reads file, or in when file is "-", and at most limit bytes and
// one more: the caller's bound (yamlbound) refuses what passes it, naming
// the limit.
func ReadFile(file string, in io.Reader, limit int) ([]byte, error) {
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return data, nil
}
