// Package persistence is the event store of the solitaire server: the
// app.Store and app.PlayerStore of package domain/app, on PostgreSQL
// (production, DATABASE_URL) or on an embedded SQLite file (the default),
// through gorm and database/sql, with the same behaviour on both.
//
// A game is a stream: one row in games (its record and a projection of its
// latest state for listings and rankings) and its events, versions 1..n,
// each chained to the one before by domain.EventHash. Append is optimistic:
// a conditional update of games.version decides which of several racing
// writers wins; the losers get domain.ErrConflict and write nothing. Load
// rebuilds a state from the newest snapshot (every Config.SnapshotEvery
// events) and the events after it, which always equals a full replay.
//
// The schema is in package migrations and is applied by goose, at Open and
// by Migrate; gorm's AutoMigrate is never used.
//
// Errors: domain.ErrNotFound and domain.ErrConflict (test with errors.Is);
// everything else is wrapped as "persistence: <operation>: <cause>" and is
// not meant for clients (the API answers a generic 500).
package persistence
