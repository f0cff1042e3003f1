// Package migrations holds the SQL schema of the event store as goose
// migrations, one directory per dialect:
//
//	postgres/NNNNN_name.sql  PostgreSQL (DATABASE_URL set)
//	sqlite/NNNNN_name.sql    the embedded SQLite default
//
// Both directories carry the same version numbers and describe the same
// tables; they differ where the dialects do (identity columns, BYTEA versus
// BLOB, SQLite's row id as the events' primary key where PostgreSQL keys
// them by game and version) and in events.game_id's foreign key, which
// SQLite keeps and PostgreSQL does not (postgres/00009_plain_rule_columns.sql
// says why). The persistence package applies them with goose at start-up
// and from its Migrate function; the schema is never derived from Go structs.
//
// Times are stored as BIGINT milliseconds since the Unix epoch, UTC, on both
// dialects, so the two behave identically and keyset cursors compare exact
// integers.
package migrations

import "embed"

// FS holds the migration files: postgres/*.sql and sqlite/*.sql. Use
// fs.Sub(FS, "postgres") or fs.Sub(FS, "sqlite") as goose's file system.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS
