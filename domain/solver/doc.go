// Package solver decides whether a solitaire position is winnable (RULES
// R7.1) and finds a winning line: thoughtful Klondike-family solitaire
// (every card known) under a game's own rules, for every variant of the
// R3 table (1..3 decks, draw 1 or 3, limited or unlimited passes, take-back,
// sequence moves on or off, automatic or player flips). It imports only the
// standard library and package domain.
//
// How it searches (game.go, moves.go, search.go):
//
//   - A compact, mutable position: cards as bytes in fixed arrays, moves
//     made and unmade in place, never copied per node.
//   - The stock and waste are one "talon" list with a waste pointer; the
//     draws between two plays from the waste are folded into one move
//     "play the card at position p of the talon" for every p reachable by
//     draws within the passes left (draw 3 reaches every third card, a
//     recycle starts again), so draws never branch on their own.
//   - Automatic moves that cannot lose a win (dominance): face-down tops
//     are turned up at once (a face-up card only adds options), and a card
//     goes to a foundation when nothing could ever usefully be built on it
//     (safe.go gives the proof for each rule set).
//   - Dominated tableau moves are not searched (moves.go, candidates):
//     where sequences move, a move of part of a run is made only when the
//     card it uncovers goes home or can take a card now, and a move that
//     empties a pile only when a king could go there now; such a move
//     can always wait until it is needed.
//   - A position where some card can never leave its pile (its lower
//     same-suit card and both cards it fits on buried under cards in the
//     same plight) is lost at once (safe.go, frozen).
//   - Abstract mode, with one deck and sequence moves (abstract.go): a
//     position is keyed by its face-down cards and bases, foundations and
//     talon only, not by how the other face-up cards are arranged in runs
//     (any arrangement of the same cards is as winnable as any other), and
//     the search makes only moves that change that key: a card onto the
//     tableau (one free target of all), a base with its run, a card home
//     (after moving the run on it to its twin when needed). Every move
//     that only rearranges runs is left out, which is most tableau moves.
//     With draw 1 and unlimited passes a talon card goes onto the tableau
//     only when a card could be put on it or its twin go home next: until
//     then it can wait in the talon, where it stays within reach; and the
//     move after it must be one that uses it there (search.go, uses): the
//     position in between is not a node, so positions where a talon card
//     lies unused on the tableau are mostly never made.
//   - Talon dominance, with draw 1 and unlimited passes (dominance.go): a
//     position is never worse for more cards in the talon, so one whose
//     talon is a subset of a position proven lost, with the same locked
//     cards and foundations, is lost. Proven lost is more than searched
//     to the end (a search may have skipped an ancestor still open): the
//     search finds the strongly connected components of the positions as
//     Tarjan's algorithm does and keeps a component's talons once it is
//     closed.
//   - With one deck and sequence moves (abstract mode), and draw 3 or a
//     limited number of passes (relax.go), the same position under draw 1
//     with unlimited passes is searched beside the game's own search, in
//     turns: every line of the game is one of that relaxed game too, so a
//     relaxed search that ends without a win proves the game lost, and it
//     ends far sooner (with draw 1 and unlimited passes what the draws
//     reach does not depend on which talon cards are gone, and its key
//     ignores the waste's size).
//   - Relaxation probes (probe.go), with draw 3: when the relaxed game is
//     won from the root, its search goes on serving the game's: every
//     position the game's search is about to enter is first searched under draw 1
//     with unlimited passes, with a small budget and one table for all
//     probes, and a position whose relaxation is lost is lost and not
//     searched. In the lost draw-3 deals that take longest nearly every
//     position has a lost relaxation.
//   - A transposition table of every position seen, keyed by a 64-bit
//     hash (8 bytes a position: a large search's time is mostly the
//     table's memory traffic) that ignores the order of tableau piles and foundations (they
//     are interchangeable under every rule), so a position reached twice
//     is searched once. The position is the whole search state, so the
//     table also stops cycles (a move and its reverse).
//   - Depth-first search with a fixed move order (moves home first, then
//     moves that reveal a face-down card, the pile with the most face-down
//     cards first; in a search with the talon dominance, the talon's cards
//     after every other move, which proves the positions with more talon
//     cards lost before those with fewer are met; the relaxation probes
//     keep the game's order), bounded by a node and a time budget.
//   - With two or three decks (beam.go), beam searches beside the
//     depth-first search, in turns (solve, beamTurns): from each level of
//     positions every candidate move is made and the best few positions
//     kept, best by the cards not home plus the face-down cards and the
//     face-up cards that cover them (single cards dig them out one by
//     one), with a penalty for the passes spent. A Harp or Tripleharp line is hundreds
//     of moves long and most deals are won; a depth-first search there
//     wanders below an early wrong move, while the beam keeps to the lines
//     that make progress. The beams find wins only; an unwinnable verdict
//     still needs the depth-first search to end.
//
// Every winning line is replayed through domain.Decide before Solve says
// Winnable; the differential test checks the move generator against
// domain.LegalMoves on random positions of every variant.
package solver
