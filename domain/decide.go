package domain

import "time"

// Decide is being written (temporary stub so the tree builds).
func Decide(s *State, m Move, now time.Time) ([]Event, error) {
	return nil, &MoveError{Move: m, Reason: ReasonIllegal}
}

// Expire is being written (temporary stub so the tree builds).
func Expire(s *State, now time.Time) []Event { return nil }

// LegalMoves is being written (temporary stub so the tree builds).
func LegalMoves(s *State) []Move { return nil }
