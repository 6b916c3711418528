// Package webhookcert makes kudo-ng's admission webhooks trust a CA of its
// own, for clusters without cert-manager: `kubectl kudo init
// --unsafe-self-signed-webhook-ca`, `make deploy` and `make run`.
package webhookcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InjectCAAnnotation is cert-manager's CA injection, which a trusted CA of
// our own replaces.
const InjectCAAnnotation = "cert-manager.io/inject-ca-from"

const validity = 10 * 365 * 24 * time.Hour

// Bundle is a CA and the serving certificate it signed, PEM-encoded.
type Bundle struct {
	CA, Cert, Key []byte
}

// DNSNames are the names the API server calls a webhook Service by.
func DNSNames(service, namespace string) []string {
	return []string{service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}

// Issue makes a self-signed CA and a serving certificate for the Service.
// The keys are ECDSA P-256: the API server opens a new connection to a
// webhook for each admission beyond the few it keeps, and the handshake
// signs with the serving key, some 30 µs with P-256 against 0.8 ms with
// RSA-2048.
func Issue(service, namespace string, now time.Time) (*Bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kudo-ng-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	names := DNSNames(service, namespace)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Bundle{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// Verify checks that the bundle's certificate serves the Service, signed by
// its CA, for at least another day: a bundle that passes is kept, so that
// pods serving it keep being trusted while a new manager rolls out.
func (b *Bundle) Verify(service, namespace string, now time.Time) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.CA) {
		return errors.New("no CA certificate")
	}
	block, _ := pem.Decode(b.Cert)
	if block == nil {
		return errors.New("no serving certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	_, err = cert.Verify(x509.VerifyOptions{DNSName: DNSNames(service, namespace)[0], Roots: roots, CurrentTime: now.Add(24 * time.Hour)})
	return err
}

// Trust drops cert-manager's objects and makes every webhook configuration
// trust the CA, instead of cert-manager's injection. With a url, each webhook
// calls a manager outside the cluster at that URL instead of its Service, and
// its configuration is renamed so that a local manager and a deployed one
// never both claim the same requests.
func Trust(objs []*unstructured.Unstructured, url string, ca []byte) ([]*unstructured.Unstructured, error) {
	caBundle := base64.StdEncoding.EncodeToString(ca)
	kept := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		// cert-manager's objects give way to our CA; with a URL, the
		// manager runs outside the cluster and its Service has no pods.
		if obj.GroupVersionKind().Group == "cert-manager.io" || (url != "" && obj.GetKind() == "Service") {
			continue
		}
		if err := trust(obj, url, caBundle); err != nil {
			return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		kept = append(kept, obj)
	}
	return kept, nil
}

func trust(obj *unstructured.Unstructured, url, caBundle string) error {
	webhooks, found, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil || !found {
		return err
	}
	for _, w := range webhooks {
		webhook, ok := w.(map[string]any)
		if !ok {
			return errors.New("a webhook is not an object")
		}
		clientConfig, ok := webhook["clientConfig"].(map[string]any)
		if !ok {
			return errors.New("a webhook has no clientConfig")
		}
		if url != "" {
			path, _, _ := unstructured.NestedString(clientConfig, "service", "path")
			delete(clientConfig, "service")
			clientConfig["url"] = url + path
		}
		clientConfig["caBundle"] = caBundle
	}
	if err := unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks"); err != nil {
		return err
	}
	annotations := obj.GetAnnotations()
	delete(annotations, InjectCAAnnotation)
	obj.SetAnnotations(annotations)
	if url != "" {
		obj.SetName("kudo-" + obj.GetName())
	}
	return nil
}
