package domain

import "sync/atomic"

// The undo record (State.Turns and State.Ops) grows by one turn and a few
// operations per move and is never rewritten below its length, so Clone
// shares its arrays instead of copying them. A clone that then appended
// to an array it shares with its capacity clipped would copy the whole
// record: a move in a game of n moves would cost O(n) time and memory
// (the state Decide builds from a Clone would copy it). Instead
// each array comes with a growth claim: the length that the states
// sharing it have written so far. A state whose length is the claimed one
// may append in place, claiming the new elements first (compare-and-swap,
// so two clones of one state, in two goroutines, never both write an
// element); any other state copies into an array of its own, with room to
// grow. Elements below a state's length are never written again, so
// readers of older clones see their record unchanged. Appends cost O(1)
// amortized whatever the game's length.

// growth is the claim on one backing array of an undo-record slice.
type growth[T any] struct {
	base *T           // the array's first element: the claim holds for this array only
	used atomic.Int64 // elements written by the states that share the array
}

// grow returns s with vs appended and the growth claim of the result's
// array: in place if g is s's array's claim and s ends where the claim
// does, else in a new array.
func grow[T any](s []T, g *growth[T], vs ...T) ([]T, *growth[T]) {
	n, m := len(s), len(s)+len(vs)
	if len(vs) == 0 {
		return s, g
	}
	if g != nil && m <= cap(s) && g.base == &s[:1][0] && g.used.CompareAndSwap(int64(n), int64(m)) {
		return append(s, vs...), g
	}
	out := make([]T, m, max(2*m, 16))
	copy(out, s)
	copy(out[n:], vs)
	ng := &growth[T]{base: &out[0]}
	ng.used.Store(int64(m))
	return out, ng
}

// pushTurn appends t to the undo record.
func (s *State) pushTurn(t Turn) { s.Turns, s.turnsGrowth = grow(s.Turns, s.turnsGrowth, t) }

// pushOps appends ops to the undo record.
func (s *State) pushOps(ops ...Op) { s.Ops, s.opsGrowth = grow(s.Ops, s.opsGrowth, ops...) }
