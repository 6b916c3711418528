package remote

import (
	"strings"
	"testing"
)

// kubeconfig is a kubeconfig of one cluster and user; user and cluster are
// the lines of their entries beyond the server and a token.
func kubeconfig(server, cluster, user string) string {
	return `apiVersion: v1
kind: Config
current-context: remote
contexts:
- name: remote
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster:
    server: ` + server + `
` + cluster + `
users:
- name: u
  user:
    token: abc
` + user
}

const source = "Secret team-a/prod-kubeconfig key value"

var allowed = Policy{Servers: []string{"prod.example.com:6443", "10.0.0.5:443"}}

func TestRESTConfig(t *testing.T) {
	tests := []struct {
		name       string
		kubeconfig string
		want       string // the error's text after the source; "" for none
	}{
		{"a token for an allowed server", kubeconfig("https://prod.example.com:6443", "", ""), ""},
		{"a server on the default port", kubeconfig("https://10.0.0.5", "", ""), ""},
		{"a server no admin allowed", kubeconfig("https://kubernetes.default.svc", "", ""),
			"the manager may not connect to https://kubernetes.default.svc: an admin allows API servers with --remote-clusters"},
		{"plain HTTP", kubeconfig("http://prod.example.com:6443", "", ""),
			"the manager may not connect to http://prod.example.com:6443: an admin allows API servers with --remote-clusters"},
		{"an exec plugin", kubeconfig("https://prod.example.com:6443", "", "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}"),
			"a kubeconfig of an Instance may hold credentials only, not an exec plugin (users[].user.exec)"},
		{"a token file of the manager's", kubeconfig("https://prod.example.com:6443", "", "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"),
			"a kubeconfig of an Instance may hold credentials only, not a token file (users[].user.tokenFile)"},
		{"skipping TLS verification", kubeconfig("https://prod.example.com:6443", "    insecure-skip-tls-verify: true", ""),
			"a kubeconfig of an Instance may hold credentials only, not insecure-skip-tls-verify (clusters[].cluster)"},
		{"a proxy", kubeconfig("https://prod.example.com:6443", "    proxy-url: http://10.0.0.9:3128", ""),
			"a kubeconfig of an Instance may hold credentials only, not a proxy (clusters[].cluster.proxy-url)"},
		{"no current context", strings.Replace(kubeconfig("https://prod.example.com:6443", "", ""), "current-context: remote", "current-context: other", 1),
			`its current-context "other" is not one of its contexts`},
		{"not YAML", "{", "not a kubeconfig"},
		{"nothing", "", "no kubeconfig"},
		{"aliases that expand past the bound", "a: &a [" + strings.Repeat("x,", 500) + "]\nb: [" + strings.Repeat("*a,", 20000) + "]\n",
			"its aliases (*name) expand it to more than 256 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := RESTConfig([]byte(tt.kubeconfig), source, allowed)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("RESTConfig: %v", err)
			case tt.want == "":
				if cfg.BearerToken != "abc" || cfg.Timeout != RequestTimeout {
					t.Errorf("RESTConfig = %+v, want the token and a timeout", cfg)
				}
			case err == nil:
				t.Fatalf("RESTConfig accepted it, want %q", tt.want)
			case !strings.HasPrefix(err.Error(), source+": ") || !strings.Contains(err.Error(), tt.want):
				t.Errorf("RESTConfig = %q, want %q after the source", err, tt.want)
			}
		})
	}
}

func TestPolicyAllowsOnlyTheServersListed(t *testing.T) {
	for server, want := range map[string]bool{
		"https://prod.example.com:6443":      true,
		"https://prod.example.com:6443/":     true,
		"https://prod.example.com":           false,
		"https://prod.example.com.evil:6443": false,
		"https://10.0.0.5:443":               true,
		"https://10.0.0.5":                   true,
		"https://user@10.0.0.5":              true,
		"http://10.0.0.5:443":                false,
		"10.0.0.5:443":                       false,
		"":                                   false,
	} {
		if got := allowed.Allows(server); got != want {
			t.Errorf("Allows(%q) = %v, want %v", server, got, want)
		}
	}
	if (Policy{}).Allows("https://prod.example.com:6443") {
		t.Error("a policy of no server allows one")
	}
}

// FuzzRESTConfig: whatever a Secret holds, the manager either refuses it or
// gets a config for a server the policy allows that runs no program, reads
// no file and skips no TLS check.
func FuzzRESTConfig(f *testing.F) {
	f.Add([]byte(kubeconfig("https://prod.example.com:6443", "", "")))
	f.Add([]byte(kubeconfig("https://prod.example.com:6443", "    insecure-skip-tls-verify: true", "")))
	f.Add([]byte(kubeconfig("https://prod.example.com:6443", "", "    exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}")))
	f.Add([]byte(kubeconfig("https://prod.example.com:6443", "    certificate-authority: /etc/ssl/ca.pem", "    tokenFile: /var/run/token")))
	f.Add([]byte("a: &a [x, x]\nb: [*a, *a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := RESTConfig(data, source, allowed)
		if err != nil {
			return
		}
		switch {
		case !allowed.Allows(cfg.Host):
			t.Fatalf("a config for %q, which the policy does not allow", cfg.Host)
		case cfg.ExecProvider != nil || cfg.AuthProvider != nil:
			t.Fatal("a config that runs a program or an auth provider")
		case cfg.BearerTokenFile != "" || cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "":
			t.Fatal("a config that reads the manager's files")
		case cfg.Insecure || cfg.Proxy != nil:
			t.Fatal("a config that skips TLS checks or goes through a proxy")
		}
	})
}
