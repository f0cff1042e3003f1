package persistence_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// newDuel stores a two-seat duel of variant's default rules closing at
// deadline.
func newDuel(t *testing.T, s *persistence.Store, variant string, deadline time.Time) *app.Duel {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	var b [24]byte
	rand.Read(b[:])
	salt := make([]byte, 32)
	rand.Read(salt)
	seed := binary.BigEndian.Uint64(b[16:])
	d := &app.Duel{ID: fmt.Sprintf("%x", b[:16]), Variant: variant, Rules: v.Defaults, Ranked: true,
		CreatedBy: "ada", DealSecret: app.DealSecret{Seed: seed, Salt: salt, Commitment: domain.Commitment(domain.Deal(v.Defaults, seed), salt)},
		CreatedAt: t0, Deadline: deadline, MaxPlayers: 2}
	if err := s.CreateDuel(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// exec runs a statement written with ? placeholders on either dialect.
func exec(t *testing.T, s *persistence.Store, q string, args ...any) {
	t.Helper()
	if _, err := s.DB().ExecContext(context.Background(), s.Rebind(q), args...); err != nil {
		t.Fatal(err)
	}
}

// R6.3, R6.6: a duel round-trips; however many requests race for its two
// seats, two players get one each and nobody gets two; a full duel seats
// nobody more; a seat without a game holds the duel open until SeatTTL;
// the duel ends (and records when) once every seat holds a game that has
// ended, or at its deadline.
func TestR6_3_DuelSeats(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		now := t0
		g := service(s, &now)
		d := newDuel(t, s, "klondike", t0.Add(time.Hour))
		got, err := s.Duel(ctx, d.ID)
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("Duel = %+v, %v\nwant %+v", got, err, d)
		}
		if _, err := s.Duel(ctx, "nope"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("unknown duel: %v", err)
		}
		if err := s.CreateDuel(ctx, d); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("duplicate duel: %v", err)
		}
		if _, err := s.TakeDuelSeat(ctx, "nope", "ada", now); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("seat in an unknown duel: %v", err)
		}

		players := []string{"ada", "bob", "cat", "dan", "eve", "fay"}
		var (
			mu        sync.Mutex
			taken     = map[string]int{}
			conflicts = map[string]int{}
			wg        sync.WaitGroup
		)
		for _, p := range players {
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.TakeDuelSeat(ctx, d.ID, p, now)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil && ok:
						taken[p]++
					case errors.Is(err, domain.ErrConflict):
						conflicts[p]++
					case err == nil: // full
					default:
						t.Errorf("seat for %s: %v, %v", p, ok, err)
					}
				}()
			}
		}
		wg.Wait()
		var seated []string
		for _, p := range players {
			if taken[p] > 1 || taken[p] == 0 && conflicts[p] > 0 {
				t.Errorf("%s: %d seats, %d conflicts", p, taken[p], conflicts[p])
			}
			if taken[p] == 1 {
				seated = append(seated, p)
			}
		}
		if len(seated) != 2 {
			t.Fatalf("seated %v, want two players", seated)
		}
		if ok, err := s.TakeDuelSeat(ctx, d.ID, "zoe", now); ok || err != nil {
			t.Errorf("a seat in a full duel: %v, %v", ok, err)
		}
		if over, err := s.EndDuel(ctx, d.ID, now); over || err != nil {
			t.Fatalf("a duel with seats waiting for games is over: %v, %v", over, err)
		}
		// The seated players get their games; everybody gives up a seat
		// without a game.
		var ids []string
		for i, p := range seated {
			now = t0.Add(time.Duration(i) * time.Second)
			game, _, err := g.Create(ctx, app.NewGame{Owner: p, Variant: "klondike", ServerSeed: &d.Seed, Salt: d.Salt, CompetitionID: d.ID})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, game.ID)
			if id, err := s.DuelGameOf(ctx, d.ID, p); err != nil || id != game.ID {
				t.Errorf("DuelGameOf(%s) = %s, %v", p, id, err)
			}
		}
		for _, p := range players {
			if err := s.LeaveDuelSeat(ctx, d.ID, p); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := s.TakeDuelSeat(ctx, d.ID, seated[0], now); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("a seat with a game was given up: %v %v", ok, err)
		}
		if over, err := s.EndDuel(ctx, d.ID, now); over || err != nil {
			t.Fatalf("a duel with running games is over: %v, %v", over, err)
		}
		for i, p := range seated {
			now = t0.Add(time.Duration(i+1) * time.Minute)
			if _, _, _, err := g.Play(ctx, p, ids[i], domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
				t.Fatal(err)
			}
		}
		games, err := s.DuelGames(ctx, d.ID)
		if err != nil || len(games) != 2 || games[0].ID != ids[0] || games[1].Status != domain.StatusLost {
			t.Fatalf("DuelGames = %+v, %v", games, err)
		}
		// Zoe's seat request finds the duel over (and records it).
		if ok, err := s.TakeDuelSeat(ctx, d.ID, "zoe", now); ok || err != nil {
			t.Fatalf("seat after every game ended: %v, %v", ok, err)
		}
		if over, err := s.EndDuel(ctx, d.ID, now.Add(time.Hour)); !over || err != nil {
			t.Fatalf("EndDuel = %v, %v", over, err)
		}
		if got, _ := s.Duel(ctx, d.ID); got.EndedAt == nil || !got.EndedAt.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("ended at %v, want the last game's end %s", got.EndedAt, t0.Add(2*time.Minute))
		}

		// A seat whose game never came: it holds the duel open for SeatTTL,
		// then its player may take a new one, and the duel ends at its
		// deadline once no fresh seat waits.
		d2 := newDuel(t, s, "klondike", t0.Add(90*time.Second))
		if ok, err := s.TakeDuelSeat(ctx, d2.ID, "ada", t0); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if _, err := s.TakeDuelSeat(ctx, d2.ID, "ada", t0.Add(30*time.Second)); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("fresh seat retaken: %v", err)
		}
		if ok, err := s.TakeDuelSeat(ctx, d2.ID, "ada", t0.Add(61*time.Second)); !ok || err != nil {
			t.Errorf("stale seat not replaced: %v, %v", ok, err)
		}
		if over, _ := s.EndDuel(ctx, d2.ID, t0.Add(100*time.Second)); over {
			t.Error("over past the deadline with a fresh seat waiting")
		}
		if over, err := s.EndDuel(ctx, d2.ID, t0.Add(122*time.Second)); !over || err != nil {
			t.Errorf("over after the seat went stale: %v, %v", over, err)
		}
		if got, _ := s.Duel(ctx, d2.ID); got.EndedAt == nil || !got.EndedAt.Equal(d2.Deadline) {
			t.Errorf("an unplayed duel ended at %v, want its deadline", got.EndedAt)
		}
		if over, err := s.EndDuel(ctx, "nope", now); over || err != nil {
			t.Errorf("EndDuel(unknown) = %v, %v", over, err)
		}
	})
}

// Joins racing for the last seat while the first player's game ends: one
// of them is seated, and the duel has not ended (a seat waits for its game;
// a duel ends only once every seat holds an ended game, R6.6).
func TestDuelLastSeatRace(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		now := t0
		g := service(s, &now)
		for round := range 5 {
			d := newDuel(t, s, "klondike", t0.Add(time.Hour))
			if ok, err := s.TakeDuelSeat(ctx, d.ID, "ada", now); !ok || err != nil {
				t.Fatal(ok, err)
			}
			game, _, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klondike", ServerSeed: &d.Seed, Salt: d.Salt, CompetitionID: d.ID})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			seated := make(chan string, 4)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, _, err := g.Play(ctx, "ada", game.ID, domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
					t.Error(err)
				}
				if _, err := s.EndDuel(ctx, d.ID, now); err != nil {
					t.Error(err)
				}
			}()
			for _, p := range []string{"bob", "cat", "dan", "eve"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.TakeDuelSeat(ctx, d.ID, p, now)
					if err != nil {
						t.Error(err)
					}
					if ok {
						seated <- p
					}
				}()
			}
			wg.Wait()
			close(seated)
			n := len(seated)
			over, err := s.EndDuel(ctx, d.ID, now)
			if err != nil {
				t.Fatal(err)
			}
			if over || n != 1 {
				t.Fatalf("round %d: over %v with %d seated for the last seat", round, over, n)
			}
		}
	})
}

// Daily deals: racing first players agree on one deal per variant and
// day; one daily game per player, variant and day.
func TestDailyDeals(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		if _, err := s.FindDailyDeal(ctx, "klondike", "2026-11-29"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("no deal yet: %v", err)
		}
		var wg sync.WaitGroup
		got := make([]*app.DailyDeal, 8)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				salt := make([]byte, 32)
				rand.Read(salt)
				d, err := s.EnsureDailyDeal(ctx, app.DailyDeal{Variant: "klondike", Day: "2026-11-29",
					DealSecret: app.DealSecret{Seed: uint64(i + 1), Salt: salt, Commitment: fmt.Sprint(i)}, CreatedAt: t0})
				if err != nil {
					t.Error(err)
				}
				got[i] = d
			}()
		}
		wg.Wait()
		for _, d := range got[1:] {
			if !reflect.DeepEqual(d, got[0]) {
				t.Fatalf("racing first players got different deals: %+v and %+v", d, got[0])
			}
		}
		if d, err := s.FindDailyDeal(ctx, "klondike", "2026-11-29"); err != nil || !reflect.DeepEqual(d, got[0]) {
			t.Errorf("FindDailyDeal = %+v, %v", d, err)
		}
		other, err := s.EnsureDailyDeal(ctx, app.DailyDeal{Variant: "klondike", Day: "2026-11-30",
			DealSecret: app.DealSecret{Seed: 99, Salt: make([]byte, 32)}, CreatedAt: t0})
		if err != nil || other.Seed != 99 {
			t.Errorf("next day's deal: %+v, %v", other, err)
		}
		if _, err := s.EnsureDailyDeal(ctx, app.DailyDeal{Variant: "klondike", Day: "x", DealSecret: app.DealSecret{Salt: []byte{1}}}); err == nil {
			t.Error("a short salt was stored")
		}

		now := t0
		g := service(s, &now)
		id := "daily:klondike:2026-11-29"
		var games []string
		for _, p := range []string{"ada", "bob"} {
			game, _, err := g.Create(ctx, app.NewGame{Owner: p, Variant: "klondike", ServerSeed: &got[0].Seed,
				Salt: got[0].Salt, DailyDate: "2026-11-29", CompetitionID: id})
			if err != nil {
				t.Fatal(err)
			}
			games = append(games, game.ID)
		}
		if _, _, err := g.Create(ctx, app.NewGame{Owner: "ada", Variant: "klondike", DailyDate: "2026-11-29"}); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("second daily game: %v", err)
		}
		if gid, err := s.DailyGameOf(ctx, "bob", "klondike", "2026-11-29"); err != nil || gid != games[1] {
			t.Errorf("DailyGameOf = %s, %v", gid, err)
		}
		if _, err := s.DailyGameOf(ctx, "cat", "klondike", "2026-11-29"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("DailyGameOf(cat) = %v", err)
		}
		if dg, err := s.DailyGames(ctx, "klondike", "2026-11-29"); err != nil || len(dg) != 2 {
			t.Errorf("DailyGames = %d, %v", len(dg), err)
		}
	})
}

// Statistics and leaderboards read ranked games only: PlayedGames those
// with a move, Leaderboard each player's best win (score, then time, then
// moves, then id) within a finishing window.
func TestStatsQueries(t *testing.T) {
	both(t, func(t *testing.T, s *persistence.Store) {
		ctx := context.Background()
		now := t0
		g := service(s, &now)
		seed := uint64(7)
		three := 3
		type spec struct {
			owner, variant string
			opts           domain.Options
			seed           *uint64
			status         domain.Status
			moves          int
			elapsed        int64
			score          *int
			finished       time.Time
		}
		score := func(n int) *int { return &n }
		specs := []spec{
			{"ada", "klondike", domain.Options{}, nil, domain.StatusWon, 90, 100_000, nil, t0},
			{"ada", "klondike", domain.Options{}, nil, domain.StatusWon, 95, 50_000, nil, t0.Add(time.Hour)},
			{"bob", "klondike", domain.Options{}, nil, domain.StatusWon, 99, 50_000, nil, t0},
			{"cat", "klondike", domain.Options{}, nil, domain.StatusWon, 120, 40_000, nil, t0.Add(24 * time.Hour)},
			{"dan", "klondike", domain.Options{}, nil, domain.StatusLost, 3, 1_000, nil, t0},
			{"eve", "klondike", domain.Options{}, &seed, domain.StatusWon, 60, 1_000, nil, t0}, // unranked
			{"fay", "relaxed", domain.Options{Draw: &three}, nil, domain.StatusWon, 70, 1_000, nil, t0},
			{"ada", "klassik", domain.Options{}, nil, domain.StatusWon, 80, 200_000, score(4200), t0},
			{"bob", "klassik", domain.Options{}, nil, domain.StatusWon, 80, 100_000, score(4000), t0},
			{"ada", "klondike", domain.Options{}, nil, domain.StatusInProgress, 0, 0, nil, time.Time{}},
			{"ada", "klondike", domain.Options{}, nil, domain.StatusInProgress, 4, 9_000, nil, time.Time{}},
		}
		ids := make([]string, len(specs))
		for i, sp := range specs {
			now = t0.Add(time.Duration(i) * time.Second)
			game, _, err := g.Create(ctx, app.NewGame{Owner: sp.owner, Variant: sp.variant, Options: sp.opts, Seed: sp.seed})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = game.ID
			var finished any
			if !sp.finished.IsZero() {
				finished = sp.finished.UnixMilli()
			}
			var sc any
			if sp.score != nil {
				sc = *sp.score
			}
			// The projection, and for an ended game a leaf recording the
			// same result (what Log.Sequence writes from the replayed log):
			// these queries read nothing else.
			exec(t, s, `UPDATE games SET status = ?, moves = ?, elapsed_ms = ?, score = ?, finished_at = ? WHERE id = ?`,
				string(sp.status), sp.moves, sp.elapsed, sc, finished, game.ID)
			if finished != nil {
				exec(t, s, `INSERT INTO tlog_leaves (idx, game_id, record, created_at, status, score, moves, events, ended_at, elapsed_ms)
					VALUES (?, ?, ?, 0, ?, ?, ?, 1, ?, ?)`, i, game.ID, []byte("{}"), string(sp.status), sc, sp.moves, finished, sp.elapsed)
			}
		}
		board := func(variant string, draw int, from, to time.Time, limit int) []string {
			t.Helper()
			games, err := s.Leaderboard(ctx, variant, draw, false, from, to, limit)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, g := range games {
				out = append(out, g.Owner+fmt.Sprint(g.ElapsedMS/1000))
			}
			return out
		}
		for _, c := range []struct {
			name     string
			got      []string
			want     []string
			variant  string
			draw     int
			from, to time.Time
		}{
			{name: "all", got: board("klondike", 1, time.Time{}, time.Time{}, 10), want: []string{"cat40", "ada50", "bob50"}},
			{name: "limit", got: board("klondike", 1, time.Time{}, time.Time{}, 2), want: []string{"cat40", "ada50"}},
			{name: "day", got: board("klondike", 1, t0.Add(-time.Hour), t0.Add(23*time.Hour), 10), want: []string{"ada50", "bob50"}},
			{name: "draw", got: board("relaxed", 3, time.Time{}, time.Time{}, 10), want: []string{"fay1"}},
			{name: "no draw 1", got: board("relaxed", 1, time.Time{}, time.Time{}, 10), want: []string{}},
			{name: "score", got: board("klassik", 3, time.Time{}, time.Time{}, 10), want: []string{"ada200", "bob100"}},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
			}
		}

		played, err := s.PlayedGames(ctx, "ada", "", 0, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range played {
			got = append(got, g.ID)
		}
		if want := []string{ids[0], ids[1], ids[7], ids[10]}; !reflect.DeepEqual(got, want) {
			t.Errorf("ada's played games %v, want %v", got, want)
		}
		if k, err := s.PlayedGames(ctx, "ada", "klassik", 3, false); err != nil || len(k) != 1 || k[0].ID != ids[7] {
			t.Errorf("ada's klassik games: %v, %v", k, err)
		}
		if k, err := s.PlayedGames(ctx, "eve", "", 0, false); err != nil || len(k) != 0 {
			t.Errorf("unranked games counted: %v, %v", k, err)
		}
		names, err := s.PlayerNames(ctx, []string{"nobody"})
		if err != nil || len(names) != 0 {
			t.Errorf("PlayerNames = %v, %v", names, err)
		}
	})
}
