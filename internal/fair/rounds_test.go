package fair

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// waiter asks s for a slot for key, once the waiters before it wait, and
// notes key on served when it has the slot, which it then releases; done
// is done when it has.
func waiter(t *testing.T, s *Slots, key string, waiting int, served chan<- string, done *sync.WaitGroup) {
	t.Helper()
	done.Add(1)
	go func() {
		defer done.Done()
		release := s.Acquire(key)
		served <- key
		release()
	}()
	waitForWaiters(t, s, waiting)
}

// servedOrder reads n keys from served, failing if they do not come.
func servedOrder(t *testing.T, served <-chan string, n int) []string {
	t.Helper()
	var order []string
	for range n {
		select {
		case key := <-served:
			order = append(order, key)
		case <-time.After(5 * time.Second):
			t.Fatalf("served %v, then no one", order)
		}
	}
	return order
}

// TestFreedSlotsGoRoundRobinAmongTheKeysThatWait: a key with three waiters
// gets one slot a round, as the keys with one do, in the order the keys
// came to wait.
func TestFreedSlotsGoRoundRobinAmongTheKeysThatWait(t *testing.T) {
	s := NewSlots(1)
	release := s.Acquire("holder")
	served := make(chan string, 5)
	var done sync.WaitGroup
	for n, key := range []string{"a", "a", "a", "b", "c"} {
		waiter(t, s, key, n+1, served, &done)
	}
	release()
	if got, want := servedOrder(t, served, 5), []string{"a", "b", "c", "a", "a"}; !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
	done.Wait()
	if s.free != 1 || len(s.turn) != 0 || len(s.queues) != 0 {
		t.Errorf("after all released: free %d, turn %v, queues %v", s.free, s.turn, s.queues)
	}
}

// TestAYieldingHolderWaitsBehindEveryoneWaiting: the holder gets its slot
// back only after each waiter there when it yielded, a key's second waiter
// too.
func TestAYieldingHolderWaitsBehindEveryoneWaiting(t *testing.T) {
	s := NewSlots(1)
	release := s.Acquire("flood")
	served := make(chan string, 3)
	var done sync.WaitGroup
	for n, key := range []string{"b", "b", "c"} {
		waiter(t, s, key, n+1, served, &done)
	}
	if !s.Yield("flood") {
		t.Fatal("the holder kept its slot while others waited")
	}
	// Each waiter noted itself before its release handed the slot on.
	if len(served) != 3 {
		t.Fatalf("the holder had its slot back when %d of 3 waiters had been served", len(served))
	}
	if got, want := servedOrder(t, served, 3), []string{"b", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
	release()
	done.Wait()
	if s.free != 1 || len(s.turn) != 0 || len(s.queues) != 0 {
		t.Errorf("after all released: free %d, turn %v, queues %v", s.free, s.turn, s.queues)
	}
}

// TestAShareCountsWhatAKeyHasUnderWay: each Leave frees one of the key's
// share, a Leave of nothing under way frees nothing to come, and a key
// with nothing under way holds no memory (keys are namespaces, without
// end).
func TestAShareCountsWhatAKeyHasUnderWay(t *testing.T) {
	s := NewShare(2)
	steps := []struct {
		do   string
		key  string
		want bool
	}{
		{"enter", "a", true}, {"enter", "a", true}, {"leave", "a", false},
		{"enter", "a", true}, {"enter", "a", false},
		{"leave", "a", false}, {"leave", "a", false},
		{"leave", "b", false}, // unpaired: no credit
		{"enter", "b", true}, {"enter", "b", true}, {"enter", "b", false},
		{"leave", "b", false}, {"leave", "b", false},
	}
	for n, step := range steps {
		if step.do == "leave" {
			s.Leave(step.key)
			continue
		}
		if got := s.TryEnter(step.key); got != step.want {
			t.Fatalf("step %d: TryEnter(%s) = %t, want %t", n, step.key, got, step.want)
		}
	}
	if len(s.under) != 0 {
		t.Errorf("with nothing under way, the share holds %v", s.under)
	}
	if NewShare(0).TryEnter("a") {
		t.Error("a share of none started work")
	}
}
