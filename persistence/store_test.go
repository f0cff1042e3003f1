package persistence_test

import (
	"path/filepath"
	"testing"

	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
	"github.com/openpatience/solitaire/persistence/storetest"
)

// openPostgres opens a store on a fresh PostgreSQL database.
func openPostgres(t *testing.T) *persistence.Store {
	t.Helper()
	s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: pgtest.DSN(t),
		SnapshotEvery: storetest.SnapshotEvery})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openSQLite opens a store on a new SQLite file.
func openSQLite(t *testing.T) *persistence.Store {
	t.Helper()
	s, err := persistence.Open(t.Context(), persistence.Config{
		SQLitePath: filepath.Join(t.TempDir(), "solitaire.db"), SnapshotEvery: storetest.SnapshotEvery})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgres(t *testing.T) { t.Parallel(); storetest.RunSQL(t, openPostgres) }

func TestSQLite(t *testing.T) { t.Parallel(); storetest.RunSQL(t, openSQLite) }
