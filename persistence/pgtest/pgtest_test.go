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

// TestThrowawayEnv: TEST_DATABASE_URL=throwaway chooses the throwaway
// cluster even while 127.0.0.1:5432 answers, so the tests stay off a
// shared server.
func TestThrowawayEnv(t *testing.T) {
	t.Setenv(EnvURL, Throwaway)
	s := findServer()
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.admin.Close()
	if s.url == DefaultURL || !strings.Contains(s.url, "127.0.0.1") {
		t.Fatalf("TEST_DATABASE_URL=throwaway gave %s, want a cluster of its own", s.url)
	}
	var dir string
	if err := s.admin.QueryRowContext(t.Context(), "SHOW data_directory").Scan(&dir); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(dir, "/var/lib/postgresql") {
		t.Fatalf("the throwaway server's data directory is %s, the machine's", dir)
	}
}
