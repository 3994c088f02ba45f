package main

import (
	"container/list"
	"sync"
	"time"
)

// keyCache is the edge service's cache of patrons' signing keys: at most capacity entries,
// least recently used evicted first; a found key lives ttl, a key the key service does not
// know (a "null" entry) lives nullTTL. A capacity or a TTL of 0 disables caching of that kind.
type keyCache struct {
	mu       sync.Mutex
	capacity int
	ttl      time.Duration
	nullTTL  time.Duration
	order    *list.List // front: most recently used; values are *keyEntry
	entries  map[string]*list.Element
	now      func() time.Time
}

type keyEntry struct {
	id      string
	found   bool
	expires time.Time
}

func newKeyCache(capacity int, ttl, nullTTL time.Duration) *keyCache {
	return &keyCache{capacity: capacity, ttl: ttl, nullTTL: nullTTL, order: list.New(),
		entries: map[string]*list.Element{}, now: time.Now}
}

// get answers whether id is cached (hit) and, if so, whether the key exists (found).
func (c *keyCache) get(id string) (found, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[id]
	if !ok {
		return false, false
	}
	e := el.Value.(*keyEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, id)
		return false, false
	}
	c.order.MoveToFront(el)
	return e.found, true
}

// put caches the outcome of a key lookup.
func (c *keyCache) put(id string, found bool) {
	ttl := c.ttl
	if !found {
		ttl = c.nullTTL
	}
	if c.capacity <= 0 || ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &keyEntry{id: id, found: found, expires: c.now().Add(ttl)}
	if el, ok := c.entries[id]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[id] = c.order.PushFront(e)
	for c.order.Len() > c.capacity {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*keyEntry).id)
	}
}

// len is the number of entries, expired ones included until they are looked up or evicted.
func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
