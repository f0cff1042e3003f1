package app_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/domaintest"
)

// solvedStart is when the solver lines' games are dealt.
var solvedStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// loadSolved reads testdata/file (domaintest.LoadSolved) or fails t.
func loadSolved(t testing.TB, file string) []domaintest.SolvedDeal {
	t.Helper()
	out, err := domaintest.LoadSolved("../../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// solverMoves translates one token into our moves against state s.
func solverMoves(t testing.TB, s *domain.State, tok string) []domain.Move {
	t.Helper()
	switch {
	case tok == "NEW":
		return []domain.Move{{Type: domain.MoveDraw}}
	case strings.HasPrefix(tok, "DR"):
		n, err := strconv.Atoi(tok[2:])
		if err != nil {
			t.Fatalf("token %q", tok)
		}
		ms := make([]domain.Move, n)
		for i := range ms {
			ms[i] = domain.Move{Type: domain.MoveDraw}
		}
		return ms
	case tok[0] == 'F':
		if s.Rules.Flip == domain.FlipAuto {
			return nil
		}
		i, _ := strconv.Atoi(tok[1:])
		return []domain.Move{{Type: domain.MoveFlip, Pile: domain.TableauRef(i - 1)}}
	}
	count := 1
	body := tok
	if a, b, ok := strings.Cut(tok, "-"); ok {
		body = a
		count, _ = strconv.Atoi(b)
	}
	pile := func(ch byte, dest bool) domain.PileRef {
		switch {
		case ch == 'W':
			return domain.WastePile
		case ch >= '1' && ch <= '7':
			return domain.TableauRef(int(ch - '1'))
		}
		suit := domain.Suit(strings.IndexByte("CDHS", ch))
		for i, f := range s.Foundations {
			if len(f) > 0 && f[0].Suit() == suit {
				return domain.FoundationRef(i)
			}
		}
		if dest {
			return domain.FoundationRef(domain.AnyFoundation) // the ace starts a foundation
		}
		t.Fatalf("token %q: no %s foundation", tok, suit)
		return domain.PileRef{}
	}
	from, to := pile(body[0], false), pile(body[1], true)
	if from.Kind == domain.Foundation {
		return []domain.Move{{Type: domain.MoveTakeBack, From: from, To: to, Count: 1}}
	}
	return []domain.Move{{Type: domain.MoveCards, From: from, To: to, Count: count}}
}

// playSolved plays a solver line in the given variant, one second per
// move, and returns the final state and the number of recycles made.
func playSolved(t *testing.T, d domaintest.SolvedDeal, variant string, o domain.Options) *domain.State {
	t.Helper()
	v, _ := domain.LookupVariant(variant)
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	deal, err := d.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := deal.Validate(r); err != nil {
		t.Fatalf("%s: %v", d.ID, err)
	}
	s := &domain.State{}
	s.Apply(domain.DealtEvent(r, deal, "", solvedStart))
	now := solvedStart
	for i, tok := range d.Solution {
		for _, m := range solverMoves(t, s, tok) {
			if s.Status == domain.StatusWon {
				return s // relaxed: autocomplete finished early (R2.6)
			}
			now = now.Add(100 * time.Millisecond)
			evs, _, err := domain.Decide(s, m, now)
			if err != nil {
				t.Fatalf("%s %s: token %d %q (%v) refused: %v\nposition %s", d.ID, variant, i, tok, m, err, s.Position())
			}
			for _, e := range evs {
				s.Apply(e)
			}
		}
	}
	return s
}

// Every solver line wins in relaxed (R2, R3 relaxed: unlimited passes,
// take-back, player flips, automatic autocomplete R2.6, win R2.8).
func TestR3RelaxedWinsEverySolverLine(t *testing.T) {
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, d := range loadSolved(t, file) {
			s := playSolved(t, d, "relaxed", domain.Options{Draw: &d.Draw})
			if s.Status != domain.StatusWon {
				t.Errorf("%s: relaxed ended %s, want won", d.ID, s.Status)
			}
		}
	}
}

// Every draw-3 line wins in klassik with the exact R4.2 score.
func TestR42KlassikScoreOfSolverLines(t *testing.T) {
	for _, d := range loadSolved(t, "klondike-solved-draw3.jsonl") {
		s := playSolved(t, d, "klassik", domain.Options{})
		if s.Status != domain.StatusWon {
			t.Fatalf("%s: klassik ended %s, want won", d.ID, s.Status)
		}
		faceDown := 0
		for _, p := range d.Tableau {
			faceDown += len(p) - 1
		}
		recycles := 0
		for _, tok := range d.Solution {
			if tok == "NEW" {
				recycles++
			}
		}
		secondsLeft := int(s.StartedAt.Add(300*time.Second).Sub(s.EndedAt) / time.Second)
		want := 1700 + 1700 + 10*faceDown - 20*max(0, recycles-1) + 5*secondsLeft
		got, ok := s.ScoreAt(s.EndedAt)
		if !ok || got != want {
			t.Errorf("%s: R4.2 score %d, want %d (flips %d, recycles %d, %d s left)", d.ID, got, want, faceDown, recycles, secondsLeft)
		}
	}
}

// Lines without recycle or take-back win in strict klondike (R3: 1 pass,
// no take-back, automatic flips).
func TestR3StrictKlondikeSolverLines(t *testing.T) {
	played := 0
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, d := range loadSolved(t, file) {
			if !d.Strict() {
				continue
			}
			variant := map[int]string{1: "klondike", 3: "klondike-draw3"}[d.Draw]
			s := playSolved(t, d, variant, domain.Options{})
			if s.Status != domain.StatusWon {
				t.Errorf("%s: %s ended %s, want won", d.ID, variant, s.Status)
			}
			played++
		}
	}
	if played == 0 {
		t.Fatal("no strict line in the test data")
	}
	t.Logf("%d strict lines won", played)
}
