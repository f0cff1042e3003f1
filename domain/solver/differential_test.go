package solver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// ruleCombos is every variant of the R3 table with every combination of
// the rules the solver must honour: draw 1/3, passes 1/3/unlimited,
// take-back, sequences, flip mode, and autocomplete (which changes the
// positions play reaches).
func ruleCombos() []domain.Rules {
	var out []domain.Rules
	for _, v := range domain.Variants() {
		for _, draw := range []int{1, 3} {
			for _, passes := range []int{1, 3, 0} {
				for bits := 0; bits < 8; bits++ {
					r := v.Defaults
					r.Draw, r.Passes = draw, passes
					r.TakeBack, r.Sequences = bits&1 != 0, bits&2 != 0
					r.Flip = domain.FlipAuto
					if bits&4 != 0 {
						r.Flip = domain.FlipPlayer
					}
					r.Autocomplete = domain.AutocompleteOffered
					if (draw+passes+bits)%2 == 0 {
						r.Autocomplete = domain.AutocompleteAutomatic
					}
					r.TimeLimitS = 0
					r.Undo = false // the solver never undoes; the undo record only costs
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// excluded are the commands the solver does not make (R7.1: no undo, redo
// or hints; resign and autocomplete never help a search).
func excluded(t domain.MoveType) bool {
	switch t {
	case domain.MoveUndo, domain.MoveRedo, domain.MoveResign, domain.MoveAutocomplete:
		return true
	}
	return false
}

// snapshot is the position without what lies outside it (the scratch
// buffer, bytes past a pile's or the talon's end), for comparisons.
func snapshot(g *game) game {
	c := *g
	c.scratch = [pileCap]byte{}
	c.runs = [maxPiles]uint8{}
	for i := range c.tab {
		clear(c.tab[i].c[c.tab[i].n:])
	}
	clear(c.talon[c.tl:])
	return c
}

// checkHashes recomputes every incrementally kept value of g from scratch;
// rootLen is the talon's length at the root (indices 0..rootLen-1).
func checkHashes(g *game, rootLen int) error {
	c := *g
	onFound := 0
	for i := 0; i < c.nfound; i++ {
		if t := c.found[i]; t != noCard {
			onFound += int(rankOf[t])
		}
	}
	if onFound != g.onFound {
		return fmt.Errorf("onFound %d, recount %d", g.onFound, onFound)
	}
	for i := 0; i < c.piles; i++ {
		c.rehashPile(i)
		if c.ph[i] != g.ph[i] {
			return fmt.Errorf("pile %d hash stale", i)
		}
	}
	var th uint64
	for idx := 0; idx < rootLen; idx++ {
		if !slices.Contains(g.talon[:g.tl], byte(idx)) {
			th += talonKey[idx]
		}
	}
	if th != g.th {
		return fmt.Errorf("talon hash stale")
	}
	pk := uint64(0)
	for i := 0; i < c.piles; i++ {
		pk += c.ph[i]
	}
	var height [4]int8
	for i := 0; i < c.nfound; i++ {
		if t := c.found[i]; t != noCard {
			pk += foundKey[t]
			height[t/13] = rankOf[t]
		}
	}
	if pk != g.pk {
		return fmt.Errorf("piles-and-foundations sum stale")
	}
	if g.cards == 52 {
		next := c.nextOf()
		for s := 0; s < 4; s++ {
			if height[s] > 0 {
				next &^= 1 << (13 * s) // the aces already home (homeNext)
			}
		}
		if height != g.height || next != g.next {
			return fmt.Errorf("foundation heights %v or next cards %x stale, recount %v %x", g.height, g.next, height, next)
		}
	}
	if g.cards == 52 {
		var in uint64
		for _, idx := range g.talon[:g.tl] {
			in |= 1 << g.orig[idx]
		}
		if in != g.inTalon {
			return fmt.Errorf("talon card set stale")
		}
	}
	return nil
}

// sameCards reports whether two compact positions hold the same cards in
// the same places (the talon compared by card, as the roots differ).
func sameCards(a, b *game) error {
	if sa, sb := snapshot(a), snapshot(b); sa.tab != sb.tab {
		return fmt.Errorf("tableau differs")
	}
	if a.found != b.found || a.onFound != b.onFound {
		return fmt.Errorf("foundations differ")
	}
	if a.tl != b.tl || a.w != b.w || a.rec != b.rec {
		return fmt.Errorf("talon %d/%d rec %d, want %d/%d rec %d", a.tl, a.w, a.rec, b.tl, b.w, b.rec)
	}
	for i := 0; i < a.tl; i++ {
		if a.orig[a.talon[i]] != b.orig[b.talon[i]] {
			return fmt.Errorf("talon card %d differs", i)
		}
	}
	return nil
}

// The solver's move generator allows exactly what domain.LegalMoves allows
// (bar undo, redo, resign, autocomplete) on positions reached by seeded
// random play in every variant and rule combination; each of its moves
// keeps the incremental hashes right and unmakes exactly; the move played
// leaves the compact position equal to the one built from the engine's
// next state. R7.1 "never wrong" rests on this and on the replay of lines.
func TestR71MoveGeneratorMatchesLegalMoves(t *testing.T) {
	t.Parallel()
	want := 100_000
	if raceBuild || testing.Short() {
		want = 10_000
	}
	combos := ruleCombos()
	positions := checkGenerator(t, combos, want, nil)
	t.Logf("%d positions in %d rule combinations", positions, len(combos))
}

// R7.1, R1.2: in Harp and Tripleharp under their own rules (two and three
// decks, single cards, kings only into empty piles, four passes,
// take-back) the move generator equals domain.LegalMoves (bar undo, redo,
// resign, autocomplete) on 100,000 positions reached by random play, with
// the copies of a card interchangeable; and the beam's compact snapshot of
// each position (beam.go) restores to the same position, hashes and key.
func TestR71MultiDeckMoveGeneratorMatchesLegalMoves(t *testing.T) {
	t.Parallel()
	want := 100_000
	if raceBuild || testing.Short() {
		want = 10_000
	}
	rules := multiDeckRules(t)
	var other game
	positions := checkGenerator(t, rules, want, func(g *game, rootLen int) error {
		// restore into a game of the same deal whose position differs
		other = *g
		if ms := other.legal(nil); len(ms) > 0 {
			other.make(ms[len(ms)-1])
		}
		other.restore(g.snapshot(nil))
		if snapshot(&other) != snapshot(g) {
			return fmt.Errorf("snapshot does not restore the position")
		}
		if other.key() != g.key() {
			return fmt.Errorf("restored key differs")
		}
		return checkHashes(&other, rootLen)
	})
	t.Logf("%d positions of harp and tripleharp", positions)
}

// checkGenerator plays seeded random games of each rules of combos, about
// want positions in all, and checks at each position that the solver's
// move generator allows exactly the engine's moves, that each of its moves
// keeps the incremental hashes right and unmakes exactly, that the move
// played leaves the compact position equal to the one built from the
// engine's next state, and extra (when not nil; rootLen is the talon's
// length at the root). It reports the positions checked.
func checkGenerator(t *testing.T, combos []domain.Rules, want int, extra func(g *game, rootLen int) error) int {
	t.Helper()
	per := (want + len(combos) - 1) / len(combos)
	positions := 0
	for ci, r := range combos {
		rng := rand.New(rand.NewPCG(uint64(ci), 14))
		seed := uint64(ci) * 1000
		var s *domain.State
		moves := 0
		for n := 0; n < per; n++ {
			if s == nil || s.Status.Ended() || moves >= 250 {
				seed++
				s = &domain.State{}
				s.Apply(domain.DealtEvent(r, domain.Deal(r, seed), "", t0))
				if s.Fault != "" {
					t.Fatalf("%+v: %s", r, s.Fault)
				}
				moves = 0
			}
			g, ok := fromState(s)
			if !ok {
				t.Fatalf("%+v: fromState refused", r)
			}
			var legal []domain.Move
			for _, m := range domain.LegalMoves(s) {
				if !excluded(m.Type) {
					legal = append(legal, m)
				}
			}
			prims := g.legal(nil)
			var got []domain.Move
			for _, m := range prims {
				got = append(got, m.request())
			}
			if !sameMoveSet(got, legal) {
				t.Fatalf("%s draw %d passes %d seq %v tb %v flip %s seed %d move %d:\nsolver %v\nengine %v\n%s",
					r.Variant, r.Draw, r.Passes, r.Sequences, r.TakeBack, r.Flip, seed, moves, got, legal, s.Board(true))
			}
			before := snapshot(g)
			for _, m := range prims {
				u := g.make(m)
				if err := checkHashes(g, before.tl); err != nil {
					t.Fatalf("%s seed %d move %d: after %v: %v", r.Variant, seed, moves, m.request(), err)
				}
				g.unmake(u)
				if snapshot(g) != before {
					t.Fatalf("%s seed %d move %d: %v does not unmake exactly", r.Variant, seed, moves, m.request())
				}
			}
			if extra != nil {
				// fromState numbers the talon afresh: its root is this position
				if err := extra(g, g.tl); err != nil {
					t.Fatalf("%s seed %d move %d: %v", r.Variant, seed, moves, err)
				}
			}
			positions++
			if len(legal) == 0 {
				s = nil
				continue
			}
			// Play one move, preferring moves other than draw half the time.
			pick := legal[rng.IntN(len(legal))]
			if rng.IntN(2) == 0 {
				var others []domain.Move
				for _, m := range legal {
					if m.Type != domain.MoveDraw {
						others = append(others, m)
					}
				}
				if len(others) > 0 {
					pick = others[rng.IntN(len(others))]
				}
			}
			evs, _, err := domain.Decide(s, pick, s.LastAt)
			if err != nil {
				t.Fatalf("engine refused its own legal move %v: %v", pick, err)
			}
			for _, e := range evs {
				s.Apply(e)
			}
			moves++
			k := slices.IndexFunc(prims, func(m move) bool { return m.request() == pick })
			g.make(prims[k])
			if s.Status == domain.StatusInProgress {
				next, _ := fromState(s)
				if err := sameCards(g, next); err != nil {
					t.Fatalf("%s seed %d move %d: after %v: %v\n%s", r.Variant, seed, moves, pick, err, s.Board(true))
				}
			}
		}
	}
	if positions < want {
		t.Fatalf("%d positions checked, want %d", positions, want)
	}
	return positions
}

func sameMoveSet(a, b []domain.Move) bool {
	if len(a) != len(b) {
		return false
	}
	for _, m := range a {
		if !slices.Contains(b, m) {
			return false
		}
	}
	for _, m := range b {
		if !slices.Contains(a, m) {
			return false
		}
	}
	return true
}
