package solver

// The draw-1 relaxation: a second search, beside the game's own, of the
// same position under the same rules but with draw 1 and unlimited passes,
// which can prove the game lost and nothing else.
//
// Claim: if the relaxed game has no winning line, neither has the game.
// Map a line of the game to one of the relaxed game: every tableau,
// foundation, flip and take-back move stays as it is, draws and recycles
// are left out, and a play of the waste's top card c becomes draws (and
// recycles) until c is the waste's top, then the same play. With draw 1
// and no limit on passes every card of the talon can be brought to the
// waste's top in this way whatever the order of the talon (R2.1), and the
// relaxed line keeps the same tableau, foundations and set of talon cards
// after every move of the game's line, so each of its moves is legal where
// the game's was (a move's legality looks at the talon only through the
// waste's top card). A won game's line therefore maps to a won relaxed
// line, and an exhaustive relaxed search without a win (the search is
// exact for the relaxed rules like for any other) proves the game lost.
//
// Why: with draw 3 and unlimited passes the cards the draws reach change
// whenever one leaves the talon, so the game's search tells positions
// apart by which talon cards are gone, and a lost deal's exhaustive search
// is mostly that. Draw 1 with unlimited passes reaches every talon card at
// any time, its search waits with idle talon cards (abstract.go), and
// about half of the lost draw-3 deals are lost with draw 1 too, most of
// them proved so far faster than the draw-3 search could (BENCHMARKS.md
// "Solver").
//
// The two searches take turns (solve): attempts of the game's search and
// of the relaxation with doubling node limits (search.run; the
// relaxation's relaxShare times the game's), the relaxation from the
// game's third attempt on, so that a deal the game's
// search wins in its first 30,000 nodes (every band of R7.5 but expert)
// is searched as before. The relaxation stops once it wins (that proves
// nothing about the game) and the game's search goes on alone (with draw
// 3 probed by the relaxation's search, probe.go); if it ends without a
// win, the game is lost. Both share the budget: their nodes
// count together and either's time-out ends both. Searches that only look
// for a win (Prove, Difficulty: searchWins) go without it.

// relaxFrom is the node limit of the game's attempt after which the
// relaxation takes its first turn: the third attempt (40,000 nodes,
// after 30,000 spent), past HardNodes.
const relaxFrom = 4 * firstLimit

// relaxShare is how many times the game's attempt's node limit the
// relaxation's attempts get, once it takes turns. A lost deal whose
// relaxation is lost costs the relaxation's search plus the game's turns
// beside it, and one whose relaxation is won rarely needs a long relaxed
// search to find that win (it starts the probes, probe.go), so the
// relaxation gets the larger share (4 is the fastest of 1, 2 and 4 on the
// slow lost draw-3 deals: BENCHMARKS.md "Solver").
const relaxShare = 4

// relaxable reports whether g (a root, before any search) has a draw-1
// relaxation worth searching: one deck with sequence moves (abstract mode,
// where the relaxed search is fast), and draw 3 or a limited number of
// passes (with draw 1 and unlimited passes the relaxed game is the game).
// With draw 1 and one pass (klondike) the relaxation of most lost deals is
// won, but where it is lost it ends the search early (seed 1477: 71,183
// positions against 277,175, TestR71RelaxationShortensLostSearches): it
// shortens klondike's tail, which is what binds there (a p99 of at most
// 1 s), and leaves its mean time as it is (BENCHMARKS.md "Solver"). With
// an empty talon the relaxed game is the game.
func (g *game) relaxable() bool {
	return !g.sw.noPrune && !g.sw.noRestart && !g.sw.noRelax && (g.draw > 1 || g.passes > 0) && g.tl > 0 && g.abstractOK()
}

// relaxed is a copy of g under draw 1 with unlimited passes (the talon in
// the same order, the waste the same size).
func (g *game) relaxed() *game {
	r := *g
	r.draw, r.passes, r.rec = 1, 0, 0
	return &r
}
