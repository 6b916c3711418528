// Command webhookca makes kudo-ng's admission webhook configurations trust a
// CA of our own, for clusters without cert-manager.
//
// With --url it rewrites config/webhook/manifests.yaml to call a manager
// running outside the cluster (`make run`, `make demo`, the e2e suite): each
// webhook's service becomes a URL on that manager. Without it, it filters the
// output of `kustomize build config/default` for `make deploy`: cert-manager's
// Issuer and Certificate are dropped, and the webhooks keep their service but
// get the CA in caBundle instead of cert-manager's CA-injection annotation.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/webhookcert"
)

func main() {
	manifests := flag.String("manifests", "-", "Manifests to rewrite; - reads standard input.")
	url := flag.String("url", "", "Where a manager outside the cluster serves its webhooks, e.g. https://127.0.0.1:9443.")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the manager's serving certificate.")
	flag.Parse()
	if err := run(*manifests, *url, *caFile, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webhookca:", err)
		os.Exit(1)
	}
}

func run(manifests, url, caFile string, out io.Writer) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	var data []byte
	if manifests == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(manifests)
	}
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return err
		}
		if obj.Object != nil {
			objs = append(objs, obj)
		}
	}
	if objs, err = webhookcert.Trust(objs, url, ca); err != nil {
		return err
	}
	for _, obj := range objs {
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
