package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// raceOutcome counts what concurrent appends to one game got, and keeps
// the winner's state.
type raceOutcome struct {
	mu              sync.Mutex
	wins, conflicts int
	errs            []error
	won             *domain.State
}

func (o *raceOutcome) add(err error, after *domain.State) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.wins++
		o.won = after
	case errors.Is(err, domain.ErrConflict):
		o.conflicts++
	default:
		o.errs = append(o.errs, err)
	}
}

// TestBatchAppendRace: two stores (two server processes) with warm caches
// append concurrently to many games, four writers per game and version,
// so that appends of different games are written in shared statements
// (group commit, batch.go) and the batches of the two stores overlap.
// Writers append one to three events at once; half the games keep a
// score (standard scoring) and half have none; the last round resigns
// every game (a finish time). For every game and round exactly one writer
// wins and the others get ErrConflict; the log then holds exactly the
// winner's state; afterwards each game's log is whole (chain verified),
// its events' positions rise with their versions, and both stores load
// what the log holds. On PostgreSQL some appends must have been batched.
func TestBatchAppendRace(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			a, b, plain := cachedStores(t, dialect)
			const games, rounds = 24, 6
			ids := make([]string, games)
			states := make([]*domain.State, games)
			for i := range ids {
				req := app.NewGame{Owner: "p1", Variant: "relaxed"}
				if i%2 == 0 {
					scoring := domain.ScoringStandard
					req.Options.Scoring = &scoring
				}
				g, st, err := app.NewGames(a).Create(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				ids[i], states[i] = g.ID, st
				if _, _, err := b.Load(t.Context(), ids[i]); err != nil {
					t.Fatal(err)
				}
			}
			for round := range rounds {
				outcomes := make([]raceOutcome, games)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, id := range ids {
					for w, s := range []*persistence.Store{a, b, a, b} {
						mine := states[i].Clone()
						var evs []domain.Event
						if round == rounds-1 {
							var err error
							evs, _, err = domain.Decide(mine, domain.Move{Type: domain.MoveResign},
								mine.LastAt.Add(time.Duration(w+1)*time.Millisecond))
							if err != nil {
								t.Fatal(err)
							}
						} else {
							for k := range 1 + (i+w+round)%3 {
								evs = append(evs, drawEvent(mine, mine.LastAt.Add(time.Duration(w+k+1)*time.Millisecond)))
								mine.Apply(evs[len(evs)-1])
							}
							mine = states[i].Clone()
						}
						for _, e := range evs {
							mine.Apply(e)
						}
						expected := states[i].Version
						wg.Go(func() {
							<-start
							_, err := s.Append(context.Background(), id, expected, evs, app.AfterOf(mine), nil)
							outcomes[i].add(err, mine)
						})
					}
				}
				close(start)
				wg.Wait()
				for i, id := range ids {
					o := &outcomes[i]
					if o.wins != 1 || o.conflicts != 3 || len(o.errs) > 0 {
						t.Fatalf("round %d, game %d: %d wins, %d conflicts, errors %v; want 1 and 3",
							round, i, o.wins, o.conflicts, o.errs)
					}
					states[i] = sameAsLog(t, "a after the race", a, plain, id, o.won.Version)
					if g, w := mustJSON(t, states[i]), mustJSON(t, o.won); g != w {
						t.Fatalf("round %d, game %d: the log holds\n%s\nnot the winner's state\n%s", round, i, g, w)
					}
					sameAsLog(t, "b after the race", b, plain, id, states[i].Version)
				}
			}
			for i, id := range ids {
				rec, err := plain.Game(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Status != domain.StatusLost || rec.FinishedAt == nil || (rec.Score != nil) != (i%2 == 0) {
					t.Fatalf("game %d: status %s, finished %v, score %v", i, rec.Status, rec.FinishedAt, rec.Score)
				}
				if n, err := plain.VerifyChain(t.Context(), id); n != 0 || err != nil {
					t.Fatalf("game %s: chain broken at version %d (err %v)", id, n, err)
				}
				recs, err := plain.Events(t.Context(), id, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for j := 1; j < len(recs); j++ {
					if recs[j].Position <= recs[j-1].Position {
						t.Fatalf("game %s: version %d at position %d, after version %d at %d",
							id, recs[j].Version, recs[j].Position, recs[j-1].Version, recs[j-1].Position)
					}
				}
			}
			sa, sb := a.AppendStats(), b.AppendStats()
			t.Logf("appender: a %+v, b %+v", sa, sb)
			if dialect == persistence.DialectPostgres && sa.Batches+sb.Batches == 0 {
				t.Fatalf("no append was batched (a %+v, b %+v): the group commit path was not taken", sa, sb)
			}
		})
	}
}

// TestBatchOneBadAppend: an append the database refuses does not fail the
// appends it shares a statement with. One game's log is broken on purpose
// (an event row past the games row's version, so its next append violates
// the unique version); every round appends to it and to fifteen sound
// games at once, until a batch holding the bad append has failed and been
// written one append at a time. The sound games' appends all succeed, the
// bad game's is refused each time, and nothing of it is written.
func TestBatchOneBadAppend(t *testing.T) {
	s, _, plain := cachedStores(t, persistence.DialectPostgres)
	const games = 16
	ids := make([]string, games)
	states := make([]*domain.State, games)
	for i := range ids {
		ids[i], states[i] = appendN(t, s, 1)
	}
	bad := ids[0]
	if _, err := plain.DB().ExecContext(t.Context(), `INSERT INTO events
		(game_id, version, type, payload, occurred_at, prev_hash, hash)
		VALUES ($1, $2, 'stock_drawn', '\x7b7d', 0, '\x00', '\x00')`, bad, states[0].Version+1); err != nil {
		t.Fatal(err)
	}
	for round := 0; s.AppendStats().Fallbacks == 0; round++ {
		if round == 50 {
			t.Fatalf("after %d rounds no batch with the bad append failed: %+v", round, s.AppendStats())
		}
		errs := make([]error, games)
		afters := make([]*domain.State, games)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, id := range ids {
			afters[i] = states[i].Clone()
			e := drawEvent(afters[i], states[i].LastAt.Add(time.Second))
			afters[i].Apply(e)
			expected := states[i].Version
			wg.Go(func() {
				<-start
				_, errs[i] = s.Append(context.Background(), id, expected, []domain.Event{e}, app.AfterOf(afters[i]), nil)
			})
		}
		close(start)
		wg.Wait()
		if errs[0] == nil {
			t.Fatalf("round %d: the append to the broken game was accepted", round)
		}
		for i := 1; i < games; i++ {
			if errs[i] != nil {
				t.Fatalf("round %d: sound game %d refused beside the broken one: %v", round, i, errs[i])
			}
			states[i] = sameAsLog(t, fmt.Sprintf("sound game %d", i), s, plain, ids[i], states[i].Version+1)
		}
	}
	var n int
	if err := plain.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM events WHERE game_id = $1`, bad).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := states[0].Version + 1; n != want { // its events and the planted one
		t.Fatalf("broken game has %d event rows, want %d: a refused append wrote something", n, want)
	}
	t.Logf("appender: %+v", s.AppendStats())
}

// TestBatchClose: closing a store while appends are being submitted ends
// every one of them (no hang, no panic): an append that succeeded is in
// the log, one refused for the closed store (ErrUnavailable) is not.
func TestBatchClose(t *testing.T) {
	s, _, plain := cachedStores(t, persistence.DialectPostgres)
	const games = 32
	ids := make([]string, games)
	states := make([]*domain.State, games)
	for i := range ids {
		ids[i], states[i] = appendN(t, s, 1)
	}
	errs := make([]error, games)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, id := range ids {
		after := states[i].Clone()
		e := drawEvent(after, states[i].LastAt.Add(time.Second))
		after.Apply(e)
		wg.Go(func() {
			<-start
			if i%4 == 0 { // some submit a little later, when Close may be done
				time.Sleep(time.Duration(i) * 100 * time.Microsecond)
			}
			_, errs[i] = s.Append(context.Background(), id, states[i].Version, []domain.Event{e}, app.AfterOf(after), nil)
		})
	}
	close(start)
	time.Sleep(200 * time.Microsecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("appends still waiting 30 s after Close")
	}
	written := 0
	for i, id := range ids {
		g, err := plain.Game(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case errs[i] == nil && g.Version == states[i].Version+1:
			written++
		case errs[i] != nil && errors.Is(errs[i], persistence.ErrUnavailable) && g.Version == states[i].Version:
		default:
			t.Fatalf("game %d: append returned %v, log at version %d (was %d)", i, errs[i], g.Version, states[i].Version)
		}
	}
	t.Logf("%d of %d appends written before Close", written, games)
}

// TestBatchLoneAppendHonoursItsContext: an append written by its own
// caller (its shard idle, batch.go writeIdle) runs under the caller's
// context. Another transaction holds the game's row lock for 3 s; an
// append with a 200 ms deadline returns its context's error before the
// lock goes, and the games row stays at its version: the cancelled
// statement wrote nothing.
func TestBatchLoneAppendHonoursItsContext(t *testing.T) {
	s, _, plain := cachedStores(t, persistence.DialectPostgres)
	id, st := appendN(t, s, 1)
	tx, err := plain.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(t.Context(), `SELECT 1 FROM games WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(3 * time.Second)
		tx.Rollback()
		close(released)
	}()
	after := st.Clone()
	e := drawEvent(after, st.LastAt.Add(time.Second))
	after.Apply(e)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = s.Append(ctx, id, st.Version, []domain.Event{e}, app.AfterOf(after), nil)
	took := time.Since(began)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append under a held row lock with a 200 ms deadline: %v, want context.DeadlineExceeded", err)
	}
	select {
	case <-released:
		t.Fatalf("the append returned after the lock went (%s), not at its deadline", took)
	default:
	}
	<-released
	g, err := plain.Game(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if g.Version != st.Version { // the statement was cancelled with its context
		t.Fatalf("games row at version %d after a cancelled append, want %d", g.Version, st.Version)
	}
}
