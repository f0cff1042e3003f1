package app

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// staleStore is memGameStore as a CommandLoader whose unchecked state is
// the one the log had at version at[id], a state older than the log, as a
// cache behind another process's appends would hand out.
type staleStore struct {
	*memGameStore
	at    map[string]int
	calls int
}

func (s *staleStore) LoadForCommand(_ context.Context, id string) (*Game, *domain.State, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	g, ok := s.games[id]
	if !ok {
		return nil, nil, false, domain.ErrNotFound
	}
	log := s.logs[id]
	st, bad := domain.Replay(log[:min(s.at[id], len(log))])
	if bad != 0 {
		return nil, nil, false, errors.New(st.Fault)
	}
	g.Project(st)
	return &g, st, false, nil
}

// copyStore returns a memGameStore with m's games and logs.
func copyStore(m *memGameStore) *memGameStore {
	c := newMemGameStore()
	for id, g := range m.games {
		c.games[id] = g
		c.logs[id] = append([]domain.Event(nil), m.logs[id]...)
	}
	return c
}

// outcome is what Play answered (evs: its records, or a log's events),
// for comparison.
func outcome(t *testing.T, g *Game, s *domain.State, evs any, err error) string {
	t.Helper()
	b, jerr := json.Marshal(struct {
		Game   *Game
		State  *domain.State
		Events any
		Err    string
		Stale  bool
	}{g, s, evs, errString(err), errors.Is(err, ErrStaleVersion)})
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPlayOnStaleCommandState: Games.Play on a CommandLoader whose state
// is older than the log answers exactly what Play on Load alone answers,
// and leaves the same log (app.CommandLoader's contract), for moves
// legal in the stale state only, in the newest only, in both, illegal
// ones, with and without If-Match (the newest version or the stale one),
// and past a klassik game's time limit (R5.3: the expiry is appended).
func TestPlayOnStaleCommandState(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	random := rand.NewChaCha8([32]byte{7})
	for trial := range 400 {
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := base
		ref := newMemGameStore()
		games := &Games{Store: ref, Now: func() time.Time { clock = clock.Add(time.Second); return clock },
			Random: random, Retries: 3}
		variant := []string{"relaxed", "klassik", "klondike"}[trial%3]
		g, st, err := games.Create(t.Context(), NewGame{Owner: "p", Variant: variant})
		if err != nil {
			t.Fatal(err)
		}
		for range rng.IntN(25) {
			ms := nonResign(domain.LegalMoves(st))
			if len(ms) == 0 {
				break
			}
			if _, st, _, err = games.Play(t.Context(), "p", g.ID, ms[rng.IntN(len(ms))], -1, nil); err != nil {
				t.Fatal(err)
			}
		}
		fresh := st
		staleAt := 1 + rng.IntN(fresh.Version)
		stale, _ := domain.Replay(ref.logs[g.ID][:staleAt])

		candidates := append(nonResign(domain.LegalMoves(stale)), nonResign(domain.LegalMoves(fresh))...)
		candidates = append(candidates, domain.Move{Type: domain.MoveCards, From: domain.TableauRef(0), To: domain.FoundationRef(0), Count: 1},
			domain.Move{Type: domain.MoveUndo}, domain.Move{Type: domain.MoveDraw}, domain.Move{Type: domain.MoveResign})
		m := candidates[rng.IntN(len(candidates))]
		expected := []int{-1, fresh.Version, stale.Version}[rng.IntN(3)]
		at := clock.Add(time.Second)
		if rng.IntN(8) == 0 {
			at = at.Add(10 * time.Minute) // past klassik's 5 minutes
		}

		plain := copyStore(ref)
		unchecked := &staleStore{memGameStore: copyStore(ref), at: map[string]int{g.ID: staleAt}}
		answer := func(s Store) string {
			gs := &Games{Store: s, Now: func() time.Time { return at }, Random: random, Retries: 3}
			rg, rs, evs, err := gs.Play(t.Context(), "p", g.ID, m, expected, nil)
			return outcome(t, rg, rs, evs, err)
		}
		want, got := answer(plain), answer(unchecked)
		if got != want {
			t.Fatalf("trial %d (%s, log at %d, unchecked state at %d, move %v, If-Match %d):\nunchecked: %s\nLoad only: %s",
				trial, variant, fresh.Version, staleAt, m, expected, got, want)
		}
		if unchecked.calls != 1 {
			t.Fatalf("trial %d: LoadForCommand called %d times, want 1", trial, unchecked.calls)
		}
		if a, b := outcome(t, nil, nil, plain.logs[g.ID], nil), outcome(t, nil, nil, unchecked.logs[g.ID], nil); a != b {
			t.Fatalf("trial %d: logs differ\nunchecked: %s\nLoad only: %s", trial, b, a)
		}
	}
}

// nonResign drops resign from ms.
func nonResign(ms []domain.Move) []domain.Move {
	out := ms[:0:0]
	for _, m := range ms {
		if m.Type != domain.MoveResign {
			out = append(out, m)
		}
	}
	return out
}
