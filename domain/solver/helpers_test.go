package solver

import (
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/domaintest"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// newGame deals pos under the variant's rules with options o.
func newGame(t testing.TB, variant string, o domain.Options, pos domain.Position) *domain.State {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := pos.Validate(r); err != nil {
		t.Fatalf("%s: %v", variant, err)
	}
	s := &domain.State{}
	s.Apply(domain.DealtEvent(r, pos, "", t0))
	if s.Fault != "" {
		t.Fatal(s.Fault)
	}
	return s
}

// seeded deals seed in the variant with options o.
func seeded(t testing.TB, variant string, o domain.Options, seed uint64) *domain.State {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	return newGame(t, variant, o, domain.Deal(r, seed))
}

// play applies moves through domain.Decide and returns the final state.
func play(t testing.TB, s *domain.State, line []domain.Move) *domain.State {
	t.Helper()
	st := s.Clone()
	for i, m := range line {
		evs, _, err := domain.Decide(st, m, st.LastAt)
		if err != nil {
			t.Fatalf("move %d %v: %v\n%s", i, m, err, st.Board(true))
		}
		for _, e := range evs {
			st.Apply(e)
		}
	}
	return st
}

// solvedDeal is one line of testdata/klondike-solved-draw*.jsonl (deals
// ShootMe's Klondike-Solver won; see testdata/README.md).
type solvedDeal struct{ domaintest.SolvedDeal }

func loadSolved(t testing.TB, file string) []solvedDeal {
	t.Helper()
	deals, err := domaintest.LoadSolved("../../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]solvedDeal, len(deals))
	for i, d := range deals {
		out[i] = solvedDeal{d}
	}
	return out
}

func (d solvedDeal) position(t testing.TB) domain.Position {
	t.Helper()
	p, err := d.Position()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// verdictOf runs sr to its end and maps it to a verdict: Winnable when it
// won (sr.path holds the line, not replayed here), Unknown when the
// budget ran out, else Unwinnable.
func verdictOf(sr *search) Verdict {
	switch won := sr.run(); {
	case won:
		return Winnable
	case sr.aborted:
		return Unknown
	}
	return Unwinnable
}

// multiDeckRules are the rules of harp and tripleharp, the two- and
// three-deck variants of R3, as dealt by default.
func multiDeckRules(t testing.TB) []domain.Rules {
	t.Helper()
	var rules []domain.Rules
	for _, id := range []string{"harp", "tripleharp"} {
		v, err := domain.LookupVariant(id)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, v.Defaults)
	}
	return rules
}
