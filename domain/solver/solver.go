package solver

import (
	"context"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// Verdict is the solver's answer about a position (R7.1): domain.Verdict,
// whose values the solver names shortly.
type Verdict = domain.Verdict

// The three verdicts of R7.1 (domain.VerdictWinnable and the others).
const (
	// Winnable: a line was found and replayed through domain.Decide to a win.
	Winnable = domain.VerdictWinnable
	// Unwinnable: the search was exhaustive and found no win.
	Unwinnable = domain.VerdictUnwinnable
	// Unknown: the budget (nodes, time or the context) ran out first, or a
	// line failed its replay (a solver bug costs an unknown, never a false
	// answer).
	Unknown = domain.VerdictUnknown
)

// Defaults applied to a zero Budget field.
const (
	// DefaultNodes is the node budget when Budget.Nodes is 0: about 1-2 s
	// of one core; with draw 3 or limited passes the relaxation's nodes,
	// and with draw 3 its probes' (relax.go, probe.go), count in it.
	// Memory: transposition tables of 8 bytes a slot, grown to twice the
	// slots at three quarters full (10 to 21 bytes per node); the game's
	// search and its relaxation each have their own table, and the
	// relaxation probes keep a table of won positions and a word per
	// position probed; with draw 1 and unlimited passes the table also
	// holds the positions the talon dominance cut (about 1.6 per node) and
	// the dominance keeps its talon sets (dominance.go). All the heap one
	// search allocates at this budget: at most 51.8 MiB on the slowest
	// deals measured (BENCHMARKS.md "Solver", with the share of deals it
	// decides). With two or three decks the beams (beam.go) keep two
	// levels of snapshots (a few hundred bytes a position), the moves of
	// every position kept and a key table of them, beside the depth-first
	// search's table: at most 10.3 MiB on harp and tripleharp seeds 1-4,
	// searches that use the whole budget among them. Every variant stays
	// far below 256 MiB.
	DefaultNodes = 1_000_000
	// DefaultTime is the time budget when Budget.Time is 0.
	DefaultTime = 10 * time.Second
)

// Budget bounds one search. A zero field takes its default (DefaultNodes,
// DefaultTime); a negative field is treated as its default too.
type Budget struct {
	// Nodes is the most positions the search expands (each distinct
	// position after a move and its automatic follow-ups counts once).
	Nodes int64
	// Time is the most time the search runs, on the wall clock unless
	// Clock is set, checked every thousand nodes, so it may be overrun by
	// about a millisecond.
	Time time.Duration
	// Clock, when set, is the clock Time is measured on instead of the
	// wall clock: a reading that only grows, such as the CPU time of the
	// calling thread (a benchmark on a loaded machine), called once at the
	// start and every thousand nodes. Result.Elapsed stays wall-clock time.
	Clock func() time.Duration
}

func (b Budget) withDefaults() Budget {
	if b.Nodes <= 0 {
		b.Nodes = DefaultNodes
	}
	if b.Time <= 0 {
		b.Time = DefaultTime
	}
	return b
}

// Result is the answer of Solve.
type Result struct {
	Verdict Verdict
	// Line is, for Winnable, the moves (move requests of the API, as
	// domain.Decide accepts them) that win from the given position under
	// its own rules, in order: draws and recycles as "draw", explicit
	// "flip" moves where Rules.Flip is player, foundations by index. It
	// ends at the move that wins (where autocomplete is automatic, the
	// server finishes the rest). Empty for a game already won; nil for the
	// other verdicts.
	Line []domain.Move
	// Nodes is the number of positions expanded, by the game's search and,
	// with one deck and draw 3 or limited passes, its draw-1 relaxation
	// (relax.go) together.
	Nodes int64
	// Elapsed is the wall-clock time of the call.
	Elapsed time.Duration
}

// Solve decides whether s is winnable (R7.1): thoughtful solitaire (every
// card known, face-down ones and the stock order included), under s's own
// rules (draw count, the passes left, take-back, sequence moves, flip mode,
// 1..3 decks), without undo, redo or hints. s may be any position of a game
// in progress, not only a deal; it is not changed.
//
// A Winnable answer carries a line that has been replayed through
// domain.Decide on a clone of s and won; if that replay fails the answer is
// Unknown. Unwinnable means the search, whose pruning only drops moves
// proven not to matter, was exhaustive. A game already won is Winnable with
// an empty line; a lost or expired game is Unwinnable (it accepts no move,
// R2.7, R5.3). The search stops at the first of: a win, exhaustion, the
// node or time budget, ctx being done.
func Solve(ctx context.Context, s *domain.State, b Budget) Result {
	start := time.Now()
	b = b.withDefaults()
	res := solve(ctx, s, b, start, searchAll)
	res.Elapsed = time.Since(start)
	return res
}

// searchMode selects what solve searches with.
type searchMode int

const (
	// searchAll: every pruning, and the draw-1 relaxation with one deck
	// and draw 3 or limited passes (relax.go, relaxable).
	searchAll searchMode = iota
	// searchWins: no relaxation, for callers that only look for a win
	// (Prove, Difficulty): it can only prove a deal lost, and its nodes
	// would come out of the budget the game's search has to find the win
	// in (and would move the bands of R7.5); nor the talon dominance and
	// pairs, which would move the bands too.
	searchWins
	// searchNoPrune: no dominance pruning of tableau moves and no
	// relaxation (tests that compare verdicts with and without them).
	searchNoPrune
)

// solve is Solve with the search mode given.
func solve(ctx context.Context, s *domain.State, b Budget, start time.Time, mode searchMode) Result {
	switch {
	case s == nil || s.Version == 0:
		return Result{Verdict: Unknown}
	case s.Status == domain.StatusWon:
		return Result{Verdict: Winnable, Line: []domain.Move{}}
	case s.Status.Ended():
		return Result{Verdict: Unwinnable}
	}
	g, ok := fromState(s)
	if !ok {
		return Result{Verdict: Unknown}
	}
	g.sw.noPrune = mode == searchNoPrune
	g.sw.noRelax = g.sw.noRelax || mode != searchAll
	// the talon dominance and pairs (dominance.go, search.uses) change the
	// nodes a search takes to its first win, which the bands of R7.5 count
	g.sw.noDom = g.sw.noDom || mode != searchAll
	g.sw.noPairs = g.sw.noPairs || mode != searchAll
	gb := *g // the beam's game, with two or three decks
	sr := newSearch(ctx, g, b, start)
	won, lost := false, false
	var rx, bs *search
	winner := sr
	if g.relaxable() {
		rx = &search{} // made at its first turn (portfolio)
		relaxed := g.relaxed()
		won, lost = portfolio(sr, rx, func() *search { return newSearch(ctx, relaxed, b, start) }, b.Nodes)
	} else if g.cards > 52 && mode != searchNoPrune && !g.sw.noRestart {
		bs = newSearch(ctx, &gb, b, start)
		winner, lost = beamTurns(sr, bs, b.Nodes)
		won = winner != nil
	} else {
		won = sr.run()
	}
	res := Result{Nodes: sr.nodes}
	if rx != nil {
		res.Nodes += rx.nodes
	}
	if bs != nil {
		res.Nodes += bs.nodes
	}
	switch {
	case lost:
		res.Verdict = Unwinnable
	case won:
		line := winner.line()
		if played, ok := verify(s, line); ok {
			res.Verdict, res.Line = Winnable, played
		} else {
			res.Verdict = Unknown
		}
	case sr.aborted || bs != nil && !lost:
		res.Verdict = Unknown
	default:
		res.Verdict = Unwinnable
	}
	return res
}

// portfolio runs the game's search sr and its draw-1 relaxation in turns
// (relax.go) within maxNodes nodes in all; the relaxation's search is made
// by mk at its first turn and kept in *rx. It reports whether sr won
// (sr.path holds the line) and whether the game is proved lost (sr
// exhaustive, or the relaxation exhaustive without a win); with neither,
// the budget ran out (sr.aborted or rx.aborted).
func portfolio(sr, rx *search, mk func() *search, maxNodes int64) (won, lost bool) {
	if !sr.begin() {
		return false, true
	}
	relaxing := true
	for limit := sr.first; ; limit *= 2 {
		sr.maxNodes = maxNodes - rx.nodes
		if won, over := sr.attempt(limit); won || over {
			return won, over && !sr.aborted
		}
		if !relaxing || limit < sr.first*(relaxFrom/firstLimit) {
			continue
		}
		if rx.g == nil {
			*rx = *mk()
			if !rx.begin() {
				return false, true // the relaxation is frozen: lost, so the game is
			}
		}
		rx.maxNodes = maxNodes - sr.nodes
		rxWon, over := rx.attempt(limit * relaxShare)
		switch {
		case rxWon:
			relaxing = false // says nothing of the game: sr goes on alone
			if sr.g.sw.noProbe || rx.dom == nil || sr.g.draw == 1 {
				// the probes need the dominance's exact "lost" (probe.go),
				// and with draw 1 and limited passes they cost more than
				// they cut (measured on klondike's one pass: probe.go)
				rx.tt = nil
			} else {
				sr.probe = newProber(rx, sr.g) // its positions' relaxations can still be lost
			}
		case over && rx.aborted:
			sr.aborted = true
			return false, false
		case over:
			return false, true
		}
	}
}

// beamTurns runs, with two or three decks, the beam searches of beam.go
// and the game's depth-first search sr in turns within maxNodes nodes in
// all: every weighting of beamPortfolio at a width, then an attempt of sr,
// the width and sr's node limit doubling from round to round (1 and
// firstLimit/beamDFSShare). The beams find most wins (a greedy beam of width 1 often
// does), the depth-first search proves a deal lost when its exhaustive
// search ends and finds the wins its order happens upon. bs is a search
// of its own on a copy of sr's root. It reports the search that won
// (its path holds the line), or nil and whether the deal is proved lost;
// with neither, the budget ran out.
func beamTurns(sr, bs *search, maxNodes int64) (winner *search, lost bool) {
	if !sr.begin() {
		return nil, true
	}
	bs.begin()
	width := 1
	for limit := sr.first; ; limit *= 2 {
		for _, w := range beamPortfolio {
			bs.maxNodes = maxNodes - sr.nodes
			if runBeam(bs, width, w) {
				return bs, false
			}
			if bs.aborted {
				sr.aborted = true
				return nil, false
			}
		}
		width *= 2
		sr.maxNodes = maxNodes - bs.nodes
		if won, over := sr.attempt(limit / beamDFSShare); won || over {
			if won {
				return sr, false
			}
			return nil, !sr.aborted
		}
	}
}

// beamDFSShare divides the depth-first search's node limits beside the
// beams (beamTurns): its attempts prove no Harp or Tripleharp deal lost
// within seconds, and its positions cost more time than the beams' (the
// table's memory traffic). On harp seeds 1-20 at 3,000,000 positions a
// deal, a share of 1/8 wins 15 deals in 47 s against 14 in 79 s with the
// full share (BENCHMARKS.md "Harp and Tripleharp").
const beamDFSShare = 8

// verify replays line on a clone of s through domain.Decide and reports the
// moves it took to win (the line up to the win: where autocomplete is
// automatic the server may finish early) and whether it won. Every move is
// stamped with the state's latest time, so a game's clock never runs out
// during the replay unless it already has.
func verify(s *domain.State, line []domain.Move) ([]domain.Move, bool) {
	st := s.Clone()
	for i, m := range line {
		_, after, err := domain.Decide(st, m, st.LastAt)
		if err != nil {
			return nil, false
		}
		st = after
		if st.Fault != "" {
			return nil, false
		}
		if st.Status == domain.StatusWon {
			return append([]domain.Move{}, line[:i+1]...), true
		}
	}
	return nil, false
}

// Band is a difficulty band of R7.5: domain.Band, whose values the solver
// names shortly.
type Band = domain.Band

// The bands of R7.5, easiest first (domain.DifficultyEasy and the others).
const (
	Easy   = domain.DifficultyEasy
	Medium = domain.DifficultyMedium
	Hard   = domain.DifficultyHard
	Expert = domain.DifficultyExpert
)

// Difficulty thresholds of one-deck deals (R7.5), in nodes the search
// expands before its first solution under the fixed search order of Solve
// and DifficultyNodes as the only budget (no time limit, so the band is the
// same on every machine): at most EasyNodes is easy, at most MediumNodes
// medium, at most HardNodes hard, more expert. A winning line is 45 to 80
// moves long and every move on it is a node, so "easy" is a deal the
// search wins with next to no backtracking, "medium" with a little,
// "hard" within a few tens of thousands of positions. On the relaxed
// draw-1 deals (the daily deals' rules) of BENCHMARKS.md "Solver" these
// split the winnable deals into all four bands (distribution there and in
// docs/rules.md R7.5); they depend on the search, so a change to it is
// measured again, and the thresholds move when a band would empty. A game
// keeps the band it was dealt with. Harp and Tripleharp have their own
// (BandOf).
const (
	EasyNodes       = 60
	MediumNodes     = 200
	HardNodes       = 20_000
	DifficultyNodes = 2_000_000
)

// bandLimit holds the upper node counts of the first three bands of R7.5
// for one number of decks: at most Easy nodes is easy, at most Medium
// medium, at most Hard hard, more expert.
type bandLimit struct{ Easy, Medium, Hard int64 }

// bandLimits are the thresholds of R7.5 by the number of decks (index 1..3).
// One deck: EasyNodes, MediumNodes, HardNodes. Two and three decks (Harp,
// Tripleharp): a won line is 300 to 900 moves long and the beams of
// beam.go search widths doubling from one, so even the easiest deals take
// thousands of positions; the limits split the deals of seeds 1-200 of
// each that the search wins within DifficultyNodes (191 of Harp, 194 of
// Tripleharp) into four bands of about a quarter each, those beyond the
// budget being expert too (docs/rules.md R7.5, BENCHMARKS.md "Harp and
// Tripleharp").
var bandLimits = [4]bandLimit{
	1: {EasyNodes, MediumNodes, HardNodes},
	2: {75_000, 200_000, 500_000},
	3: {150_000, 300_000, 650_000},
}

// Difficulty rates the position s (R7.5): a deterministic function of the
// solver's effort, the nodes Solve's search expands before its first
// solution (without the draw-1 relaxation of draw-3 and limited-pass
// games, which finds no wins: relax.go) under a node budget of
// DifficultyNodes and no time limit, banded by BandOf for s's decks. It
// returns the band and the search's result; the band is "" unless the
// result is Winnable (an unwinnable or undecided position has no band).
// ctx may cut the search short (then the result is Unknown and the band
// "").
func Difficulty(ctx context.Context, s *domain.State) (Band, Result) {
	start := time.Now()
	res := solve(ctx, s, Budget{Nodes: DifficultyNodes, Time: 1<<63 - 1}, start, searchWins)
	res.Elapsed = time.Since(start)
	if res.Verdict != Winnable {
		return "", res
	}
	return BandOf(s.Rules.Decks, res.Nodes), res
}

// BandOf maps a node count of a deal of decks decks (1..3; others count as
// one) to its band (R7.5): at most the first limit is easy, at most the
// second medium, at most the third hard, more expert. The limits, in
// nodes: one deck EasyNodes, MediumNodes, HardNodes (60, 200, 20,000);
// two decks 75,000, 200,000, 500,000; three decks 150,000, 300,000,
// 650,000 (bandLimits says how they were chosen).
func BandOf(decks int, nodes int64) Band {
	l := bandLimits[1]
	if decks >= 2 && decks < len(bandLimits) {
		l = bandLimits[decks]
	}
	switch {
	case nodes <= l.Easy:
		return Easy
	case nodes <= l.Medium:
		return Medium
	case nodes <= l.Hard:
		return Hard
	}
	return Expert
}

// Prove solves the deal of seed under rules (domain.Deal) within nodes
// (no time limit, so the answer is the same on every machine) and returns
// it as a proven deal with its line, nodes and band (BandOf) when the
// search wins it; false when it does not (unwinnable, or undecided within
// the budget) or ctx ended. nodes is the node budget, at least 1 (the
// supply of proven deals, domain/supply, proves with it; the node count to
// the first solution, and so the band, does not depend on it).
func Prove(ctx context.Context, rules domain.Rules, seed uint64, nodes int64) (domain.ProvenDeal, bool) {
	st := &domain.State{}
	st.Apply(domain.DealtEvent(rules, domain.Deal(rules, seed), "", time.Unix(0, 0)))
	if st.Fault != "" {
		return domain.ProvenDeal{}, false
	}
	res := solve(ctx, st, Budget{Nodes: nodes, Time: 1<<63 - 1}, time.Now(), searchWins)
	if res.Verdict != Winnable || ctx.Err() != nil {
		return domain.ProvenDeal{}, false
	}
	return domain.ProvenDeal{Seed: seed, Line: res.Line, Nodes: res.Nodes, Difficulty: BandOf(rules.Decks, res.Nodes)}, true
}
