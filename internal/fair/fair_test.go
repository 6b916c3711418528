package fair

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAFloodDelaysOnlyItsSender is issue 62's third attack: one namespace's
// 120 renders filled the slots, and another's waited behind all of them.
// With the slots held and a flood waiting, the other key gets one of the
// next two slots, while the flood's holders keep theirs.
func TestAFloodDelaysOnlyItsSender(t *testing.T) {
	s := NewSlots(2)
	held := []func(){s.Acquire("flood"), s.Acquire("flood")}
	hold := make(chan struct{})
	var granted sync.WaitGroup
	var floodServed atomic.Int32
	for range 20 {
		granted.Add(1)
		go func() {
			defer granted.Done()
			release := s.Acquire("flood")
			floodServed.Add(1)
			<-hold
			release()
		}()
	}
	waitForWaiters(t, s, 20)
	victim := make(chan struct{})
	go func() {
		release := s.Acquire("victim")
		close(victim)
		release()
	}()
	waitForWaiters(t, s, 21)
	for _, release := range held {
		release()
	}
	select {
	case <-victim:
	case <-time.After(5 * time.Second):
		t.Fatal("the victim waited behind the flood")
	}
	if n := floodServed.Load(); n > 2 {
		t.Fatalf("%d of the flood were served before the victim", n)
	}
	close(hold)
	granted.Wait()
}

// TestALongHolderSharesItsSlot: one slot, held by a flood's render that
// runs on; a victim that asks gets it at the holder's next Yield, and the
// holder gets it back once the victim is done.
func TestALongHolderSharesItsSlot(t *testing.T) {
	s := NewSlots(1)
	release := s.Acquire("flood")
	if s.Yield("flood") {
		t.Fatal("the holder waited with no one else waiting")
	}
	victimRan := make(chan struct{})
	go func() {
		release := s.Acquire("victim")
		close(victimRan)
		release()
	}()
	waitForWaiters(t, s, 1)
	if !s.Yield("flood") {
		t.Fatal("the holder kept the slot while the victim waited")
	}
	select {
	case <-victimRan:
	default:
		t.Fatal("the holder had the slot back before the victim ran")
	}
	release()
	if s.free != 1 || len(s.turn) != 0 || len(s.queues) != 0 {
		t.Fatalf("after all released: free %d, turn %v, queues %v", s.free, s.turn, s.queues)
	}
}

func TestSlotsAreAllUsedWhenOneKeyAsks(t *testing.T) {
	s := NewSlots(3)
	releases := []func(){s.Acquire("a"), s.Acquire("a"), s.Acquire("a")}
	done := make(chan struct{})
	go func() { s.Acquire("a")(); close(done) }()
	select {
	case <-done:
		t.Fatal("a fourth slot was taken")
	case <-time.After(20 * time.Millisecond):
	}
	releases[0]()
	<-done
	releases[1]()
	releases[2]()
	if s.free != 3 || len(s.turn) != 0 || len(s.queues) != 0 {
		t.Fatalf("after all released: free %d, turn %v, queues %v", s.free, s.turn, s.queues)
	}
}

func TestAShareBoundsWhatAKeyHasUnderWay(t *testing.T) {
	s := NewShare(2)
	for range 2 {
		if !s.TryEnter("a") {
			t.Fatal("a key could not start its share")
		}
	}
	if s.TryEnter("a") {
		t.Fatal("a key started more than its share")
	}
	if !s.TryEnter("b") {
		t.Fatal("another key waited for the first's share")
	}
	s.Leave("a")
	if !s.TryEnter("a") {
		t.Fatal("a key could not start work once some ended")
	}
}

func waitForWaiters(t *testing.T, s *Slots, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		waiting := 0
		for _, q := range s.queues {
			waiting += len(q)
		}
		s.mu.Unlock()
		if waiting == n {
			return
		}
	}
	t.Fatalf("%d waiters never came", n)
}
