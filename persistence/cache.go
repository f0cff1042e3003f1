package persistence

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// DefaultStateCacheBytes is the state cache budget the server uses unless
// told otherwise (SOLITAIRE_STATE_CACHE_MB): 32 MiB holds the states of
// thousands of games of ordinary length.
const DefaultStateCacheBytes = 32 << 20

// stateCache keeps the current state of recently used games, so that Load
// of a game in play costs the one query of its games row instead of a
// snapshot decode and the events after it, however long the log (the
// read cost does not grow with the log, BENCHMARKS.md), and so that Append knows the
// stream head's hash without reading it.
//
// It never serves Load a state older than the log: an entry is used only
// when its version equals the version in the games row that Load reads in
// the same call, and the log below that version never changes (events are
// immutable, and a version is appended once). An append by another Store,
// in this process or another, raises the row's version, so the entry stops
// matching at once. Entries are replaced after every Append and Create
// through this Store. The one exception is LoadForCommand (command), which
// hands out the entry without that check, for a move whose append checks
// the version itself (app.CommandLoader); an entry known to be behind
// (another process's append notice, behind) is not handed out there.
//
// An entry's state, head and records are never changed once stored:
// Load hands out clones (domain.State.Clone); LoadForCommand hands out
// the state itself, which its caller only reads (app.CommandLoader); the
// cache stores clones of what it is given, except a state an append hands
// over (app.Store's Append: the caller no longer changes it). (Its record,
// the game's identity, is set once, under mu.)
// The cache is bounded in bytes (an estimate of each state's size, its
// undo record included) and evicts the least recently used games.
type stateCache struct {
	budget int64

	// mu serializes the changes (put, forget), so bytes is exact: the LRU
	// calls onEvict only from inside Add, Remove and RemoveOldest, which
	// run under mu.
	mu    sync.Mutex
	bytes int64 // guarded by mu
	lru   *lru.Cache[string, *cachedState]

	hits, misses atomic.Int64
	// commandHits and commandMisses count LoadForCommand's lookups.
	commandHits, commandMisses atomic.Int64
}

// cachedState is one game's entry.
type cachedState struct {
	state *domain.State  // never changed once cached
	proj  app.Projection // state's projection (app.ProjectionOf), as the append wrote it to the games row
	head  []byte         // hash of event number state.Version
	// recent are the stored records of the append or create that made
	// state, newest last, ending at state.Version; nil for a state a
	// Load rebuilt. Events never change, so they answer
	// Events for their versions whatever the log's version now.
	recent []domain.RecordedEvent
	// record is the game's record without its projection (which changes
	// with every append and is read each time), or nil if not known. The
	// rest of a games row never changes: Append updates only the
	// projection, nothing else updates the row.
	record *app.Game
	cost   int64 // estimated bytes, counted in stateCache.bytes
	// behind is set when another process announced a newer version
	// (Store.Listen): command no longer hands the entry out, as a move
	// decided on it would surely be refused. Load's check is unchanged.
	behind atomic.Bool
}

// maxRecent bounds the records an entry keeps (a move appends a few).
const maxRecent = 16

// minEntryBytes bounds the entry count of the LRU: no state costs less.
const minEntryBytes = 1 << 10

// newStateCache returns a cache of about budget bytes, or nil (no cache)
// for a budget of 0 or less.
func newStateCache(budget int64) *stateCache {
	if budget <= 0 {
		return nil
	}
	c := &stateCache{budget: budget}
	entries := int(min(max(budget/minEntryBytes, 16), 1<<22))
	var err error
	c.lru, err = lru.NewWithEvict(entries, func(_ string, e *cachedState) { c.bytes -= e.cost })
	if err != nil { // only for a size below 1, excluded above
		panic(err)
	}
	return c
}

// get returns a clone of game id's state and its head hash if the cache
// holds it at exactly version.
func (c *stateCache) get(id string, version int) (*domain.State, []byte, bool) {
	if c == nil {
		return nil, nil, false
	}
	e, ok := c.lru.Get(id)
	if !ok || e.state.Version != version {
		c.misses.Add(1)
		return nil, nil, false
	}
	c.hits.Add(1)
	return e.state.Clone(), e.head, true
}

// command returns a copy of game id's record, with its projection taken
// from the state, and its state itself, whatever the log's version now
// (see Store.LoadForCommand), if the cache holds both. The state is the
// entry's: the caller must not change it (a move's command only reads
// it, and Decide works on its own copy), which spares a copy per move.
func (c *stateCache) command(id string) (*app.Game, *domain.State, bool) {
	if c == nil {
		return nil, nil, false
	}
	e, r := c.withRecord(id, true)
	if r == nil || e.behind.Load() {
		c.commandMisses.Add(1)
		return nil, nil, false
	}
	c.commandHits.Add(1)
	g := cloneIdentity(r)
	g.Projection = cloneProjection(e.proj)
	if e.state.Hinted {
		g.Ranked = false // R7.3, whatever the cached record says (Load does the same)
	}
	return g, e.state, true
}

// behind marks game id's entry as behind the log if it holds a version
// older than version (an append another process announced).
func (c *stateCache) behind(id string, version int) {
	if c == nil {
		return
	}
	if e, ok := c.lru.Peek(id); ok && e.state.Version < version {
		e.behind.Store(true)
	}
}

// head returns the hash of event number version of game id if the cache
// holds the game at exactly that version.
func (c *stateCache) head(id string, version int) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	e, ok := c.lru.Peek(id)
	if !ok || e.state.Version != version {
		return nil, false
	}
	return e.head, true
}

// events returns copies of the records of game id with versions
// after+1 … after+limit if the entry holds every one of them.
func (c *stateCache) events(id string, after, limit int) ([]domain.RecordedEvent, bool) {
	if c == nil || limit < 1 {
		return nil, false
	}
	e, ok := c.lru.Peek(id)
	if !ok || len(e.recent) == 0 {
		return nil, false
	}
	first := e.recent[0].Version
	if after+1 < first || after+limit > e.recent[len(e.recent)-1].Version {
		return nil, false
	}
	out := make([]domain.RecordedEvent, limit)
	for i := range out {
		out[i] = cloneRecord(e.recent[after+1-first+i])
	}
	return out, true
}

// cloneRecord copies r's byte slices.
func cloneRecord(r domain.RecordedEvent) domain.RecordedEvent {
	r.Payload, r.PrevHash, r.Hash = bytes.Clone(r.Payload), bytes.Clone(r.PrevHash), bytes.Clone(r.Hash)
	return r
}

// put stores a clone of st, the state of game id after event number
// st.Version whose hash is head, and its projection p, with recs (the newest records as stored,
// Position included, ending at st.Version; nil if not known), unless the
// cache holds a newer version. Faulted states and states larger than a quarter of the budget
// are not kept.
func (c *stateCache) put(id string, st *domain.State, p app.Projection, head []byte, recs []domain.RecordedEvent) {
	c.store(id, st, p, head, recs, false)
}

// store is put (owned false: st and recs are copied), and with owned true
// takes a state and records nobody changes any more (an append's state,
// app.Store; the appender's records) as they are, without copying them.
func (c *stateCache) store(id string, st *domain.State, p app.Projection, head []byte, recs []domain.RecordedEvent, owned bool) {
	if c == nil || st == nil || st.Fault != "" || len(head) == 0 {
		return
	}
	if len(recs) > maxRecent {
		recs = recs[len(recs)-maxRecent:]
	}
	if len(recs) > 0 && (recs[len(recs)-1].Version != st.Version || !bytes.Equal(recs[len(recs)-1].Hash, head)) {
		recs = nil // not the records of this state: keep none
	}
	cost := stateCost(st, head) + recentCost(recs)
	if cost > c.budget/4 {
		c.forget(id)
		return
	}
	e := &cachedState{state: st, proj: cloneProjection(p), head: head, recent: recs, cost: cost}
	if !owned {
		e.state, e.head, e.recent = st.Clone(), bytes.Clone(head), nil
		for _, r := range recs {
			e.recent = append(e.recent, cloneRecord(r))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(id); ok {
		if old.state.Version > st.Version {
			return
		}
		e.record = old.record // immutable: carried over
		if old.state.Version == st.Version {
			e.behind.Store(old.behind.Load()) // the same version is as far behind
			if len(e.recent) == 0 {
				e.recent = old.recent // the same version's records: immutable, shared
				e.cost += recentCost(old.recent)
			}
		}
		c.bytes -= old.cost // Add replaces old in place (to the front), without onEvict
	}
	c.lru.Add(id, e)
	c.bytes += e.cost
	for c.bytes > c.budget {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// keepRecord stores a copy of g's record (its projection left out) with
// game g.ID's entry, if there is one without. (An entry's record is read
// and written only under mu.)
func (c *stateCache) keepRecord(id string, g *app.Game) {
	if c == nil || g == nil || g.ID != id {
		return
	}
	c.mu.Lock()
	e, ok := c.lru.Peek(id)
	need := ok && e.record == nil
	c.mu.Unlock()
	if !need {
		return
	}
	r := cloneIdentity(g)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Peek(id); ok && e.record == nil {
		e.record = r
	}
}

// unrank marks game id's cached record unranked (R7.3: a hint was
// appended), the one change a record ever has. The record is replaced,
// not changed: readers copy it outside the lock.
func (c *stateCache) unrank(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Peek(id); ok && e.record != nil {
		r := cloneIdentity(e.record)
		r.Ranked = false
		e.record = r
	}
}

// record returns a copy of game id's record without its projection, if
// the cache knows it.
func (c *stateCache) record(id string) (*app.Game, bool) {
	if c == nil {
		return nil, false
	}
	_, r := c.withRecord(id, false)
	if r == nil {
		return nil, false
	}
	return cloneIdentity(r), true
}

// withRecord returns game id's entry and its record (read under mu), or
// nils; use marks the entry recently used.
func (c *stateCache) withRecord(id string, use bool) (*cachedState, *app.Game) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var (
		e  *cachedState
		ok bool
	)
	if use {
		e, ok = c.lru.Get(id)
	} else {
		e, ok = c.lru.Peek(id)
	}
	if !ok {
		return nil, nil
	}
	return e, e.record
}

// cloneIdentity copies the parts of g that never change, sharing no
// memory with g; the projection fields are left zero.
func cloneIdentity(g *app.Game) *app.Game {
	r := &app.Game{ID: g.ID, Variant: g.Variant, Rules: g.Rules, Options: cloneOptions(g.Options),
		Owner: g.Owner, Ranked: g.Ranked, DealSecret: g.DealSecret.CloneSecret(), HasSeed: g.HasSeed,
		CompetitionID: g.CompetitionID, DailyDate: g.DailyDate, Deal: g.Deal, CreatedAt: g.CreatedAt,
		SolutionCommitment: g.SolutionCommitment}
	return r
}

// cloneProjection copies p, sharing no memory with it.
func cloneProjection(p app.Projection) app.Projection {
	p.Score, p.FinishedAt = clonePtr(p.Score), clonePtr(p.FinishedAt)
	return p
}

// cloneOptions copies the pointed-to values of o.
func cloneOptions(o domain.Options) domain.Options {
	o.Draw, o.Scoring, o.TakeBack, o.Flip = clonePtr(o.Draw), clonePtr(o.Scoring), clonePtr(o.TakeBack), clonePtr(o.Flip)
	o.Autocomplete, o.TimeLimitS, o.Undo = clonePtr(o.Autocomplete), clonePtr(o.TimeLimitS), clonePtr(o.Undo)
	return o
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// loadRecord reads game id's record. When the cache knows the parts of
// the record that never change, it reads only the projection (no JSON to
// decode, a narrower row); else the whole row. Errors: domain.ErrNotFound,
// or the database's.
func (s *Store) loadRecord(db *gorm.DB, id string) (*app.Game, error) {
	g, ok := s.cache.record(id)
	if !ok {
		return scanGame(db.Raw(`SELECT `+gameColumns+` FROM games WHERE id = ?`, id).Row())
	}
	var proj projectionColumns
	if err := scanRow(db.Raw(`SELECT status, version, moves, score, elapsed_ms, finished_at, updated_at FROM games WHERE id = ?`, id).Row(),
		&proj.status, &g.Version, &g.Moves, &proj.score, &g.ElapsedMS, &proj.finished, &proj.updated); err != nil {
		return nil, err
	}
	proj.set(&g.Projection)
	return g, nil
}

// recentCost estimates the bytes of cached records.
func recentCost(recs []domain.RecordedEvent) int64 {
	var n int64
	for _, r := range recs {
		n += int64(unsafe.Sizeof(r)) + int64(len(r.Payload)+len(r.PrevHash)+len(r.Hash)+len(r.GameID))
	}
	return n
}

// forget drops game id's entry.
func (c *stateCache) forget(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(id)
}

// stateCost estimates the bytes a cached clone of st holds: the cards,
// the undo record, the slice headers, and a fixed part for the State
// itself, the LRU's bookkeeping and the id.
func stateCost(st *domain.State, head []byte) int64 {
	const fixed = 1024
	cards := len(st.Stock) + len(st.Waste)
	for _, f := range st.Foundations {
		cards += len(f)
	}
	for _, p := range st.Tableau {
		cards += len(p.Cards)
	}
	n := fixed + cards*int(unsafe.Sizeof(domain.Card(0))) +
		len(st.Foundations)*int(unsafe.Sizeof([]domain.Card(nil))) +
		len(st.Tableau)*int(unsafe.Sizeof(domain.TableauPile{})) +
		len(st.Turns)*int(unsafe.Sizeof(domain.Turn{})) +
		len(st.Ops)*int(unsafe.Sizeof(domain.Op{})) + len(head)
	return int64(n)
}

// CacheStats is what the state cache did so far (Store.CacheStats).
type CacheStats struct {
	Hits, Misses int64 // Loads served from the cache, and not
	// CommandHits and CommandMisses count LoadForCommand's lookups: served
	// from the cache without a query, and not.
	CommandHits, CommandMisses int64
	Entries                    int   // games held now
	Bytes                      int64 // estimated size of the held states
}

// CacheStats reports the state cache's counters; all zero when the store
// has no cache (Config.StateCacheBytes 0).
func (s *Store) CacheStats() CacheStats {
	c := s.cache
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), CommandHits: c.commandHits.Load(),
		CommandMisses: c.commandMisses.Load(), Entries: c.lru.Len(), Bytes: c.bytes}
}

// PlayerCache is an app.PlayerStore that remembers, for a while, the
// players it found by token hash, so that authenticating a request costs
// no query while the player is in the cache. A player's token never
// changes and players are never deleted (a token is given once, by POST
// /v1/players), so an entry is stale only where tokens can be revoked;
// TTL bounds how long another server process would go on accepting a
// revoked token, and Forget drops one at once in this process. Unknown
// tokens are not remembered. CreatePlayer and any other method go to the
// wrapped store. Safe for concurrent use.
type PlayerCache struct {
	app.PlayerStore
	ttl time.Duration
	lru *lru.Cache[string, cachedPlayer]
	now func() time.Time
}

// cachedPlayer is a PlayerCache entry.
type cachedPlayer struct {
	p  app.Player
	at time.Time
}

// NewPlayerCache wraps next with a cache of up to size players, each kept
// for at most ttl. A size below 1 means 1.
func NewPlayerCache(next app.PlayerStore, size int, ttl time.Duration) *PlayerCache {
	c, _ := lru.New[string, cachedPlayer](max(size, 1)) // fails only for a size below 1
	return &PlayerCache{PlayerStore: next, ttl: ttl, lru: c, now: time.Now}
}

// PlayerByTokenHash returns the player whose token hashes to hash, from
// the cache if it found it there less than TTL ago, else from the wrapped
// store. Errors: those of the wrapped store (domain.ErrNotFound for an
// unknown token). The result is the caller's to change.
func (c *PlayerCache) PlayerByTokenHash(ctx context.Context, hash []byte) (*app.Player, error) {
	key := string(hash)
	if e, ok := c.lru.Get(key); ok && c.now().Sub(e.at) < c.ttl {
		p := e.p
		p.TokenHash = bytes.Clone(p.TokenHash)
		return &p, nil
	}
	p, err := c.PlayerStore.PlayerByTokenHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	e := cachedPlayer{p: *p, at: c.now()}
	e.p.TokenHash = bytes.Clone(p.TokenHash)
	c.lru.Add(key, e)
	return p, nil
}

// Forget drops the player with token hash hash from the cache.
func (c *PlayerCache) Forget(hash []byte) { c.lru.Remove(string(hash)) }
