package manager

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/planmetrics"
)

// informersOf serves one informer, whatever it is asked for: the Instances'.
type informersOf struct {
	cache.Informers
	informer toolscache.SharedIndexInformer
}

func (f informersOf) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return f.informer, nil
}

// TestTheRunningStepsMetricReadsTheCacheInPlace: a scrape of the
// running-steps metric reads the Instances where the cache holds them. At
// 10,000 Instances a List copied each into a new slice at every scrape, 10
// MB, most of what the manager allocated in the bench's 10,000 run.
func TestTheRunningStepsMetricReadsTheCacheInPlace(t *testing.T) {
	const n = 10000
	informer := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &kudov1beta1.Instance{}, 0, toolscache.Indexers{})
	for k := range n {
		i := &kudov1beta1.Instance{}
		i.Namespace, i.Name = "bench", fmt.Sprintf("i-%05d", k)
		i.Labels = map[string]string{kudov1beta1.OperatorLabel: "redis"}
		status := kudov1beta1.ExecutionComplete
		if k%4 == 0 {
			status = kudov1beta1.ExecutionInProgress
		}
		i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: status}
		i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: status,
			Phases: []kudov1beta1.PhaseStatus{{Name: "main", Steps: []kudov1beta1.StepStatus{{Name: "everything", Status: status}}}}}}
		if err := informer.GetStore().Add(i); err != nil {
			t.Fatal(err)
		}
	}
	instances := runningInstances(informersOf{informer: informer}, nil, nil)

	counts, err := planmetrics.Running(instances(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	if want := (planmetrics.RunningKey{Operator: "redis", Status: kudov1beta1.ExecutionInProgress}); len(counts) != 1 || counts[want] != n/4 {
		t.Errorf("running steps: %v, want %d of %v", counts, n/4, want)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := planmetrics.Running(instances(context.Background())); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// The store's list of pointers (80 KB) and a step slice per running
	// Instance, not a copy of each Instance (about 1 KB each).
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 512<<10 {
		t.Errorf("a scrape of %d Instances allocated %d KiB, want at most 512 KiB", n, allocated>>10)
	}
}
