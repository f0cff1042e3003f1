package app

import (
	"sort"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// Stats are a player's statistics for one variant and draw count (R3: kept
// per variant and draw, ranked games only).
type Stats struct {
	Variant       string
	Draw          int
	Played        int    // ranked games with at least one move
	Won           int    // ranked games won, 0..Played
	WinRatePct    int    // round(100*Won/Played), 0..100; 0 when nothing played
	CurrentStreak int    // wins in a row up to the latest finished game
	LongestStreak int    // the most wins in a row, ≥ CurrentStreak
	BestTimeMS    *int64 // fastest win; nil before the first win
	FewestMoves   *int   // fewest moves in a win; nil before the first win
	BestScore     *int   // highest score of a finished game; nil for scoring none
	VegasBalance  *int   // sum of the scores of vegas games; nil unless vegas
}

// ComputeStats folds a player's games of one variant and draw count into
// Stats. Only ranked games count; a game counts as played once its first
// move is made (Moves ≥ 1), whatever its status; streaks run over finished
// games in the order they finished (ties by id). A game in progress counts
// as played but does not break or extend a streak.
func ComputeStats(variant string, draw int, games []Game) Stats {
	st := Stats{Variant: variant, Draw: draw}
	var finished []Game
	for _, g := range games {
		if !g.Ranked || g.Variant != variant || g.Rules.Draw != draw || g.Moves < 1 {
			continue
		}
		st.Played++
		if g.Rules.Scoring == domain.ScoringVegas && g.Score != nil {
			if st.VegasBalance == nil {
				st.VegasBalance = new(int)
			}
			*st.VegasBalance += *g.Score
		}
		if !g.Status.Ended() {
			continue
		}
		finished = append(finished, g)
		if g.Score != nil && (st.BestScore == nil || *g.Score > *st.BestScore) {
			v := *g.Score
			st.BestScore = &v
		}
		if g.Status == domain.StatusWon {
			st.Won++
			if st.BestTimeMS == nil || g.ElapsedMS < *st.BestTimeMS {
				v := g.ElapsedMS
				st.BestTimeMS = &v
			}
			if st.FewestMoves == nil || g.Moves < *st.FewestMoves {
				v := g.Moves
				st.FewestMoves = &v
			}
		}
	}
	if st.Played > 0 {
		st.WinRatePct = min(100, (200*st.Won+st.Played)/(2*st.Played)) // round half up
	}
	sort.SliceStable(finished, func(i, j int) bool {
		a, b := finishedAt(finished[i]), finishedAt(finished[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return finished[i].ID < finished[j].ID
	})
	run := 0
	for _, g := range finished {
		if g.Status == domain.StatusWon {
			run++
			st.LongestStreak = max(st.LongestStreak, run)
		} else {
			run = 0
		}
	}
	st.CurrentStreak = run
	return st
}

func finishedAt(g Game) time.Time {
	if g.FinishedAt != nil {
		return *g.FinishedAt
	}
	return g.UpdatedAt
}

// Standing is one participant's line in a duel's standings (R6.3).
type Standing struct {
	Rank      int           // 1-based; equal results share a rank
	Player    string        // the participant's player id
	GameID    string        // the participant's game on the shared deal
	Status    domain.Status // the game's status (R2.8)
	Score     *int          // its score; nil for scoring none (R4)
	ElapsedMS int64         // its playing time in milliseconds (R5.2)
	Moves     int           // its moves, undos included (R2.5)
}

// RankStandings orders a duel's games (R6.3): won before not won,
// then by score (higher first, where the variant scores), then by time
// (shorter first), then by moves (fewer first). Ties share a rank.
func RankStandings(games []Game) []Standing {
	out := make([]Standing, len(games))
	for i, g := range games {
		out[i] = Standing{Player: g.Owner, GameID: g.ID, Status: g.Status, Score: g.Score, ElapsedMS: g.ElapsedMS, Moves: g.Moves}
	}
	less := func(a, b Standing) int {
		aw, bw := a.Status == domain.StatusWon, b.Status == domain.StatusWon
		switch {
		case aw != bw:
			if aw {
				return -1
			}
			return 1
		case scoreOf(a) != scoreOf(b):
			if scoreOf(a) > scoreOf(b) {
				return -1
			}
			return 1
		case a.ElapsedMS != b.ElapsedMS:
			if a.ElapsedMS < b.ElapsedMS {
				return -1
			}
			return 1
		case a.Moves != b.Moves:
			if a.Moves < b.Moves {
				return -1
			}
			return 1
		}
		return 0
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := less(out[i], out[j]); c != 0 {
			return c < 0
		}
		return out[i].GameID < out[j].GameID
	})
	for i := range out {
		out[i].Rank = i + 1
		if i > 0 && less(out[i-1], out[i]) == 0 {
			out[i].Rank = out[i-1].Rank
		}
	}
	return out
}

func scoreOf(s Standing) int {
	if s.Score == nil {
		return 0
	}
	return *s.Score
}
