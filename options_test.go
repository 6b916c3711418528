package main

import (
	"context"
	"crypto/tls"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
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
	if got.Cache.SyncPeriod == nil || *got.Cache.SyncPeriod != time.Hour {
		t.Errorf("cache = %+v, want a sync period of 1h", got.Cache)
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

// TestShards: the manager without --shard reconciles the Instances without
// the shard label; one with --shard those labelled with it, with a leader
// election of its own.
func TestShards(t *testing.T) {
	tests := []struct {
		args       []string
		selector   string
		leaderID   string
		wantSelect map[string]string
		wantSkip   map[string]string
		// objects is the selector of the objects the cache holds; "" every object.
		objects string
	}{
		{nil, "!sharding.kudo.dev/key", "manager.kudo.dev",
			map[string]string{"app": "a"}, map[string]string{kudov1beta1.ShardLabel: "one"}, ""},
		{[]string{"--sharded"}, "!sharding.kudo.dev/key", "manager.kudo.dev",
			map[string]string{"app": "a"}, map[string]string{kudov1beta1.ShardLabel: "one"}, "!sharding.kudo.dev/key"},
		{[]string{"--shard=one"}, "sharding.kudo.dev/key=one", "manager-one.kudo.dev",
			map[string]string{kudov1beta1.ShardLabel: "one"}, map[string]string{kudov1beta1.ShardLabel: "two"}, "sharding.kudo.dev/key=one"},
	}
	for _, tt := range tests {
		o := parse(t, tt.args...)
		if err := o.validate(); err != nil {
			t.Fatal(err)
		}
		got := o.managerOptions(scheme)
		var selector, rollouts cache.ByObject
		for obj, by := range got.Cache.ByObject {
			switch obj.(type) {
			case *kudov1beta1.Instance:
				selector = by
			case *kudov1alpha1.Rollout:
				rollouts = by
			}
		}
		if rollouts.Label == nil || rollouts.Label.String() != tt.selector {
			t.Errorf("%v: Rollout selector %v, want the Instances' %s: a Rollout moves its shard's Instances", tt.args, rollouts.Label, tt.selector)
		}
		if selector.Label == nil || selector.Label.String() != tt.selector {
			t.Errorf("%v: Instance selector %v, want %s", tt.args, selector.Label, tt.selector)
			continue
		}
		if !selector.Label.Matches(labels.Set(tt.wantSelect)) || selector.Label.Matches(labels.Set(tt.wantSkip)) {
			t.Errorf("%v: selector %s selects the wrong Instances", tt.args, selector.Label)
		}
		if got.LeaderElectionID != tt.leaderID {
			t.Errorf("%v: leader election %q, want %q", tt.args, got.LeaderElectionID, tt.leaderID)
		}
		objects := ""
		if got.Cache.DefaultLabelSelector != nil {
			objects = got.Cache.DefaultLabelSelector.String()
		}
		if objects != tt.objects {
			t.Errorf("%v: objects cached by %q, want %q", tt.args, objects, tt.objects)
		}
	}
	if err := parse(t, "--shard=one", "--sharded").validate(); err == nil {
		t.Error("--sharded with --shard is accepted")
	}
	if err := parse(t, "--shard=no spaces").validate(); err == nil {
		t.Error("--shard with a value no label can have is accepted")
	}
}

// TestRenderLimits: the render limits default to render.DefaultLimits, the
// flags set them, and limits that would refuse every template are refused.
func TestRenderLimits(t *testing.T) {
	if got := parse(t).renderLimits; got != render.DefaultLimits {
		t.Errorf("default render limits = %+v, want %+v", got, render.DefaultLimits)
	}
	want := render.Limits{MaxOutput: 1 << 20, Timeout: 500 * time.Millisecond}
	if got := parse(t, "--render-max-bytes=1048576", "--render-timeout=500ms").renderLimits; got != want {
		t.Errorf("render limits = %+v, want %+v", got, want)
	}
	for _, args := range [][]string{{"--render-max-bytes=0"}, {"--render-timeout=0s"}} {
		if err := parse(t, args...).validate(); err == nil {
			t.Errorf("%v is accepted", args)
		}
	}
}

// TestMemoryLimitRatio: the soft memory limit is a fraction of the
// container's, 0.9 unless set; 0 turns it off.
func TestMemoryLimitRatio(t *testing.T) {
	if got := parse(t).memoryLimitRatio; got != 0.9 {
		t.Errorf("default --memory-limit-ratio = %v, want 0.9", got)
	}
	for _, ratio := range []string{"0", "0.75", "1"} {
		if err := parse(t, "--memory-limit-ratio="+ratio).validate(); err != nil {
			t.Errorf("--memory-limit-ratio=%s: %v", ratio, err)
		}
	}
	for _, ratio := range []string{"-0.1", "1.5"} {
		if err := parse(t, "--memory-limit-ratio="+ratio).validate(); err == nil {
			t.Errorf("--memory-limit-ratio=%s is accepted", ratio)
		}
	}
}

// TestMaskKey: the mask key's Secret is in the manager's namespace, the one
// its service account's namespace file names, or kudo-system outside a
// cluster, unless --mask-key-namespace names another.
func TestMaskKey(t *testing.T) {
	inCluster := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(inCluster, []byte("operators"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "absent")
	tests := []struct {
		name string
		args []string
		file string
		want types.NamespacedName
	}{
		{"in a cluster, the manager's namespace", nil, inCluster, types.NamespacedName{Namespace: "operators", Name: "kudo-ng-mask-key"}},
		{"outside a cluster, make deploy's", nil, outside, types.NamespacedName{Namespace: "kudo-system", Name: "kudo-ng-mask-key"}},
		{"the flags' wherever it runs", []string{"--mask-key-namespace=keys", "--mask-key-secret=masks"}, inCluster,
			types.NamespacedName{Namespace: "keys", Name: "masks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parse(t, tt.args...)
			if err := o.validate(); err != nil {
				t.Fatal(err)
			}
			if got, err := o.maskKey(tt.file); err != nil || got != tt.want {
				t.Errorf("maskKey = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	for _, args := range [][]string{{"--mask-key-secret="}, {"--mask-key-secret=No_Name"}, {"--mask-key-namespace=a.b"}} {
		if err := parse(t, args...).validate(); err == nil {
			t.Errorf("%v is accepted", args)
		}
	}
}

// TestRegistryCredentials: --registry-config is a Docker configuration,
// as a kubernetes.io/dockerconfigjson Secret holds one; without it the
// manager pulls anonymously.
func TestRegistryCredentials(t *testing.T) {
	if c, err := parse(t).registryCredentials(); c != nil || err != nil {
		t.Errorf("without --registry-config: %v, %v", c, err)
	}
	config := filepath.Join(t.TempDir(), ".dockerconfigjson")
	if err := os.WriteFile(config, []byte(`{"auths": {"registry.example.com": {"auth": "a3VkbzpzZWNyZXQ="}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	credentials, err := parse(t, "--registry-config", config).registryCredentials()
	if err != nil {
		t.Fatal(err)
	}
	got, err := credentials(context.Background(), "registry.example.com")
	if err != nil || got.Username != "kudo" || got.Password != "secret" {
		t.Errorf("credentials of registry.example.com = %+v, %v", got, err)
	}
	if _, err := parse(t, "--registry-config", filepath.Join(t.TempDir(), "none.json")).registryCredentials(); err == nil {
		t.Error("a --registry-config that does not exist is accepted")
	}
}
