package inventory

import (
	"sync"
	"time"
)

// Correction limits: the first correction of an object is at once, each
// further one waits twice as long as the one before (1 s, 2 s, 4 s, ... up
// to 5 min), and an object quiet for 10 min starts afresh. An object
// corrected fightAfter times in a row, and changed again, is in a fight with
// another controller: reported, and still corrected at the capped pace, so
// that the fight costs the API server a few writes an hour, not a stream.
const (
	firstDelay   = time.Second
	maxDelay     = 5 * time.Minute
	quietToReset = 10 * time.Minute
	fightAfter   = 3
)

// Limiter paces the corrections of each object. It is safe for concurrent use.
type Limiter struct {
	mu     sync.Mutex
	states map[string]*pace
}

type pace struct {
	corrections int
	last        time.Time
}

// NewLimiter returns a Limiter with no history.
func NewLimiter() *Limiter { return &Limiter{states: map[string]*pace{}} }

// Verdict is whether an object may be corrected now.
type Verdict struct {
	// Wait is how long until it may: zero when it may now.
	Wait time.Duration
	// Corrections counts its corrections in a row; Fight says they make a fight.
	Corrections int
	Fight       bool
}

// Check says whether the object with this key may be corrected at now.
func (l *Limiter) Check(key string, now time.Time) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.states[key]
	if p == nil || now.Sub(p.last) >= quietToReset {
		return Verdict{}
	}
	return Verdict{Wait: max(0, p.last.Add(delay(p.corrections)).Sub(now)), Corrections: p.corrections, Fight: p.corrections >= fightAfter}
}

// Corrected notes a correction of the object at now.
func (l *Limiter) Corrected(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Corrections are rare: sweeping here keeps the history of objects long
	// quiet (or gone with their Instance) from piling up.
	for k, p := range l.states {
		if now.Sub(p.last) >= quietToReset {
			delete(l.states, k)
		}
	}
	p := l.states[key]
	if p == nil {
		p = &pace{}
		l.states[key] = p
	}
	p.corrections++
	p.last = now
}

// delay is the wait after n corrections in a row.
func delay(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := firstDelay
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
