// Package clientutil gives the cluster verbs of kubectl-kudo their client
// and namespace from the shared kubectl flags.
package clientutil

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	return s
}()

// ParameterFlags adds -p and -P, the parameter flags of install, update and upgrade.
func ParameterFlags(f *pflag.FlagSet, values, files *[]string) {
	f.StringArrayVarP(values, "parameter", "p", nil, "Parameter: NAME=VALUE, NAME=[a,b] or NAME={k1:v1,k2:v2}")
	f.StringArrayVarP(files, "parameter-file", "P", nil, "YAML file of parameter values")
}

// New returns a client of the cluster the flags name, and the namespace.
func New(flags *genericclioptions.ConfigFlags) (client.Client, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach a cluster: %w", err)
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	return c, ns, err
}
