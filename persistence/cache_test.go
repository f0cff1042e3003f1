package persistence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// cacheBudget is the state cache of the stores in these tests: far more
// than they need, so nothing is evicted unless a test says so.
const cacheBudget = 8 << 20

// cachedStores opens two stores with state caches on one new database of
// the dialect, as two server processes would, plus one without a cache
// (the reference).
func cachedStores(t *testing.T, dialect string) (a, b, plain *persistence.Store) {
	t.Helper()
	cfg := persistence.Config{SnapshotEvery: 5, StateCacheBytes: cacheBudget}
	if dialect == persistence.DialectPostgres {
		cfg.DatabaseURL = pgtest.DSN(t)
	} else {
		cfg.SQLitePath = filepath.Join(t.TempDir(), "cache.db")
	}
	open := func(cfg persistence.Config) *persistence.Store {
		s, err := persistence.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b = open(cfg), open(cfg)
	cfg.StateCacheBytes = 0
	return a, b, open(cfg)
}

// testClock is a server clock that moves one second per reading.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func gamesOn(s app.Store, clock *testClock) *app.Games {
	g := app.NewGames(s)
	g.Now = clock.Now
	return g
}

// randomMove picks a legal move of st other than resign (relaxed: undo is
// among them when allowed).
func randomMove(t *testing.T, st *domain.State, rng *rand.Rand) domain.Move {
	t.Helper()
	var ms []domain.Move
	for _, m := range domain.LegalMoves(st) {
		if m.Type != domain.MoveResign {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		t.Fatalf("no legal move but resign at version %d", st.Version)
	}
	return ms[rng.IntN(len(ms))]
}

// sameAsLog checks that s.Load of game id equals a replay of the whole
// log read through ref (a store without a cache), at version want.
func sameAsLog(t *testing.T, what string, s, ref *persistence.Store, id string, want int) *domain.State {
	t.Helper()
	rec, got, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatalf("%s: Load: %v", what, err)
	}
	// The record too: with a warm cache only its projection is read.
	row, err := ref.Game(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, rec), mustJSON(t, row); g != w {
		t.Fatalf("%s: Load's record differs from the row\nload: %s\nrow:  %s", what, g, w)
	}
	recs, err := ref.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	replayed := &domain.State{}
	for _, r := range recs {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		replayed.Apply(e)
	}
	if got.Version != want || replayed.Version != want {
		t.Fatalf("%s: Load at version %d, log at %d; want %d", what, got.Version, replayed.Version, want)
	}
	if g, r := mustJSON(t, got), mustJSON(t, replayed); g != r {
		t.Fatalf("%s: Load differs from a replay of the log\nload:   %s\nreplay: %s", what, g, r)
	}
	return got
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCacheSeesOtherStores: a store with a warm cache never serves a state
// older than the log, whichever store appended: two stores (two server
// processes) take turns playing one game, each reading after the other's
// moves, on PostgreSQL and SQLite.
func TestCacheSeesOtherStores(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			a, b, plain := cachedStores(t, dialect)
			clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			ga, gb := gamesOn(a, clock), gamesOn(b, clock)
			game, _, err := ga.Create(t.Context(), app.NewGame{Owner: "p", Variant: "relaxed"})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 7))
			version := 1
			for turn := range 40 {
				// Both caches are warm with the current version ...
				sameAsLog(t, "a before", a, plain, game.ID, version)
				st := sameAsLog(t, "b before", b, plain, game.ID, version)
				// ... then one store plays one to three moves ...
				writer, other := ga, b
				if turn%2 == 1 {
					writer, other = gb, a
				}
				for range 1 + rng.IntN(3) {
					_, after, _, err := writer.Play(t.Context(), "p", game.ID, randomMove(t, st, rng), -1, nil)
					if err != nil {
						t.Fatal(err)
					}
					st, version = after, after.Version
				}
				// ... and the other sees them at once.
				sameAsLog(t, "other store after the moves", other, plain, game.ID, version)
			}
			if stats := a.CacheStats(); stats.Hits == 0 || stats.Entries != 1 {
				t.Errorf("cache of a: %+v; want hits and one entry", stats)
			}
		})
	}
}

// TestCacheRandomGames plays random games through a cached store and
// checks after every move that Load, Events (the just appended ones, as
// the move response reads them) and the game record agree with the log
// as a store without a cache reads it.
func TestCacheRandomGames(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			s, _, plain := cachedStores(t, dialect)
			clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			games := gamesOn(s, clock)
			rng := rand.New(rand.NewPCG(11, 11))
			for _, variant := range []string{"relaxed", "klondike", "tripleharp"} {
				game, _, err := games.Create(t.Context(), app.NewGame{Owner: "p", Variant: variant,
					Options: domain.Options{Undo: ptr(true)}})
				if err != nil {
					t.Fatal(err)
				}
				_, st, err := s.Load(t.Context(), game.ID)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 60 && !st.Status.Ended(); i++ {
					_, after, evs, err := games.Play(t.Context(), "p", game.ID, randomMove(t, st, rng), st.Version, nil)
					if err != nil {
						t.Fatal(err)
					}
					st = after
					sameAsLog(t, variant, s, plain, game.ID, st.Version)
					got, err := s.Events(t.Context(), game.ID, st.Version-len(evs), len(evs))
					if err != nil {
						t.Fatal(err)
					}
					want, err := plain.Events(t.Context(), game.ID, st.Version-len(evs), len(evs))
					if err != nil {
						t.Fatal(err)
					}
					if mustJSON(t, got) != mustJSON(t, want) {
						t.Fatalf("%s: Events of the last move\ncached: %s\nlog:    %s", variant, mustJSON(t, got), mustJSON(t, want))
					}
					rec, err := plain.Game(t.Context(), game.ID)
					if err != nil {
						t.Fatal(err)
					}
					if rec.Version != st.Version || rec.Moves != st.Moves || rec.Status != st.Status {
						t.Fatalf("%s: record %d/%d/%s, state %d/%d/%s", variant, rec.Version, rec.Moves, rec.Status,
							st.Version, st.Moves, st.Status)
					}
				}
			}
			if v, err := plain.VerifyChain(t.Context(), mustFirstGame(t, plain)); err != nil || v != 0 {
				t.Errorf("VerifyChain = %d, %v", v, err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func mustFirstGame(t *testing.T, s *persistence.Store) string {
	t.Helper()
	games, _, err := s.List(t.Context(), app.GameFilter{Limit: 1})
	if err != nil || len(games) == 0 {
		t.Fatalf("List: %v, %d games", err, len(games))
	}
	return games[0].ID
}

// TestCacheIsolation: what Load and Events return are the caller's:
// changing them later changes nothing the cache serves. (The state handed
// to Append is the other way round: the store's from then on, app.Store.)
func TestCacheIsolation(t *testing.T) {
	s, _, plain := cachedStores(t, persistence.DialectPostgres)
	id, _ := appendN(t, s, 3)
	_, got, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := sameAsLog(t, "as appended", s, plain, id, 4)
	got.Stock, got.Waste = nil, nil
	got.Tableau[0].Cards[0] = 0
	if again := sameAsLog(t, "after changing a loaded state", s, plain, id, 4); mustJSON(t, again) != mustJSON(t, want) {
		t.Fatal("a loaded state shares memory with the cache")
	}
	recs, err := s.Events(t.Context(), id, 3, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Events: %v, %d", err, len(recs))
	}
	recs[0].Hash[0] ^= 0xff
	again, err := s.Events(t.Context(), id, 3, 1)
	if err != nil || bytes.Equal(again[0].Hash, recs[0].Hash) {
		t.Fatal("records from Events share memory with the cache")
	}
}

// TestCacheRace: many goroutines append at the same expected version
// through one cached store (the one-statement append on PostgreSQL):
// exactly one wins, the others get ErrConflict, and Load equals the log.
func TestCacheRace(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			s, _, plain := cachedStores(t, dialect)
			id, st := appendN(t, s, 1) // version 2, cached
			at := st.LastAt
			for round := range 5 {
				const writers = 12
				var wins, conflicts atomic.Int32
				var wg sync.WaitGroup
				start := make(chan struct{})
				for w := range writers {
					wg.Go(func() {
						mine := st.Clone()
						e := drawEvent(mine, at.Add(time.Duration(round*writers+w+1)*time.Millisecond))
						mine.Apply(e)
						<-start
						_, err := s.Append(context.Background(), id, st.Version, []domain.Event{e}, app.AfterOf(mine), nil)
						switch {
						case err == nil:
							wins.Add(1)
						case errors.Is(err, domain.ErrConflict):
							conflicts.Add(1)
						default:
							t.Error(err)
						}
					})
				}
				close(start)
				wg.Wait()
				if wins.Load() != 1 || conflicts.Load() != writers-1 {
					t.Fatalf("round %d: %d wins, %d conflicts", round, wins.Load(), conflicts.Load())
				}
				st = sameAsLog(t, "after the race", s, plain, id, st.Version+1)
				at = at.Add(time.Second)
			}
		})
	}
}

// TestCacheBudget: a small budget keeps the estimated size within it by
// evicting the least recently used games, which then load from the
// database as before.
func TestCacheBudget(t *testing.T) {
	s, err := persistence.Open(t.Context(), persistence.Config{SQLitePath: filepath.Join(t.TempDir(), "b.db"),
		SnapshotEvery: 5, StateCacheBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for range 30 {
		id, _ := appendN(t, s, 2)
		ids = append(ids, id)
	}
	stats := s.CacheStats()
	if stats.Bytes > 16<<10 || stats.Entries == 0 || stats.Entries >= len(ids) {
		t.Fatalf("after 30 games: %+v; want some entries within 16 KiB", stats)
	}
	for _, id := range ids {
		if _, st, err := s.Load(t.Context(), id); err != nil || st.Version != 3 {
			t.Fatalf("Load %s: %v", id, err)
		}
	}
	if stats := s.CacheStats(); stats.Bytes > 16<<10 || stats.Misses == 0 {
		t.Fatalf("after loading all: %+v", stats)
	}
}

// countingPlayers is a PlayerStore that counts lookups.
type countingPlayers struct {
	app.PlayerStore
	lookups atomic.Int32
}

func (c *countingPlayers) PlayerByTokenHash(ctx context.Context, hash []byte) (*app.Player, error) {
	c.lookups.Add(1)
	return c.PlayerStore.PlayerByTokenHash(ctx, hash)
}

// TestPlayerCache: a known token is looked up once per TTL; an unknown
// one every time; results are copies.
func TestPlayerCache(t *testing.T) {
	s, err := persistence.Open(t.Context(), persistence.Config{SQLitePath: filepath.Join(t.TempDir(), "p.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hash := bytes.Repeat([]byte{7}, 32)
	if err := s.CreatePlayer(t.Context(), &app.Player{ID: "p1", Name: "Ada", TokenHash: hash,
		CreatedAt: domain.Millis(time.Now())}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want int32
	}{{time.Hour, 1}, {-1, 5}} {
		next := &countingPlayers{PlayerStore: s}
		c := persistence.NewPlayerCache(next, 10, tc.ttl)
		for range 5 {
			p, err := c.PlayerByTokenHash(t.Context(), hash)
			if err != nil || p.ID != "p1" || p.Name != "Ada" {
				t.Fatalf("lookup: %+v, %v", p, err)
			}
			p.Name = "changed"
		}
		if n := next.lookups.Load(); n != tc.want {
			t.Errorf("ttl %s: %d store lookups for 5, want %d", tc.ttl, n, tc.want)
		}
		for range 3 {
			if _, err := c.PlayerByTokenHash(t.Context(), make([]byte, 32)); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("unknown token: %v", err)
			}
		}
		if n := next.lookups.Load(); n != tc.want+3 {
			t.Errorf("unknown tokens were cached: %d lookups", n)
		}
		c.Forget(hash)
	}
}

// BenchmarkAppendCached is BenchmarkAppend with the state cache, as the
// server runs: on PostgreSQL each append is one statement (the head's
// hash comes from the cache), and appends waiting at the same moment
// share one statement and one commit (group commit, batch.go). 64
// writers is the load tool's client count.
func BenchmarkAppendCached(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("postgres/writers=%d", writers), func(b *testing.B) {
			s, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: pgtest.DSN(b),
				SnapshotEvery: persistence.DefaultSnapshotEvery, StateCacheBytes: persistence.DefaultStateCacheBytes,
				MaxConns: writers})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchAppends(b, s, writers)
		})
	}
}

// BenchmarkLoad loads a game of 10 and one of 10,000 events, with and
// without the state cache, on PostgreSQL. The events are relaxed draws,
// each an undoable turn: the undo record (State.Turns, Ops) grows with
// every one, the worst case for snapshots and for cloning.
func BenchmarkLoad(b *testing.B) {
	for _, events := range []int{10, 10_000} {
		for _, cache := range []int64{persistence.DefaultStateCacheBytes, 0} {
			b.Run(fmt.Sprintf("events=%d/cache=%t", events, cache > 0), func(b *testing.B) {
				s, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: pgtest.DSN(b),
					SnapshotEvery: persistence.DefaultSnapshotEvery, StateCacheBytes: cache})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				id, st := appendN(b, s, 0)
				var batch []domain.Event
				at := st.LastAt
				for st.Version < events {
					at = at.Add(time.Second)
					e := drawEvent(st, at)
					st.Apply(e)
					batch = append(batch, e)
					if st.Version%persistence.DefaultSnapshotEvery == 0 || st.Version == events {
						if _, err := s.Append(context.Background(), id, st.Version-len(batch), batch, app.AfterOf(st.Clone()), nil); err != nil {
							b.Fatal(err)
						}
						batch = nil
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, got, err := s.Load(context.Background(), id); err != nil || got.Version != events {
						b.Fatalf("Load: %v", err)
					}
				}
			})
		}
	}
}

// moveSetMinus returns the moves of LegalMoves(x) that are not in
// LegalMoves(y), resign left out.
func moveSetMinus(x, y *domain.State) []domain.Move {
	in := map[domain.Move]bool{}
	for _, m := range domain.LegalMoves(y) {
		in[m] = true
	}
	var out []domain.Move
	for _, m := range domain.LegalMoves(x) {
		if !in[m] && m.Type != domain.MoveResign {
			out = append(out, m)
		}
	}
	return out
}

// TestCommandOnStaleCache: a store whose cache is behind the log (another
// store, a second server process, appended since) answers moves exactly as
// a store without a cache would (app.CommandLoader): a move
// legal only in its stale state is refused with nothing written, a move
// legal only in the newest state is accepted, an If-Match of the newest
// version is accepted and one of the stale version is refused; the chain
// stays whole. Each case must occur, so the test fails if the unchecked
// path were never taken.
func TestCommandOnStaleCache(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			a, b, plain := cachedStores(t, dialect)
			clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			ga, gb := gamesOn(a, clock), gamesOn(b, clock)
			rng := rand.New(rand.NewPCG(5, 5))
			var cases [4]int // stale-only refused, new-only accepted, If-Match new, If-Match stale
			var id string
			for round := 0; round < 400 && (cases[0] < 3 || cases[1] < 3 || cases[2] < 3 || cases[3] < 3); round++ {
				if id == "" {
					game, _, err := ga.Create(t.Context(), app.NewGame{Owner: "p", Variant: "relaxed"})
					if err != nil {
						t.Fatal(err)
					}
					id = game.ID
				}
				// b reads the game (its cache now holds the newest state) ...
				if _, _, err := b.Load(t.Context(), id); err != nil {
					t.Fatal(err)
				}
				_, stale, verified, err := b.LoadForCommand(t.Context(), id)
				if err != nil || verified {
					t.Fatalf("LoadForCommand after Load: verified %v, err %v; want a cached state", verified, err)
				}
				// ... then a plays one to three moves, so b's cache is behind.
				cur := sameAsLog(t, "a", a, plain, id, stale.Version)
				for range 1 + rng.IntN(3) {
					_, after, _, err := ga.Play(t.Context(), "p", id, randomMove(t, cur, rng), -1, nil)
					if err != nil {
						t.Fatal(err)
					}
					cur = after
				}
				hits := b.CacheStats().CommandHits
				switch round % 4 {
				case 0: // a move only the stale state allows: refused, nothing written
					ms := moveSetMinus(stale, cur)
					if len(ms) == 0 {
						continue
					}
					_, _, _, err := gb.Play(t.Context(), "p", id, ms[rng.IntN(len(ms))], -1, nil)
					var me *domain.MoveError
					if !errors.As(err, &me) {
						t.Fatalf("move legal only at stale version %d (log at %d): err %v, want a MoveError",
							stale.Version, cur.Version, err)
					}
					sameAsLog(t, "after a refused move", plain, plain, id, cur.Version)
					cases[0]++
				case 1: // a move only the newest state allows: accepted
					ms := moveSetMinus(cur, stale)
					if len(ms) == 0 {
						continue
					}
					_, after, _, err := gb.Play(t.Context(), "p", id, ms[rng.IntN(len(ms))], -1, nil)
					if err != nil {
						t.Fatalf("move legal at version %d, b's cache at %d: %v", cur.Version, stale.Version, err)
					}
					cur = after
					cases[1]++
				case 2: // If-Match of the newest version: accepted
					_, after, _, err := gb.Play(t.Context(), "p", id, randomMove(t, cur, rng), cur.Version, nil)
					if err != nil {
						t.Fatalf("If-Match %d, b's cache at %d: %v", cur.Version, stale.Version, err)
					}
					cur = after
					cases[2]++
				case 3: // If-Match of the stale version: refused
					_, _, _, err := gb.Play(t.Context(), "p", id, randomMove(t, stale, rng), stale.Version, nil)
					if !errors.Is(err, app.ErrStaleVersion) {
						t.Fatalf("If-Match %d, log at %d: err %v, want ErrStaleVersion", stale.Version, cur.Version, err)
					}
					cases[3]++
				}
				if got := b.CacheStats().CommandHits; got != hits+1 {
					t.Fatalf("b's Play made %d unchecked loads, want 1 (the path under test)", got-hits)
				}
				sameAsLog(t, "b after its move", b, plain, id, cur.Version)
				if n, err := plain.VerifyChain(t.Context(), id); n != 0 || err != nil {
					t.Fatalf("chain broken at version %d (err %v)", n, err)
				}
				if cur.Status.Ended() {
					id = ""
				}
			}
			if cases[0] < 3 || cases[1] < 3 || cases[2] < 3 || cases[3] < 3 {
				t.Fatalf("cases seen %v, want each at least 3 times", cases)
			}
		})
	}
}

// TestCommandSkipsEntriesBehind: once another process's append notice
// (LISTEN, PostgreSQL) says a cached state is behind the log,
// LoadForCommand no longer hands it out unchecked (a move decided on it
// would surely be refused) but loads with the check; Load is unaffected.
func TestCommandSkipsEntriesBehind(t *testing.T) {
	a, b, plain := cachedStores(t, persistence.DialectPostgres)
	// b's LISTEN must be in place before a appends, or a's notice is
	// lost: wait for the wake-up every (re)connect sends.
	connected, unsubscribe := b.Subscribe("any")
	defer unsubscribe()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Listen(ctx) }()
	defer func() { stop(); <-done }()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("b's listener did not connect")
	}
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ga := gamesOn(a, clock)
	game, st, err := ga.Create(t.Context(), app.NewGame{Owner: "p", Variant: "relaxed"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Load(t.Context(), game.ID); err != nil { // b caches version 1
		t.Fatal(err)
	}
	if _, _, verified, err := b.LoadForCommand(t.Context(), game.ID); err != nil || verified {
		t.Fatalf("before any notice: verified %v, err %v; want the cached state", verified, err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	if _, st, _, err = ga.Play(t.Context(), "p", game.ID, randomMove(t, st, rng), -1, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, got, verified, err := b.LoadForCommand(t.Context(), game.ID)
		if err != nil {
			t.Fatal(err)
		}
		if verified {
			if got.Version != st.Version {
				t.Fatalf("checked load at version %d, log at %d", got.Version, st.Version)
			}
			break
		}
		if got.Version != 1 {
			t.Fatalf("unchecked state at version %d, want the cached 1", got.Version)
		}
		if time.Now().After(deadline) {
			t.Fatal("b's entry was never marked behind after a's append notice")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sameAsLog(t, "b after the notice", b, plain, game.ID, st.Version)
}

// TestCommandStateIsRead: LoadForCommand hands out the cache's own state
// (app.CommandLoader), so a move decided on it, and an expiry (R5.3)
// appended before a move past the time limit, must leave it as it was.
func TestCommandStateIsRead(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			s, _, _ := cachedStores(t, dialect)
			ctx := t.Context()
			now := t0
			g := service(s, &now)
			game, _, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klassik"}) // a 5-minute clock (R5.3)
			if err != nil {
				t.Fatal(err)
			}
			shared := func() (*domain.State, string) {
				t.Helper()
				_, st, verified, err := s.LoadForCommand(ctx, game.ID)
				if err != nil || verified {
					t.Fatalf("LoadForCommand: verified %v, %v; want the cache's state", verified, err)
				}
				return st, mustJSON(t, st)
			}
			st, before := shared()
			now = t0.Add(time.Second)
			if _, after, _, err := g.Play(ctx, "ada", game.ID, domain.Move{Type: domain.MoveDraw}, -1, nil); err != nil || after.Version != 2 {
				t.Fatalf("draw: %v", err)
			}
			if mustJSON(t, st) != before {
				t.Fatal("a move changed the state LoadForCommand handed out")
			}
			st, before = shared()
			now = t0.Add(400 * time.Second)
			_, after, _, err := g.Play(ctx, "ada", game.ID, domain.Move{Type: domain.MoveDraw}, -1, nil)
			if !errors.Is(err, domain.ErrTimeExpired) || after == nil || after.Status != domain.StatusExpired {
				t.Fatalf("draw past the limit: %v (state %v), want the expiry", err, after)
			}
			if mustJSON(t, st) != before || st.Status != domain.StatusInProgress {
				t.Fatal("the expiry changed the state LoadForCommand handed out")
			}
			if _, got, _, err := s.LoadForCommand(ctx, game.ID); err != nil || got.Status != domain.StatusExpired || got.Version != 3 {
				t.Fatalf("after the expiry: %v, %v", got, err)
			}
		})
	}
}
