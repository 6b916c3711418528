package main

import (
	"crypto/tls"
	"flag"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func parse(t *testing.T, args ...string) *options {
	t.Helper()
	o := &options{}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestManagerOptions(t *testing.T) {
	o := parse(t, "--leader-election-namespace=kudo-system", "--sync-period=1h", "--webhook-port=9444")
	got := o.managerOptions(scheme)
	if got.Scheme != scheme || got.HealthProbeBindAddress != ":8081" || got.PprofBindAddress != "" {
		t.Errorf("scheme, probe or pprof address: %+v", got)
	}
	if m := got.Metrics; m.BindAddress != "0" || !m.SecureServing || m.FilterProvider == nil || len(m.TLSOpts) != 1 {
		t.Errorf("metrics = %+v, want off, and HTTPS behind authorization when on", m)
	}
	if !got.LeaderElection || got.LeaderElectionID != "manager.kudo.dev" || got.LeaderElectionNamespace != "kudo-system" {
		t.Errorf("leader election = %v %q %q", got.LeaderElection, got.LeaderElectionID, got.LeaderElectionNamespace)
	}
	if got.Cache.SyncPeriod == nil || *got.Cache.SyncPeriod != time.Hour || got.Cache.DefaultTransform == nil {
		t.Errorf("cache = %+v, want a sync period of 1h and the trimming transform", got.Cache)
	}
	if got.Client.Cache == nil || !got.Client.Cache.Unstructured {
		t.Error("unstructured objects must be read from the cache")
	}
	w := got.WebhookServer.(*webhook.DefaultServer).Options
	if w.Port != 9444 || len(w.TLSOpts) != 1 {
		t.Errorf("webhook server = %+v", w)
	}
	c := &tls.Config{}
	w.TLSOpts[0](c)
	if len(c.NextProtos) != 1 || c.NextProtos[0] != "http/1.1" {
		t.Errorf("NextProtos = %v, want HTTP/1.1 only without --enable-http2", c.NextProtos)
	}
	if http2 := parse(t, "--enable-http2").managerOptions(scheme); len(http2.Metrics.TLSOpts) != 0 {
		t.Error("--enable-http2 must leave the TLS config alone")
	}
}
