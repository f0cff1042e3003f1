package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// endgame returns a random valid position of rules r with about inPlay
// cards outside the foundations: each foundation built up to a random
// height, the other cards shuffled over the tableau (top card face up, the
// rest face down) and the talon (some of it on the waste), recycles within
// the passes.
func endgame(rng *rand.Rand, r domain.Rules, inPlay int) domain.Position {
	heights := make([]int, r.Foundations)
	for i := range heights {
		heights[i] = 13
	}
	for left := inPlay; left > 0; left-- {
		heights[rng.IntN(len(heights))]--
	}
	var cards []domain.Card
	p := domain.Position{Foundations: make([][]domain.Card, r.Foundations), Tableau: make([]domain.PileLayout, r.Piles)}
	for i, h := range heights {
		h = max(h, 0)
		suit := domain.Suit(i % 4)
		for rank := 1; rank <= 13; rank++ {
			if rank <= h {
				p.Foundations[i] = append(p.Foundations[i], domain.NewCard(rank, suit))
			} else {
				cards = append(cards, domain.NewCard(rank, suit))
			}
		}
	}
	rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	talon := rng.IntN(min(len(cards), 8) + 1)
	waste := rng.IntN(talon + 1)
	p.Waste = cards[:waste]
	p.Stock = cards[waste:talon]
	// Few piles hold the rest, so that deadlocks (a card buried under what
	// it must free) are common.
	piles := 1 + rng.IntN(min(r.Piles, 3))
	for _, c := range cards[talon:] {
		i := rng.IntN(piles)
		p.Tableau[i].Down = append(p.Tableau[i].Down, c)
	}
	for i, t := range p.Tableau {
		if n := len(t.Down); n > 0 {
			p.Tableau[i] = domain.PileLayout{Down: t.Down[:n-1], Up: t.Down[n-1:]}
		}
	}
	if r.Passes > 0 {
		p.Recycles = rng.IntN(r.Passes)
	} else {
		p.Recycles = rng.IntN(3)
	}
	return p
}

// canonical is the key of a position for the brute force: its cards with
// the tableau piles and the foundations sorted (the rules treat piles of a
// kind alike, R1.4, R1.5), and the recycles made where passes are limited.
func canonical(st *domain.State) string {
	p := st.Position()
	var piles, founds []string
	for _, t := range p.Tableau {
		piles = append(piles, domain.Position{Tableau: []domain.PileLayout{t}}.String())
	}
	for _, f := range p.Foundations {
		founds = append(founds, fmt.Sprint(f))
	}
	slices.Sort(piles)
	slices.Sort(founds)
	key := fmt.Sprint(piles, founds, p.Stock, p.Waste)
	if st.Rules.Passes != 0 {
		key += strconv.Itoa(p.Recycles)
	}
	return key
}

// reference decides s by brute force through the engine itself: every
// legal move (bar undo, redo, resign, autocomplete) by domain.Decide, each
// position (its cards, and its recycles where passes are limited) searched
// once. It reports the verdict
// and false if it gave up after limit positions.
func reference(s *domain.State, limit int) (winnable, ok bool) {
	seen := map[string]bool{}
	var dfs func(st *domain.State) bool
	dfs = func(st *domain.State) bool {
		if st.Status == domain.StatusWon {
			return true
		}
		if len(seen) > limit {
			return false // gave up: unwinds at once
		}
		key := canonical(st)
		if seen[key] {
			return false
		}
		seen[key] = true
		for _, m := range domain.LegalMoves(st) {
			if excluded(m.Type) {
				continue
			}
			next := st.Clone()
			evs, _, err := domain.Decide(next, m, next.LastAt)
			if err != nil {
				panic(err)
			}
			for _, e := range evs {
				next.Apply(e)
			}
			if dfs(next) {
				return true
			}
			if len(seen) > limit {
				return false
			}
		}
		return false
	}
	won := dfs(s)
	return won, won || len(seen) <= limit
}

// R7.1: on small random endgames of every rule combination the solver's
// verdict equals a brute-force search through domain.Decide, so neither its
// pruning nor its automatic moves lose a win, and "unwinnable" is exact.
func TestR71VerdictsMatchBruteForce(t *testing.T) {
	t.Parallel()
	want := 300
	if raceBuild || testing.Short() {
		want = 60
	}
	rng := rand.New(rand.NewPCG(7, 1))
	checked, wins, skipped := checkBruteForce(t, ruleCombos(), want, 2_000, func() int { return 4 + rng.IntN(7) }, rng)
	t.Logf("%d positions, %d winnable (%d too big for brute force)", checked, wins, skipped)
}

// R7.1, R1.2: in Harp and Tripleharp, under their own rules and without
// take-back (R2.3; with it nearly every small endgame is won, so it alone
// would not test the unwinnable verdict), on endgames with up to 14 cards
// in play (copies of a card among them), the verdict of the solver (its
// beam searches and its depth-first search in turns, beamTurns) equals the
// brute force's through domain.Decide, and every won line replays to a
// win.
func TestR71MultiDeckVerdictsMatchBruteForce(t *testing.T) {
	t.Parallel()
	want := 150
	if raceBuild || testing.Short() {
		want = 60 // the first that hold a lost one (about 1 in 25 is)
	}
	var rules []domain.Rules
	for _, r := range multiDeckRules(t) {
		noTakeBack := r
		noTakeBack.TakeBack = false
		rules = append(rules, r, noTakeBack)
	}
	rng := rand.New(rand.NewPCG(31, 2))
	checked, wins, skipped := checkBruteForce(t, rules, want, 20_000, func() int { return 8 + rng.IntN(7) }, rng)
	t.Logf("%d positions, %d winnable (%d too big for brute force)", checked, wins, skipped)
}

// checkBruteForce compares Solve's verdict with reference's (at most limit
// positions) on want endgames of the rules of combos in turn, with
// inPlay() cards outside the foundations, and replays every won line. It
// fails unless both verdicts occur, and reports the positions checked,
// the winnable ones among them and the ones too big for the brute force.
func checkBruteForce(t *testing.T, combos []domain.Rules, want, limit int, inPlay func() int, rng *rand.Rand) (checked, wins, skipped int) {
	t.Helper()
	for n := 0; checked < want; n++ {
		r := combos[n%len(combos)]
		pos := endgame(rng, r, inPlay())
		if r.Decks > 1 && r.Passes > 0 {
			pos.Recycles = r.Passes - 1 // the last pass: the talon is one more pile
		}
		if pos.Validate(r) != nil {
			continue // e.g. a face-down top under automatic flips
		}
		s := &domain.State{}
		s.Apply(domain.DealtEvent(r, pos, "", t0))
		if s.Fault != "" || s.Status != domain.StatusInProgress {
			continue
		}
		refWin, ok := reference(s, limit)
		if !ok {
			skipped++
			continue
		}
		res := Solve(context.Background(), s, Budget{})

		wantV := Unwinnable
		if refWin {
			wantV = Winnable
			wins++
		}
		if res.Verdict != wantV {
			t.Fatalf("%s draw %d passes %d seq %v tb %v flip %s: solver %s, brute force %s\n%s",
				r.Variant, r.Draw, r.Passes, r.Sequences, r.TakeBack, r.Flip, res.Verdict, wantV, s.Board(true))
		}
		if res.Verdict == Winnable {
			if end := play(t, s, res.Line); end.Status != domain.StatusWon {
				t.Fatalf("line ends %s", end.Status)
			}
		}
		checked++
	}
	if wins == 0 || wins == checked {
		t.Fatalf("%d of %d winnable: the positions do not test both verdicts", wins, checked)
	}
	return checked, wins, skipped
}
