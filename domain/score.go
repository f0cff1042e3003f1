package domain

import "time"

// Points of R4.3 (standard scoring), added to ScoreState.Points per event.
const (
	standardWasteToTableau      = 5
	standardToFoundation        = 10
	standardFlipPoints          = 5
	standardFoundationToTableau = -15
	standardRecycleDraw1        = -100
	standardRecycleDraw3        = -20 // from the 4th recycle on
	standardPer10s              = -2
	standardBonusNumerator      = 700000
)

// Points of R4.2 (klassik scoring).
const (
	klassikPerFlip       = 10
	klassikAllOut        = 1700
	klassikRecycle       = -20 // each recycle after the first
	klassikPerSecondLeft = 5
)

// Points of R4.4 (vegas scoring).
const (
	vegasStart        = -52
	vegasPerFoundCard = 5
)

// recyclePoints is the R4.3 penalty of the n-th recycle (1-based), counted
// into Points; klassik's recycle cost (R4.2) is computed from Recycles.
func recyclePoints(r Rules, n int) int {
	if r.Draw == 1 {
		return standardRecycleDraw1
	}
	if n >= 4 {
		return standardRecycleDraw3
	}
	return 0
}

// scoreMove books the points of moving cards from -> to (R4.2, R4.3).
func (s *State) scoreMove(from, to PileRef, moved []Card) {
	switch {
	case from.Kind == Waste && to.Kind == Tableau:
		s.Score.Points += standardWasteToTableau
	case to.Kind == Foundation && from.Kind != Foundation:
		s.Score.Points += standardToFoundation
	case from.Kind == Foundation && to.Kind == Tableau:
		s.Score.Points += standardFoundationToTableau
	}
	if to.Kind == Foundation && s.Rules.Decks == 1 {
		for _, c := range moved {
			s.Score.Placed |= cardBit(c) // R4.2: first placement only, never cleared by take-back
		}
	}
}

// ScoreAt returns the score of R4 at instant now, and false for scoring
// "none" (R4.1). now matters only where time counts (standard's 10-second
// penalty, R4.3); an ended game is scored at its end, an expired one at its
// deadline (R5.3). Klassik and standard show max(0, sum); vegas may be
// negative (a balance).
func (s *State) ScoreAt(now time.Time) (int, bool) {
	r := s.Rules
	switch r.Scoring {
	case ScoringKlassik:
		sum := 0
		for c := Card(0); c < 52; c++ {
			if s.Score.Placed&cardBit(c) != 0 {
				sum += 5 * min(c.Rank(), 10)
			}
		}
		sum += klassikPerFlip * popcount(s.Score.Flipped)
		if s.Recycles > 1 {
			sum += klassikRecycle * (s.Recycles - 1)
		}
		if s.Status == StatusWon {
			sum += klassikAllOut
			if dl, ok := s.Deadline(); ok && s.EndedAt.Before(dl) {
				sum += klassikPerSecondLeft * int(dl.Sub(s.EndedAt)/time.Second)
			}
		}
		return max(0, sum), true
	case ScoringStandard:
		el := s.Elapsed(now)
		sum := s.Score.Points + standardPer10s*int(el/(10*time.Second))
		if s.Status == StatusWon && el > 30*time.Second {
			sum += standardBonusNumerator / int(el/time.Second)
		}
		return max(0, sum), true
	case ScoringVegas:
		return vegasStart + vegasPerFoundCard*s.onFoundations(), true
	}
	return 0, false
}
