package persistence

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestBatchLockOrder: two processes' batch statements lock their games
// rows in one order (id order), whatever plan each process's planner picks
// and whatever order the rows have on disk, so they cannot deadlock. The
// setting is one that deadlocks a statement which locks rows as its join
// meets them: games a < b < c by id, on disk in the order b, c, a; c held
// by a third transaction. Batch X = {a, b, c}, scanning the table, would
// lock b and wait for c; batch Y = {a, b}, looking ids up, would lock a
// and wait for b; once c is released X would wait for a: a deadlock. Both statements must succeed: X writes
// its three appends, Y finds every version moved on (three and two
// conflicts are no errors of the statement).
func TestBatchLockOrder(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	open := func(settings string) *Store {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += "options=" + strings.ReplaceAll(url.QueryEscape(settings), "+", "%20") // pgx takes "+" literally
		s, err := Open(ctx, Config{DatabaseURL: u.String(), SnapshotEvery: DefaultSnapshotEvery, StateCacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	// The two processes' planners are pushed to different plans, as
	// different batch sizes and statistics can: s1 joins by scanning the
	// table (rows met in their order on disk), s2 by looking each id up
	// (rows met in the batch's order).
	s1 := open("-c enable_nestloop=off -c enable_mergejoin=off -c enable_indexscan=off -c enable_bitmapscan=off")
	s2 := open("-c enable_hashjoin=off -c enable_mergejoin=off")
	games := app.NewGames(s1)
	type made struct {
		id string
		st *domain.State
	}
	var all []made
	for range 43 { // three to play, the rest filler: a plan that scans the table
		g, st, err := games.Create(ctx, app.NewGame{Owner: "p", Variant: "relaxed"})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, made{g.ID, st})
	}
	// Rows sit on disk in the order they were inserted (nothing updates or
	// deletes them here). Pick b, c, a inserted in that order with ids
	// a < b < c.
	var a, b, c made
	found := false
	for i := 0; i < len(all) && !found; i++ {
		for j := i + 1; j < len(all) && !found; j++ {
			for k := j + 1; k < len(all) && !found; k++ {
				if all[k].id < all[i].id && all[i].id < all[j].id {
					b, c, a, found = all[i], all[j], all[k], true
				}
			}
		}
	}
	if !found {
		t.Fatal("no three games with ids in the order wanted")
	}
	db := s1.DB()
	req := func(s *Store, m made) *appendReq {
		after := m.st.Clone()
		evs, _, err := domain.Decide(after, domain.Move{Type: domain.MoveDraw}, m.st.LastAt.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			after.Apply(e)
		}
		head, ok := s1.cache.head(m.id, m.st.Version)
		if !ok {
			t.Fatalf("no cached head for %s", m.id)
		}
		recs, err := domain.Record(m.id, head, evs)
		if err != nil {
			t.Fatal(err)
		}
		return &appendReq{ctx: ctx, gameID: m.id, expected: m.st.Version, recs: recs, p: app.ProjectionOf(after), after: after,
			done: make(chan error, 1)}
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, `SELECT 1 FROM games WHERE id = $1 FOR UPDATE`, c.id); err != nil {
		t.Fatal(err)
	}
	waiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			var got int
			err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got)
			if err != nil {
				t.Fatal(err)
			}
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d statements waiting for a lock, want %d", got, n)
			}
		}
	}
	type result struct {
		inserted []int
		err      error
	}
	run := func(s *Store, reqs []*appendReq) chan result {
		out := make(chan result, 1)
		go func() {
			n, err := s.appendMany(context.Background(), reqs)
			out <- result{n, err}
		}()
		return out
	}
	x := run(s1, []*appendReq{req(s1, a), req(s1, b), req(s1, c)})
	waiting(1)
	y := run(s2, []*appendReq{req(s2, a), req(s2, b)})
	waiting(2)
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	rx, ry := <-x, <-y
	if rx.err != nil || ry.err != nil {
		t.Fatalf("batch X: %v; batch Y: %v (deadlock?)", rx.err, ry.err)
	}
	if !slices.Equal(rx.inserted, []int{1, 1, 1}) || !slices.Equal(ry.inserted, []int{0, 0}) {
		t.Fatalf("events inserted: X %v, want [1 1 1]; Y %v, want [0 0]", rx.inserted, ry.inserted)
	}
	for _, m := range []made{a, b, c} {
		var v int
		if err := db.QueryRowContext(ctx, `SELECT version FROM games WHERE id = $1`, m.id).Scan(&v); err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		if v != m.st.Version+1 {
			t.Fatalf("game %s at version %d, want %d", m.id, v, m.st.Version+1)
		}
	}
}

// TestBatchStatementBound: an append statement that gets no answer (its
// games row locked by another transaction) is cut once it has run for the
// appender's bound (batchTimeout; 400 ms here), though its caller set no
// deadline: the caller hears ErrUnavailable (the outcome is unknown), not
// the lock's end 5 s on, and the store's next append, on a healthy
// connection, is written.
func TestBatchStatementBound(t *testing.T) {
	ctx := t.Context()
	const bound = 400 * time.Millisecond
	s, g, st, released := lockedGame(t, bound)
	t.Cleanup(func() { s.Close() })
	draw := func(st *domain.State) ([]domain.Event, app.After) {
		evs, after, err := domain.Decide(st, domain.Move{Type: domain.MoveDraw}, st.LastAt.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return evs, app.AfterOf(after)
	}
	evs, after := draw(st)
	began := time.Now()
	_, err := s.Append(context.Background(), g.ID, st.Version, evs, after, nil)
	took := time.Since(began)
	if !errors.Is(err, ErrUnavailable) || took < bound || took > 3*time.Second {
		t.Fatalf("append under a held row lock: %v after %s; want ErrUnavailable after %s to %s", err, took, bound, bound*9/8)
	}
	<-released
	_, st, err = s.Load(ctx, g.ID) // the cut statement may have been written: its outcome is unknown
	if err != nil {
		t.Fatal(err)
	}
	evs, after = draw(st)
	if _, err := s.Append(ctx, g.ID, st.Version, evs, after, nil); err != nil {
		t.Fatalf("append after a cut statement: %v", err)
	}
}

// TestBatchCloseKeepsTheBound: Close writes the appends still queued, and
// their statements stay bounded (by the watch, which stops only after the
// shards, and by the batch's own context), so Close returns once a stuck
// statement is cut (400 ms here), not when the row lock that holds it
// goes 5 s on. It fails with neither bound.
func TestBatchCloseKeepsTheBound(t *testing.T) {
	const bound = 400 * time.Millisecond
	s, g, st, _ := lockedGame(t, bound)
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})
	errs := make(chan error, 2)
	for i := range 2 { // the first is written by its caller, the second queues behind it
		evs, after, err := domain.Decide(st, domain.Move{Type: domain.MoveDraw}, st.LastAt.Add(time.Duration(i+1)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := s.Append(context.Background(), g.ID, st.Version, evs, app.AfterOf(after), nil)
			errs <- err
		}()
		time.Sleep(100 * time.Millisecond)
	}
	began := time.Now()
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	closed = true
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("Close took %s with a stuck statement queued; want the watch's bound (%s) and a little", took, bound)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrUnavailable) {
			t.Errorf("append cut at Close: %v, want ErrUnavailable", err)
		}
	}
}

// lockedGame opens a PostgreSQL store whose appender bounds each statement
// at bound (set before its first append starts the appender), deals a
// relaxed game on it, and has another transaction hold the game's row lock
// for 5 s, so that an append to it waits; released is closed when the lock
// goes. The caller closes the store.
func lockedGame(t *testing.T, bound time.Duration) (*Store, *app.Game, *domain.State, <-chan struct{}) {
	t.Helper()
	ctx := t.Context()
	s, err := Open(ctx, Config{DatabaseURL: pgtest.DSN(t), StateCacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s.appender.timeout = bound
	g, st, err := app.NewGames(s).Create(ctx, app.NewGame{Owner: "p", Variant: "relaxed"})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	holder, err := s.DB().BeginTx(ctx, nil)
	if err == nil {
		_, err = holder.ExecContext(ctx, `SELECT 1 FROM games WHERE id = $1 FOR UPDATE`, g.ID)
	}
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(5 * time.Second)
		holder.Rollback()
		close(released)
	}()
	return s, g, st, released
}
