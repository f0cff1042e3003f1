// Package domain is the rules engine of the solitaire server: cards, piles,
// variants, deals, the game aggregate with its commands and events, scoring,
// time, undo and the public view. It imports only the standard library;
// the use cases built on it (services, ports, hints) are package
// domain/app.
//
// The reference for every rule is docs/rules.md (numbers such as R2.5 in
// comments refer to it).
//
// The aggregate is event-sourced:
//
//   - Decide(state, move, now) checks a player's command against the current
//     State and returns the past-tense events it causes, or a typed error.
//   - (*State).Apply(event) folds one event into the state. It is pure and
//     total: no clock, no randomness, no error; an event that does not fit
//     the state is recorded in State.Fault and otherwise ignored.
//   - LegalMoves(state) is the single authority on legality: Decide accepts
//     a move exactly when it (after resolving "foundation" without index) is a
//     member of LegalMoves.
//
// Persistence is an outside concern: the package declares the hash chain
// and commitment an auditor checks (chain.go); the stores are domain/app's
// ports.
package domain
