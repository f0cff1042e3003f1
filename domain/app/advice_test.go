package app

import (
	"context"
	"errors"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// mapLines is HintLines in a map, without a bound.
type mapLines map[string]HintLine

func (m mapLines) Get(id string) (HintLine, bool) { l, ok := m[id]; return l, ok }
func (m mapLines) Add(id string, l HintLine) bool { m[id] = l; return false }
func (m mapLines) Remove(id string) bool          { _, ok := m[id]; delete(m, id); return ok }

// dealt is the state after dealing relaxed draw-1 deal seed (R6.1).
func dealt(t *testing.T, seed uint64) *domain.State {
	t.Helper()
	v, err := domain.LookupVariant("relaxed")
	if err != nil {
		t.Fatal(err)
	}
	s, err := domain.DealtState(domain.DealtEvent(v.Defaults, domain.Deal(v.Defaults, seed), "", t0))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// play decides m on s and returns the state after it.
func play(t *testing.T, s *domain.State, m domain.Move) *domain.State {
	t.Helper()
	_, after, err := domain.Decide(s, m, s.LastAt)
	if err != nil {
		t.Fatalf("%v: %v", m, err)
	}
	return after
}

// R7.3: following the hints follows one line. The hint's line is kept,
// so the next hint, asked where its first move leads, is its second move
// without a search; the same hint asked twice is the same move; a player
// who goes another way gets a new search.
func TestR7_3_HintsFollowOneLine(t *testing.T) {
	s := dealt(t, 7)
	line := []domain.Move{{Type: domain.MoveDraw}, {Type: domain.MoveDraw}, {Type: domain.MoveDraw}}
	searches := 0
	search := func(_ context.Context, st *domain.State) (domain.Verdict, []domain.Move, error) {
		searches++
		return domain.VerdictWinnable, line, nil
	}
	h := NewHints(mapLines{}, search)
	g := &Game{ID: "g"}
	ctx := context.Background()
	hint := func(st *domain.State) domain.Move {
		t.Helper()
		got, err := h.Advise(ctx, g, st)
		if err != nil || got.Verdict != domain.VerdictWinnable || got.Move == nil {
			t.Fatalf("Advise: %+v, %v; want a winnable hint", got, err)
		}
		return *got.Move
	}
	if m := hint(s); m != line[0] || searches != 1 {
		t.Fatalf("first hint %v after %d searches, want %v after 1", m, searches, line[0])
	}
	if m := hint(s); m != line[0] || searches != 1 {
		t.Errorf("the same hint asked again: %v after %d searches, want %v without a search", m, searches, line[0])
	}
	next := play(t, s, line[0])
	if m := hint(next); m != line[1] || searches != 1 {
		t.Errorf("hint after following it: %v after %d searches, want %v without a search", m, searches, line[1])
	}
	// A position off the kept line: another deal.
	hint(dealt(t, 99))
	if searches != 2 {
		t.Errorf("a position off the kept line made %d searches in all, want 2", searches)
	}
}

// R7.3: an unwinnable or unknown verdict is a hint without a move, and a
// search's error is the hint's error; neither keeps a line.
func TestR7_3_HintVerdictsWithoutAMove(t *testing.T) {
	s := dealt(t, 8)
	busy := errors.New("busy")
	for _, c := range []struct {
		verdict domain.Verdict
		err     error
	}{{domain.VerdictUnwinnable, nil}, {domain.VerdictUnknown, nil}, {"", busy}} {
		lines := mapLines{}
		h := NewHints(lines, func(context.Context, *domain.State) (domain.Verdict, []domain.Move, error) {
			return c.verdict, nil, c.err
		})
		got, err := h.Advise(context.Background(), &Game{ID: "g"}, s)
		switch {
		case c.err != nil && !errors.Is(err, c.err):
			t.Errorf("search error %v: Advise gave %v", c.err, err)
		case c.err == nil && (err != nil || got.Verdict != c.verdict || got.Move != nil):
			t.Errorf("%s: Advise gave %+v, %v; want the verdict without a move", c.verdict, got, err)
		case len(lines) != 0:
			t.Errorf("%s: a line was kept", c.verdict)
		}
	}
}

// R7.4: the analysis bisects the versions of an ended game for the first
// one after which the position was no longer winnable, searching the
// state at each probe; an unknown at any probe gives no losing version.
func TestR7_4_AnalysisFindsTheLosingVersion(t *testing.T) {
	s := dealt(t, 9)
	// The log: the deal, then draws, then a resignation (the game ends).
	log := []domain.Event{domain.DealtEvent(s.Rules, s.Position(), "", t0)}
	st := s.Clone()
	for i := 0; i < 9; i++ {
		e, after, err := domain.Decide(st, domain.Move{Type: domain.MoveDraw}, st.LastAt)
		if err != nil {
			t.Fatal(err)
		}
		log, st = append(log, e...), after
	}
	e, st, err := domain.Decide(st, domain.Move{Type: domain.MoveResign}, st.LastAt)
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, e...)
	game := &Game{ID: "g", Projection: Projection{Status: st.Status}}
	for _, losing := range []int{2, 5, 10} {
		searched := 0
		search := func(_ context.Context, at *domain.State) (domain.Verdict, []domain.Move, error) {
			searched++
			if at.Version < losing {
				return domain.VerdictWinnable, []domain.Move{{Type: domain.MoveDraw}}, nil
			}
			return domain.VerdictUnwinnable, nil, nil
		}
		a, err := Analyse(context.Background(), search, game, log)
		if err != nil || a.Verdict != domain.VerdictWinnable || a.LosingVersion == nil || *a.LosingVersion != losing {
			t.Errorf("losing at %d: %+v, %v", losing, a, err)
		}
		if searched > 6 { // the deal and about log2(11) probes
			t.Errorf("losing at %d: %d searches, want a bisection", losing, searched)
		}
	}
	unknown := func(_ context.Context, at *domain.State) (domain.Verdict, []domain.Move, error) {
		if at.Version == 1 {
			return domain.VerdictWinnable, nil, nil
		}
		return domain.VerdictUnknown, nil, nil
	}
	if a, err := Analyse(context.Background(), unknown, game, log); err != nil || a.LosingVersion != nil {
		t.Errorf("an unknown probe: %+v, %v; want no losing version", a, err)
	}
	if _, err := Analyse(context.Background(), unknown, game, log[1:]); err == nil {
		t.Error("a log without its deal analysed without an error")
	}
}
