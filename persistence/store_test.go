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

// TestPostgresExecModes runs the store suite on PostgreSQL in the query
// exec modes a connection pooler may call for besides the default
// (pgconnect.go): exec, whose parameter types pgx guesses from the Go
// values, and simple_protocol, whose values pgx writes into the statement.
// Every statement of the store must hold in each, the appends' included.
func TestPostgresExecModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{persistence.ExecModeExec, persistence.ExecModeSimpleProtocol} {
		t.Run(mode, func(t *testing.T) {
			storetest.RunSQL(t, func(t *testing.T) *persistence.Store {
				t.Helper()
				s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: pgtest.DSN(t),
					SnapshotEvery: storetest.SnapshotEvery, ExecMode: mode})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}
