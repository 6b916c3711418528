package cluster

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("The cluster's aggregation layer", func() {
	// An aggregated API server (OLM's package server) reads the CA of the
	// API server's proxy client here; without it, it takes every request
	// the API server proxies as anonymous and refuses it.
	It("publishes the front proxy's CA and headers to aggregated API servers", func() {
		cm := &corev1.ConfigMap{}
		key := client.ObjectKey{Namespace: "kube-system", Name: "extension-apiserver-authentication"}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(context.Background(), key, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("requestheader-client-ca-file", ContainSubstring("BEGIN CERTIFICATE")))
			g.Expect(cm.Data).To(HaveKeyWithValue("requestheader-allowed-names", ContainSubstring("front-proxy-client")))
			g.Expect(cm.Data).To(HaveKeyWithValue("requestheader-username-headers", ContainSubstring("X-Remote-User")))
		}).Should(Succeed())
	})
})
