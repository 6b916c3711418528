// Package fair shares what the manager has a fixed number of — render
// slots, verification workers — among namespaces, so that a flood of work
// from one namespace delays that namespace, not the others.
package fair

import "sync"

// Slots are n slots taken one at a time by keys. While none is free, a
// freed slot goes to the keys that wait in turn, round robin: a key with a
// thousand waiters gets one slot a round, as a key with one does. Its zero
// value has no slots; make it with NewSlots.
type Slots struct {
	mu     sync.Mutex
	free   int
	queues map[string][]chan struct{}
	// turn holds the keys with waiters, in the order they get slots.
	turn []string
}

// NewSlots makes n slots.
func NewSlots(n int) *Slots {
	return &Slots{free: n, queues: map[string][]chan struct{}{}}
}

// Acquire waits for a slot for key and returns its release, to be called
// once.
func (s *Slots) Acquire(key string) (release func()) {
	s.mu.Lock()
	if s.free > 0 && len(s.turn) == 0 {
		s.free--
		s.mu.Unlock()
		return s.release
	}
	granted := s.enqueue(key)
	s.mu.Unlock()
	<-granted
	return s.release
}

// release hands the slot to the next key in turn, which goes to the back of
// the turn if it waits for more.
func (s *Slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turn) == 0 {
		s.free++
		return
	}
	s.handOver()
}

// Yield hands the slot key holds to the next key in turn, when one waits,
// and waits for its turn again, at the back: a holder that takes long —
// a render running to its timeout — shares the slot round robin with the
// rest instead of keeping it to its end. It says whether it waited.
func (s *Slots) Yield(key string) bool {
	s.mu.Lock()
	if len(s.turn) == 0 {
		s.mu.Unlock()
		return false
	}
	s.handOver()
	granted := s.enqueue(key)
	s.mu.Unlock()
	<-granted
	return true
}

// handOver gives a slot to the first waiter of the key whose turn it is.
// s.mu is held, and some key waits.
func (s *Slots) handOver() {
	key := s.turn[0]
	s.turn = s.turn[1:]
	queue := s.queues[key]
	granted := queue[0]
	if queue = queue[1:]; len(queue) > 0 {
		s.queues[key] = queue
		s.turn = append(s.turn, key)
	} else {
		delete(s.queues, key)
	}
	close(granted)
}

// enqueue makes key wait for a slot, its turn after every key's waiting
// now. s.mu is held.
func (s *Slots) enqueue(key string) chan struct{} {
	granted := make(chan struct{})
	if len(s.queues[key]) == 0 {
		s.turn = append(s.turn, key)
	}
	s.queues[key] = append(s.queues[key], granted)
	return granted
}

// Share bounds how many of some work each key has under way at once: the
// rest of a key's work waits its turn without holding a worker that
// another key's could use.
type Share struct {
	mu    sync.Mutex
	most  int
	under map[string]int
}

// NewShare lets each key have most under way.
func NewShare(most int) *Share {
	return &Share{most: most, under: map[string]int{}}
}

// TryEnter starts work of key, unless key has its share under way; the
// work's end calls Leave.
func (s *Share) TryEnter(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.under[key] >= s.most {
		return false
	}
	s.under[key]++
	return true
}

// Leave ends work of key.
func (s *Share) Leave(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.under[key]--; s.under[key] <= 0 {
		delete(s.under, key)
	}
}
