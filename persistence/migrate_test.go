package persistence_test

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/openpatience/solitaire/migrations"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestMigrationPlainRuleColumns: migration 00009 turns games.draw (R3)
// and games.deadline_at (R5.3) from generated columns into plain ones
// that keep every row's value, on both databases; on PostgreSQL it drops
// the events → games foreign key, which SQLite keeps, and the index on
// events.position. Its Down makes the columns generated again, with the
// values the rules give, and brings the key and the index back.
func TestMigrationPlainRuleColumns(t *testing.T) {
	for _, dialect := range []string{persistence.DialectPostgres, persistence.DialectSQLite} {
		t.Run(dialect, func(t *testing.T) {
			ctx := t.Context()
			driver, dsn, gd := "sqlite3", filepath.Join(t.TempDir(), "m.db"), goose.DialectSQLite3
			ph := []string{"?", "?", "?", "?", "?"}
			if dialect == persistence.DialectPostgres {
				driver, dsn, gd = "pgx", pgtest.DSN(t), goose.DialectPostgres
				ph = []string{"$1", "$2", "$3", "$4", "$5"}
			}
			db, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			sub, err := fs.Sub(migrations.FS, dialect)
			if err != nil {
				t.Fatal(err)
			}
			p, err := goose.NewProvider(gd, db, sub, goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 8); err != nil {
				t.Fatal(err)
			}
			insert := func(id, rules string, created int64, extra string, args ...any) {
				t.Helper()
				cols, vals := "", ""
				if extra != "" {
					cols, vals = ", "+extra, ", "+ph[3]+", "+ph[4]
				}
				q := `INSERT INTO games (id, variant, rules, options, owner, ranked, has_seed, salt, commitment,
					created_at, status, version, moves, elapsed_ms, updated_at` + cols + `)
					VALUES (` + ph[0] + `, 'klassik', ` + ph[1] + `, '{}', 'p1', true, true, ` + ph[2] + `, 'c', ` +
					strconv.FormatInt(created, 10) + `, 'in_progress', 1, 0, 0, 0` + vals + `)`
				if _, err := db.ExecContext(ctx, q, append([]any{id, rules, []byte{}}, args...)...); err != nil {
					t.Fatalf("insert %s: %v", id, err)
				}
			}
			insert("timed", `{"draw":1,"time_limit_s":300}`, 1_000, "")
			insert("free", `{"draw":3,"time_limit_s":0}`, 2_000, "")
			check := func(when string, want map[string][2]any) {
				t.Helper()
				for id, w := range want {
					var draw sql.NullInt64
					var deadline sql.NullInt64
					if err := db.QueryRowContext(ctx, `SELECT draw, deadline_at FROM games WHERE id = `+ph[0], id).
						Scan(&draw, &deadline); err != nil {
						t.Fatalf("%s: %s: %v", when, id, err)
					}
					got := [2]any{draw.Int64, nil}
					if deadline.Valid {
						got[1] = deadline.Int64
					}
					if !draw.Valid || got != w {
						t.Errorf("%s: %s: draw, deadline_at = %v (draw set %v), want %v", when, id, got, draw.Valid, w)
					}
				}
			}
			fks := func() int {
				t.Helper()
				q := `SELECT count(*) FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'f'`
				if dialect == persistence.DialectSQLite {
					q = `SELECT count(*) FROM pragma_foreign_key_list('events')`
				}
				var n int
				if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			positionIndex := func(want bool) {
				t.Helper()
				if dialect == persistence.DialectSQLite {
					return // position is SQLite's row id: no index of its own
				}
				var n int
				if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'events_position'`).
					Scan(&n); err != nil {
					t.Fatal(err)
				}
				if (n == 1) != want {
					t.Fatalf("events_position: %d, want present %v", n, want)
				}
			}
			// The indexes on the two columns, as their definitions read.
			indexes := func() string {
				t.Helper()
				q := `SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes
					WHERE indexname IN ('games_due', 'games_leaderboard')`
				if dialect == persistence.DialectSQLite {
					q = `SELECT group_concat(sql, '; ') FROM (SELECT sql FROM sqlite_master
						WHERE name IN ('games_due', 'games_leaderboard') ORDER BY name)`
				}
				var defs sql.NullString
				if err := db.QueryRowContext(ctx, q).Scan(&defs); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(defs.String, "games_due") || !strings.Contains(defs.String, "games_leaderboard") {
					t.Fatalf("indexes: %q, want games_due and games_leaderboard", defs.String)
				}
				return defs.String
			}
			indexesAt8 := indexes()
			before := map[string][2]any{"timed": {int64(1), int64(301_000)}, "free": {int64(3), nil}}
			check("at 8", before)
			if fks() != 1 {
				t.Fatalf("at 8: %d foreign keys on events, want 1", fks())
			}
			positionIndex(true)

			if _, err := p.UpTo(ctx, 9); err != nil {
				t.Fatal(err)
			}
			check("at 9", before)
			wantKeys := 0
			if dialect == persistence.DialectSQLite {
				wantKeys = 1
			}
			if n := fks(); n != wantKeys {
				t.Fatalf("at 9: %d foreign keys on events, want %d", n, wantKeys)
			}
			positionIndex(false)
			if got := indexes(); got != indexesAt8 {
				t.Fatalf("at 9: indexes %q, want as at 8: %q", got, indexesAt8)
			}
			if dialect == persistence.DialectPostgres {
				// An INSERT that names neither column (an older build's)
				// is refused: draw is NOT NULL.
				if _, err := db.ExecContext(ctx, `INSERT INTO games (id, variant, rules, options, owner, ranked,
					has_seed, salt, commitment, created_at, status, version, moves, elapsed_ms, updated_at)
					VALUES ('old', 'klassik', '{"draw":1}', '{}', 'p1', true, true, '', 'c', 0, 'in_progress', 1, 0, 0, 0)`); err == nil {
					t.Fatal("at 9: a games row without draw went in")
				}
			}
			// A row written at 9 has the values its INSERT gives.
			insert("new", `{"draw":3,"time_limit_s":60}`, 5_000, "draw, deadline_at", 3, 65_000)
			check("at 9, inserted", map[string][2]any{"new": {int64(3), int64(65_000)}})

			if _, err := p.DownTo(ctx, 8); err != nil {
				t.Fatal(err)
			}
			check("down to 8", map[string][2]any{"timed": before["timed"], "free": before["free"],
				"new": {int64(3), int64(65_000)}})
			if fks() != 1 {
				t.Fatalf("down to 8: %d foreign keys on events, want 1", fks())
			}
			positionIndex(true)
			if got := indexes(); got != indexesAt8 {
				t.Fatalf("down to 8: indexes %q, want as at 8: %q", got, indexesAt8)
			}
			// The generated columns refuse a value again.
			for _, col := range []string{"draw", "deadline_at"} {
				if _, err := db.ExecContext(ctx, `UPDATE games SET `+col+` = 1 WHERE id = 'new'`); err == nil {
					t.Fatalf("down to 8: %s took a value; want a generated column", col)
				}
			}
		})
	}
}
