package app

import (
	"context"
	"sync"

	"github.com/openpatience/solitaire/domain"
)

// Search runs one solver search of st (R7.1) under the caller's budget and
// share of the solver (the server's pool): its verdict and, when that is
// domain.VerdictWinnable, a line that wins from st (replayed through
// domain.Decide). st is the caller's own copy. Errors: the pool's (busy, the
// caller's share used up) or ctx's.
type Search func(ctx context.Context, st *domain.State) (domain.Verdict, []domain.Move, error)

// HintLine is a game's remembered winning line (R7.3): Line wins from the
// position At, and after Line[0] the position is Next ("" when Line[0]
// ends the game or is the last move). Positions are PositionKey values.
type HintLine struct {
	At, Next string
	Line     []domain.Move
}

// HintLines holds the last hinted line of each game, bounded by its owner
// (the api keeps them in an LRU cache, whose methods these are). Get
// reports false for a game it does not hold; Add and Remove report
// whether they evicted or removed an entry.
type HintLines interface {
	Get(gameID string) (HintLine, bool)
	Add(gameID string, l HintLine) bool
	Remove(gameID string) bool
}

// Hints is the hint rule (R7.3): a hint is the next move of a line that
// wins, and following the hints is following one line, so it wins. A
// second search from the next position might find a line that starts
// otherwise, or none within its budget; so the line of a game's last hint
// is remembered (in memory only: another process, or a restart, searches
// again) and its next move is the hint while the player follows it. Safe
// for concurrent use.
type Hints struct {
	mu     sync.Mutex // orders a game's lookups and updates
	lines  HintLines
	search Search
}

// NewHints is the hint rule over lines, searching with search when no
// remembered line stands where the game does.
func NewHints(lines HintLines, search Search) *Hints {
	return &Hints{lines: lines, search: search}
}

// Advise is the Advisor of hints (Games.Hint): the next move of the line
// remembered for g when st is where that line stands, else the verdict of
// a new search, whose line is remembered. st is the caller's own copy.
// Errors: the search's.
func (h *Hints) Advise(ctx context.Context, g *Game, st *domain.State) (domain.Hint, error) {
	if m, ok := h.next(g.ID, st); ok {
		return domain.Hint{Verdict: domain.VerdictWinnable, Move: &m}, nil
	}
	verdict, line, err := h.search(ctx, st)
	if err != nil {
		return domain.Hint{}, err
	}
	switch {
	case verdict == domain.VerdictWinnable && len(line) > 0:
		h.keep(g.ID, st, line)
		m := line[0]
		return domain.Hint{Verdict: domain.VerdictWinnable, Move: &m}, nil
	case verdict == domain.VerdictUnwinnable:
		return domain.Hint{Verdict: domain.VerdictUnwinnable}, nil
	}
	return domain.Hint{Verdict: domain.VerdictUnknown}, nil
}

// keep remembers line, which wins from st, for game id.
func (h *Hints) keep(id string, st *domain.State, line []domain.Move) {
	e, ok := lineFrom(st, line)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines.Add(id, e)
}

// next is the hint for game id in state st from its remembered line: its
// first move again if st is where the line starts (a hint asked twice),
// its second if st is the position after the first (the hint was
// followed), in which case the line advances. false if neither (the
// player went another way, or nothing is remembered).
func (h *Hints) next(id string, st *domain.State) (domain.Move, bool) {
	key := PositionKey(st)
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.lines.Get(id)
	switch {
	case !ok:
		return domain.Move{}, false
	case e.At == key:
		return e.Line[0], true
	case e.Next != "" && e.Next == key:
		if n, ok := lineFrom(st, e.Line[1:]); ok {
			h.lines.Add(id, n)
			return n.Line[0], true
		}
	}
	h.lines.Remove(id)
	return domain.Move{}, false
}

// lineFrom is the remembered form of line from st: where it stands and
// where its first move leads (played through domain.Decide, which leaves
// st as it is). false if the line is empty or its first move is refused.
func lineFrom(st *domain.State, line []domain.Move) (HintLine, bool) {
	if len(line) == 0 {
		return HintLine{}, false
	}
	_, after, err := domain.Decide(st, line[0], st.LastAt)
	if err != nil {
		return HintLine{}, false
	}
	e := HintLine{At: PositionKey(st), Line: line}
	if len(line) > 1 && !after.Status.Ended() {
		e.Next = PositionKey(after)
	}
	return e, true
}

// PositionKey identifies what a solver's line depends on in st: every
// pile's cards in order (face-down ones marked), the recycles made and
// whether the game is over; not times, scores or move counts. A few
// hundred bytes, compared for equality only.
func PositionKey(st *domain.State) string {
	b := make([]byte, 0, 160)
	pile := func(tag byte, cards []domain.Card) {
		b = append(b, tag, byte(len(cards)))
		for _, c := range cards {
			b = append(b, byte(c))
		}
	}
	pile('s', st.Stock)
	pile('w', st.Waste)
	for _, f := range st.Foundations {
		pile('f', f)
	}
	for _, t := range st.Tableau {
		b = append(b, 'd', byte(t.Down))
		pile('t', t.Cards)
	}
	b = append(b, 'r', byte(st.Recycles>>8), byte(st.Recycles), 'e')
	return string(append(b, st.Status...))
}

// Analysis is the analysis of an ended game (R7.4): the verdict on its
// deal with every card known (R7.1), the first version after which its
// position was no longer winnable (nil when the game was won, its deal is
// not winnable, or a search along the way could not decide) and a
// winning line from the deal (empty unless the deal is winnable).
type Analysis struct {
	Verdict       domain.Verdict
	LosingVersion *int
	Line          []domain.Move
}

// Analyse makes the analysis (R7.4) of an ended game from its log evs
// (EndedLog), searching with search.
//
// Winnability along the played line is monotone (a position that no line
// wins stays so after any move), except where an undo goes back to an
// earlier position; so the losing version is found by bisection on
// versions: the deal (version 1) is winnable, the final state (ended) is
// not, and each step searches the state at the middle version, keeping a
// winnable lower and an unwinnable upper bound. The answer is a version
// after which the position is unwinnable and before which it was
// winnable; with no undo in the log it is the first. An unknown at any
// step ends the bisection without an answer: a guess either way could
// name a move that did not lose. About log2(versions) searches run, one
// after the other.
//
// Errors: the search's, or *ReplayError for a log that does not replay.
func Analyse(ctx context.Context, search Search, game *Game, evs []domain.Event) (Analysis, error) {
	deal, err := replayTo(evs, 1)
	if err != nil {
		return Analysis{}, err
	}
	verdict, line, err := search(ctx, deal)
	if err != nil {
		return Analysis{}, err
	}
	out := Analysis{Verdict: verdict, Line: line}
	if verdict != domain.VerdictWinnable || game.Status == domain.StatusWon {
		return out, nil
	}
	lo, hi := 1, len(evs) // winnable at lo, not at hi (the game has ended, R7.1)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		st, err := replayTo(evs, mid)
		if err != nil {
			return Analysis{}, err
		}
		v, _, err := search(ctx, st)
		if err != nil {
			return Analysis{}, err
		}
		switch v {
		case domain.VerdictWinnable:
			lo = mid
		case domain.VerdictUnwinnable:
			hi = mid
		default:
			return out, nil // unknown: no losing version (see above)
		}
	}
	out.LosingVersion = &hi
	return out, nil
}

// replayTo is the state after the first v events of evs.
func replayTo(evs []domain.Event, v int) (*domain.State, error) {
	st := &domain.State{}
	for _, e := range evs[:v] {
		st.Apply(e)
	}
	if st.Fault != "" || st.Version != v {
		return nil, &ReplayError{Fault: st.Fault}
	}
	return st, nil
}

// ReplayError is a log that does not replay: a corrupt log, whose audit
// says where (an internal error to a caller).
type ReplayError struct{ Fault string }

// Error names the fault Apply recorded.
func (e *ReplayError) Error() string { return "app: analysis replay: " + e.Fault }
