package manager

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// TestAShardsCacheHoldsItsOwnObjectsAndTheSharedKinds: the manager of shard b
// (--shard=b: main.go's selectors) caches the objects labelled with its
// shard, not another shard's nor the unlabelled ones, but every Operator,
// which all shards share; and it watches the Secrets of secret parameters
// with a cache of its own, as no shard label marks them. Its metrics read
// that cache: the running steps from the Instances' informer's store.
func TestAShardsCacheHoldsItsOwnObjectsAndTheSharedKinds(t *testing.T) {
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kudov1beta1.AddToScheme, kudov1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	shardB := labels.SelectorFromSet(labels.Set{kudov1beta1.ShardLabel: "b"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr, instances, err := New(ctx, &Config{Rest: cfg, MaskKeys: params.MaskKeys{Current: []byte("key")}, Options: ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{DefaultLabelSelector: shardB,
			ByObject: map[client.Object]cache.ByObject{&kudov1beta1.Instance{}: {Label: shardB}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if instances.ShardCache == nil {
		t.Error("a shard's manager watches the Secrets of secret parameters in its own cache")
	}
	go func() { _ = mgr.Start(ctx) }()

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := "shop"
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	for name, shard := range map[string]string{"mine": "b", "theirs": "c", "users": ""} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if shard != "" {
			cm.Labels = map[string]string{kudov1beta1.ShardLabel: shard}
		}
		must(t, c.Create(ctx, cm))
	}
	must(t, c.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}))

	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	var cached []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		list := &corev1.ConfigMapList{}
		must(t, mgr.GetCache().List(ctx, list, client.InNamespace(ns)))
		cached = nil
		for _, cm := range list.Items {
			cached = append(cached, cm.Name)
		}
		if slices.Contains(cached, "mine") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Equal(cached, []string{"mine"}) {
		t.Errorf("shard b's cache holds the ConfigMaps %v, want only its own, [mine]", cached)
	}
	if err := mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, &kudov1beta1.Operator{}); err != nil {
		t.Errorf("shard b's cache does not hold an Operator every shard shares: %v", err)
	}
	if err := mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: ns, Name: "users"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("shard b's cache read an unlabelled ConfigMap: %v", err)
	}
	// kudo_ng_steps_running is an invalid metric, which fails the scrape,
	// when the manager's cache gives no store to read.
	if _, err := metrics.Registry.Gather(); err != nil {
		t.Errorf("a scrape of the manager's metrics: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
