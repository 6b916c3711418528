package chartrender

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// resultCache keeps the results of recent renders by their request, within a
// budget of bytes (their size as the child wrote them): a step renders its
// chart at each reconcile until its objects are healthy, and each render
// is a process. A result is shared by every caller that asks again: read
// it, never change it. k8s.io/utils/lru bounds entries, not bytes, and a
// result may be as large as MaxOutput: so a list of our own.
type resultCache struct {
	mu sync.Mutex
	// budget is the most bytes of all results; largest of one, so that
	// one large chart does not push every other out.
	budget, largest int
	used            int
	// recent holds *cachedResult, the most recently used first.
	recent *list.List
	byKey  map[[sha256.Size]byte]*list.Element
}

type cachedResult struct {
	key    [sha256.Size]byte
	result *Result
	size   int
}

func newResultCache(budget, largest int) *resultCache {
	return &resultCache{budget: budget, largest: largest, recent: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

// get is the result of key, and its size.
func (c *resultCache) get(key [sha256.Size]byte) (*Result, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, 0, false
	}
	c.recent.MoveToFront(e)
	cached := e.Value.(*cachedResult)
	return cached.result, cached.size, true
}

func (c *resultCache) add(key [sha256.Size]byte, result *Result, size int) {
	if size > c.largest {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = c.recent.PushFront(&cachedResult{key: key, result: result, size: size})
	c.used += size
	for c.used > c.budget {
		oldest := c.recent.Remove(c.recent.Back()).(*cachedResult)
		delete(c.byKey, oldest.key)
		c.used -= oldest.size
	}
}
