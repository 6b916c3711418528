package chartrender

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
)

func TestTheResultCacheKeepsTheMostRecentWithinItsBudget(t *testing.T) {
	key := func(name string) [sha256.Size]byte { return sha256.Sum256([]byte(name)) }
	// An op adds a result of its size, or with none reads it.
	type op struct {
		name string
		size int
	}
	for name, tc := range map[string]struct {
		ops  []op
		want []string
	}{
		"all fit":                            {ops: []op{{"a", 30}, {"b", 30}, {"c", 30}}, want: []string{"a", "b", "c"}},
		"the least recently used goes first": {ops: []op{{"a", 40}, {"b", 40}, {"a", 0}, {"c", 40}}, want: []string{"a", "c"}},
		"one over its share is not kept":     {ops: []op{{"a", 10}, {"huge", 41}}, want: []string{"a"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := newResultCache(100, 40)
			for _, o := range tc.ops {
				if o.size == 0 {
					c.get(key(o.name))
				} else {
					c.add(key(o.name), &Result{Notes: o.name}, o.size)
				}
			}
			var kept []string
			for _, n := range []string{"a", "b", "c", "huge"} {
				if res, _, ok := c.get(key(n)); ok && res.Notes == n {
					kept = append(kept, n)
				}
			}
			if !slices.Equal(kept, tc.want) {
				t.Errorf("kept %v, want %v", kept, tc.want)
			}
		})
	}
}

// A step renders its chart at each reconcile until it is healthy: the same
// request again starts no process, another does.
func TestTheSameRequestRendersOnce(t *testing.T) {
	req := request(testChart(t), map[string]any{"replicaCount": 2})
	req.Release.Name = t.Name()
	first, err := Render(context.Background(), req, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	noProcess := errors.New("no process may start")
	defer func(e func() (string, error)) { Executable = e }(Executable)
	Executable = func() (string, error) { return "", noProcess }

	again, err := Render(context.Background(), req, DefaultLimits)
	if err != nil || again != first {
		t.Fatalf("the same request again: %v (the result rendered before: %t)", err, again == first)
	}
	other := *req
	other.Values = map[string]any{"replicaCount": 3}
	if _, err := Render(context.Background(), &other, DefaultLimits); !errors.Is(err, noProcess) {
		t.Fatalf("another request: %v, want a render of its own", err)
	}
	small := DefaultLimits
	small.MaxOutput = 16
	if _, err := Render(context.Background(), req, small); !errors.Is(err, noProcess) {
		t.Fatalf("under a smaller output limit: %v, want a render within it", err)
	}
}

// BenchmarkRender is one render of a real chart in its child process; of
// the same request again, from the cache.
func BenchmarkRender(b *testing.B) {
	chart := testChart(b)
	b.Run("process", func(b *testing.B) {
		for i := range b.N {
			req := request(chart, nil)
			req.Release.Revision = i + 1
			if _, err := Render(context.Background(), req, DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		req := request(chart, nil)
		for range b.N {
			if _, err := Render(context.Background(), req, DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
}
