// Package remote reads the kubeconfigs that Instances name to reach
// another cluster (spec.kubeConfig), and keeps a client and a cache for each
// such cluster while an Instance names it.
package remote

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// MaxKubeConfigBytes bounds a kubeconfig: a tenant writes it.
const MaxKubeConfigBytes = 256 << 10

// RequestTimeout bounds each request to a remote cluster, so that one that
// is gone keeps a reconcile waiting no longer.
const RequestTimeout = 30 * time.Second

// Policy is where the manager may connect: the API servers an admin
// allowed (--remote-clusters), by host and port. None: no remote cluster.
type Policy struct {
	Servers []string
}

// Allows says whether the API server at server may be reached.
func (p Policy) Allows(server string) bool {
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" {
		return false
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	return slices.Contains(p.Servers, host)
}

// RESTConfig is the client configuration of the kubeconfig data, read from
// source (the Secret and key, which every error names), of the cluster its
// current context names. It refuses what would make the manager run a
// program (exec and auth-provider plugins) or read a file of its own
// (paths to tokens, certificates and keys), and a server the policy does
// not allow.
func RESTConfig(data []byte, source string, policy Policy) (*rest.Config, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: no kubeconfig", source)
	}
	if err := yamlbound.Check(data, yamlbound.Within(MaxKubeConfigBytes)); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a kubeconfig: %w", source, err)
	}
	context, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("%s: its current-context %q is not one of its contexts", source, cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[context.Cluster]
	if !ok {
		return nil, fmt.Errorf("%s: context %q names cluster %q, which it does not hold", source, cfg.CurrentContext, context.Cluster)
	}
	user, ok := cfg.AuthInfos[context.AuthInfo]
	if !ok {
		return nil, fmt.Errorf("%s: context %q names user %q, which it does not hold", source, cfg.CurrentContext, context.AuthInfo)
	}
	if err := safe(cluster, user); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if !policy.Allows(cluster.Server) {
		return nil, fmt.Errorf("%s: the manager may not connect to %s: an admin allows API servers with --remote-clusters",
			source, cluster.Server)
	}
	only := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{context.Cluster: cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{context.AuthInfo: user},
		Contexts:       map[string]*clientcmdapi.Context{cfg.CurrentContext: context},
		CurrentContext: cfg.CurrentContext,
	}
	rc, err := clientcmd.NewDefaultClientConfig(only, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	rc.Timeout = RequestTimeout
	return rc, nil
}

// errNotSafe is what safe refuses.
var errNotSafe = errors.New("a kubeconfig of an Instance may hold credentials only, not")

// safe refuses what a kubeconfig can make its reader do beyond sending
// credentials: run a program, read a file, skip TLS verification.
func safe(cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) error {
	var refused []string
	for what, set := range map[string]bool{
		"an exec plugin (users[].user.exec)":                                      user.Exec != nil,
		"an auth-provider plugin (users[].user.auth-provider)":                    user.AuthProvider != nil,
		"a token file (users[].user.tokenFile)":                                   user.TokenFile != "",
		"a client certificate file (users[].user.client-certificate)":             user.ClientCertificate != "",
		"a client key file (users[].user.client-key)":                             user.ClientKey != "",
		"a certificate authority file (clusters[].cluster.certificate-authority)": cluster.CertificateAuthority != "",
		"insecure-skip-tls-verify (clusters[].cluster)":                           cluster.InsecureSkipTLSVerify,
		"a proxy (clusters[].cluster.proxy-url)":                                  cluster.ProxyURL != "",
	} {
		if set {
			refused = append(refused, what)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	slices.Sort(refused)
	return fmt.Errorf("%w %s", errNotSafe, strings.Join(refused, ", "))
}
