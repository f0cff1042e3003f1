package pgtest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// TestDSN: each call gives a distinct, empty, reachable database, which is
// gone after the test that asked for it.
func TestDSN(t *testing.T) {
	var names [2]string
	t.Run("create", func(t *testing.T) {
		for i := range names {
			u := DSN(t)
			db, err := sql.Open("pgx", u)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var tables int
			if err := db.QueryRowContext(t.Context(), `SELECT current_database(),
				(SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public')`).
				Scan(&names[i], &tables); err != nil {
				t.Fatal(err)
			}
			if tables != 0 {
				t.Errorf("database %s has %d tables, want an empty one", names[i], tables)
			}
			if !strings.HasPrefix(names[i], "solitaire_test_") {
				t.Errorf("database name %q", names[i])
			}
		}
		if names[0] == names[1] {
			t.Errorf("two calls gave the same database %s", names[0])
		}
	})
	for _, n := range names {
		var exists bool
		if err := srv.admin.QueryRowContext(t.Context(),
			`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, n).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("database %s still exists after its test", n)
		}
	}
}

// TestCluster exercises the last resort, a throwaway cluster, whether or
// not a server is running: where the PostgreSQL binaries are missing it
// checks that the error says so.
func TestCluster(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		_, err := startCluster()
		if err == nil || !strings.Contains(err.Error(), "initdb") {
			t.Fatalf("startCluster without binaries: %v, want an error naming initdb", err)
		}
		return
	}
	u, err := startCluster()
	if err != nil {
		t.Fatal(err)
	}
	db, err := connect(u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE cluster_check"); err != nil {
		t.Fatal(err)
	}
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
