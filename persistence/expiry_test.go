package persistence_test

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// both runs f as a subtest on a fresh store of each dialect.
func both(t *testing.T, f func(t *testing.T, s *persistence.Store)) {
	for name, open := range map[string]func(*testing.T) *persistence.Store{"postgres": openPostgres, "sqlite": openSQLite} {
		t.Run(name, func(t *testing.T) { f(t, open(t)) })
	}
}

// service is app.Games on s with a clock the test moves.
func service(s *persistence.Store, now *time.Time) *app.Games {
	return &app.Games{Store: s, Now: func() time.Time { return *now }, Random: rand.Reader, Retries: 3}
}

// ph is the first placeholder of s's dialect in database/sql.
func ph(s *persistence.Store) string {
	if s.Dialect() == persistence.DialectPostgres {
		return "$1"
	}
	return "?"
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// R5.3: games.deadline_at is the state's deadline (a limited clock starts
// at creation, R5.2); DueForExpiry lists the games in progress past it,
// earliest first, up to limit; ExpireDue on the store ends them and they
// are due no more.
func TestR5_3_DueForExpiry(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		now := t0
		g := service(s, &now)
		var timed []string
		for i := range 3 {
			now = t0.Add(time.Duration(i) * time.Second)
			game, st, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klassik"})
			if err != nil {
				t.Fatal(err)
			}
			timed = append(timed, game.ID)
			var dl int64
			if err := s.DB().QueryRowContext(ctx, "SELECT deadline_at FROM games WHERE id = "+ph(s), game.ID).Scan(&dl); err != nil {
				t.Fatal(err)
			}
			want, _ := st.Deadline()
			if dl != want.UnixMilli() {
				t.Fatalf("deadline_at %d, state's deadline %d", dl, want.UnixMilli())
			}
		}
		free, _, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klondike"})
		if err != nil {
			t.Fatal(err)
		}
		limited := 20
		odd, _, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klondike", Options: domain.Options{TimeLimitS: &limited}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			at    time.Time
			limit int
			want  []string
		}{
			{t0.Add(19 * time.Second), 10, nil},
			{t0.Add(22 * time.Second), 10, []string{odd.ID}},
			{t0.Add(300 * time.Second), 10, []string{odd.ID, timed[0]}},
			{t0.Add(400 * time.Second), 2, []string{odd.ID, timed[0]}},
			{t0.Add(400 * time.Second), 10, []string{odd.ID, timed[0], timed[1], timed[2]}},
		} {
			got, err := s.DueForExpiry(ctx, c.at, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("due at +%s (limit %d): %v, want %v", c.at.Sub(t0), c.limit, got, c.want)
			}
		}
		now = t0.Add(time.Hour)
		n, err := g.ExpireDue(ctx, now)
		if err != nil || n != 4 {
			t.Fatalf("ExpireDue: %d, %v", n, err)
		}
		if got, err := s.DueForExpiry(ctx, now, 10); err != nil || len(got) != 0 {
			t.Errorf("due after the sweep: %v, %v", got, err)
		}
		for _, id := range append(timed, odd.ID) {
			if _, st, err := s.Load(ctx, id); err != nil || st.Status != domain.StatusExpired {
				t.Errorf("game %s after the sweep: %v %v", id, st.Status, err)
			}
		}
		if _, st, _ := s.Load(ctx, free.ID); st.Status != domain.StatusInProgress {
			t.Errorf("a game without a limit: %s", st.Status)
		}
	})
}

// DueForClosing lists the running games of duels past their deadline and
// of daily deals of an earlier UTC day, and nothing else.
func TestDueForClosing(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		now := t0
		g := service(s, &now)
		duel := newDuel(t, s, "klondike", t0.Add(time.Hour))
		mk := func(owner string, ng app.NewGame) string {
			ng.Owner, ng.Variant = owner, "klondike"
			game, _, err := g.Create(ctx, ng)
			if err != nil {
				t.Fatal(err)
			}
			return game.ID
		}
		inDuel := mk("ada", app.NewGame{CompetitionID: duel.ID, ServerSeed: &duel.Seed, Salt: duel.Salt})
		endedInDuel := mk("bob", app.NewGame{CompetitionID: duel.ID, ServerSeed: &duel.Seed, Salt: duel.Salt})
		if _, _, _, err := g.Play(ctx, "bob", endedInDuel, domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
			t.Fatal(err)
		}
		daily := mk("ada", app.NewGame{DailyDate: "2026-11-29", CompetitionID: "daily:klondike:2026-11-29"})
		mk("ada", app.NewGame{}) // an ordinary game

		for _, c := range []struct {
			at   time.Time
			want []string
		}{
			{t0.Add(59 * time.Minute), nil},
			{t0.Add(time.Hour), []string{inDuel}},
			{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), []string{daily, inDuel}},
		} {
			got, err := s.DueForClosing(ctx, c.at, 10)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Errorf("closing at %s: %v, want %v", c.at, got, c.want)
			}
		}
		now = time.Date(2026, 11, 30, 0, 0, 1, 0, time.UTC)
		if n, err := g.CloseDue(ctx, now); err != nil || n != 2 {
			t.Fatalf("CloseDue: %d, %v", n, err)
		}
		if got, err := s.DueForClosing(ctx, now, 10); err != nil || len(got) != 0 {
			t.Errorf("after CloseDue: %v, %v", got, err)
		}
	})
}
