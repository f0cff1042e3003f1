package persistence

import (
	"strconv"
	"testing"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// TestStateCacheBytesOnReplace: storing a newer state of a game the cache
// holds replaces its entry in place, and the byte count stays the sum of
// the entries' costs (the replaced entry's cost leaves it, as an evicted
// one's does), over many replacements and with other games evicted by the
// budget meanwhile.
func TestStateCacheBytesOnReplace(t *testing.T) {
	var st *domain.State // a Klondike game after one draw
	playedStates(t, "klondike", domain.Options{}, 1, 1, true, func(s *domain.State) { st = s })
	head := []byte("head-of-the-chain-32-bytes-long!")
	one := stateCost(st, head)
	c := newStateCache(8 * one) // room for about eight games
	sum := func() int64 {
		var n int64
		for _, id := range c.lru.Keys() {
			e, _ := c.lru.Peek(id)
			n += e.cost
		}
		return n
	}
	// More games than the LRU has entries (at least 16), so that adding a
	// new game also evicts by count, not only by bytes.
	var ids []string
	for i := range 40 {
		ids = append(ids, string(rune('a'+i%26))+strconv.Itoa(i))
	}
	for version := 1; version <= 60; version++ {
		for _, id := range ids[:version%len(ids)+1] {
			s := st.Clone()
			s.Version = version
			c.store(id, s, app.Projection{Version: version}, head, nil, true)
			if c.bytes != sum() || c.bytes > c.budget {
				t.Fatalf("version %d, game %s: bytes %d, entries' costs %d, budget %d", version, id, c.bytes, sum(), c.budget)
			}
		}
	}
	last := ids[60%len(ids)] // the last game stored
	if e, ok := c.lru.Peek(last); !ok || e.state.Version != 60 {
		t.Fatalf("game %s: %v, want its version 60 cached", last, ok)
	}
}
