// Package localcluster starts and stops the project's local control plane
// (hack/cluster) for end-to-end tests: a cluster of the test's own, on ports
// of its own, so tests never touch the developer's `make cluster-up` one.
package localcluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Cluster is a running local control plane.
type Cluster struct {
	// Root is the repository's root.
	Root       string
	Dir        string
	PortBase   int
	Kubeconfig string
	Config     *rest.Config
	Client     client.WithWatch
	// env is what the cluster was started with beyond its directory and
	// ports, e.g. CLUSTER_NODES=0.
	env []string
}

// Start brings a cluster up in bin/<name> with `make cluster-up`, which
// also gets env (KEY=value: CLUSTER_NODES, OLM...).
func Start(name string, portBase int, env ...string) (*Cluster, error) {
	root, err := repositoryRoot()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Root: root, Dir: filepath.Join(root, "bin", name), PortBase: portBase, env: env}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := kudov1beta1.AddToScheme(scheme.Scheme); err != nil {
		return nil, err
	}
	if err := kudov1alpha1.AddToScheme(scheme.Scheme); err != nil {
		return nil, err
	}
	if err := c.up(); err != nil {
		return nil, err
	}
	return c, nil
}

// up runs `make cluster-up` and makes the clients of what it started.
func (c *Cluster) up() error {
	if err := c.Make("cluster-up"); err != nil {
		// What started must not outlive the test: its ports would keep the
		// next cluster from starting. cluster-up has printed its logs' tail.
		_ = c.Stop()
		return err
	}
	var err error
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	c.Client, err = client.NewWithWatch(c.Config, client.Options{Scheme: scheme.Scheme})
	return err
}

// Stop brings the cluster down with `make cluster-down`.
func (c *Cluster) Stop() error { return c.Make("cluster-down") }

// Restart brings the cluster down, its data removed, and a new one up in
// its place, on the same ports and with new clients.
func (c *Cluster) Restart() error {
	if err := c.Stop(); err != nil {
		return err
	}
	return c.up()
}

// Env is the environment of commands run against the cluster.
func (c *Cluster) Env() []string {
	env := append(os.Environ(), "CLUSTER_DIR="+c.Dir, fmt.Sprintf("CLUSTER_PORT_BASE=%d", c.PortBase), "KUBECONFIG="+c.Kubeconfig)
	return append(env, c.env...)
}

// Make runs targets of the project's Makefile against the cluster.
func (c *Cluster) Make(args ...string) error {
	_, err := c.MakeOutput(args...)
	return err
}

// MakeOutput is Make, with what the targets print.
func (c *Cluster) MakeOutput(args ...string) (string, error) {
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", c.Root}, args...)...)
	cmd.Env = c.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("make %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// RegistryCA is the file of the CA the cluster's registry's certificate is of.
func (c *Cluster) RegistryCA() string { return filepath.Join(c.Dir, "pki", "registry-ca.crt") }

// RegistryTransport speaks to the cluster's registry, trusting its CA.
func (c *Cluster) RegistryTransport() (*http.Transport, error) {
	ca, err := os.ReadFile(c.RegistryCA())
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", c.RegistryCA())
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return t, nil
}

// Kudo runs the kubectl-kudo plugin, built from the repository on first
// use, against the cluster in namespace ns, with a KUDO_HOME of the cluster's.
func (c *Cluster) Kudo(ns string, args ...string) (string, error) {
	cmd, err := c.KudoCommand(ns, args...)
	if err != nil {
		return err.Error(), err
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// KudoCommand is the command Kudo runs, for a caller that reads its output
// while it runs.
func (c *Cluster) KudoCommand(ns string, args ...string) (*exec.Cmd, error) {
	bin := filepath.Join(c.Dir, "kubectl-kudo")
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-kudo")
		build.Dir = c.Root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building kubectl-kudo: %w\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns}, args...)...)
	cmd.Env = append(os.Environ(), "KUDO_HOME="+filepath.Join(c.Dir, "kudo-home"))
	return cmd, nil
}

// Kubectl runs the toolchain's kubectl against the cluster.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// Diagnose is what a failed spec's report needs to tell which component
// stalled: the workloads, pods, claims and events of its namespaces, the
// volumes and nodes, and the tail of each component's log.
func (c *Cluster) Diagnose(namespaces ...string) (objects, logs string) {
	var b strings.Builder
	for _, ns := range namespaces {
		out, _ := c.Kubectl("get", "statefulsets,deployments,pods,pvc,events", "-n", ns, "-o", "wide")
		fmt.Fprintf(&b, "namespace %s:\n%s\n", ns, out)
	}
	for _, ns := range namespaces {
		out, _ := c.Kubectl("get", "instances", "-n", ns, "-o", "yaml")
		fmt.Fprintf(&b, "instances of namespace %s:\n%s\n", ns, out)
	}
	out, _ := c.Kubectl("get", "pv,nodes", "-o", "wide")
	b.WriteString(out)
	tails, _ := exec.Command("bash", "-c", "tail -n 40 "+c.Dir+"/logs/*.log").CombinedOutput()
	// The manager's pods, where a spec runs it in the cluster: the current
	// containers and those they replaced.
	for _, previous := range []string{"--previous=false", "--previous=true"} {
		pods, err := c.Kubectl("logs", "-n", "kudo-system", "-l", "control-plane=controller-manager", "--prefix", "--tail=2000", previous)
		if err == nil {
			tails = append(tails, fmt.Sprintf("\nmanager pods' logs (%s):\n%s", previous, pods)...)
		}
	}
	return b.String(), string(tails)
}

// ProcessesUnder lists the processes whose command line names a path under dir.
func ProcessesUnder(dir string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if line := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})); strings.Contains(line, dir+"/") {
			found = append(found, fmt.Sprintf("%s: %s", e.Name(), line))
		}
	}
	return found, nil
}

func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "PROJECT")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no PROJECT file above the working directory")
		}
		dir = parent
	}
}
