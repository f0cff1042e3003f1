// Package app holds the use cases of the solitaire server on top of the
// rules in package domain: the services Games (create, play, hint,
// replay, expire and close games) and Competitions (duels and daily deals,
// sealed until they close, R6.6), the ports they need (Store, GameReader,
// CompetitionStore, PlayerStore, Dealer, TransparencyLog), the hint rule
// (R7.3, Hints) and the analysis of an ended game (R7.4, Analyse), stats
// and standings, and the transparency log's leaf and checkpoint records.
//
// It imports only the standard library and package domain: the rules are
// pure, and everything that talks to a database, the network or the
// solver's pool stays outside, behind the ports. Rule numbers (R6.4, …)
// refer to docs/rules.md.
package app
