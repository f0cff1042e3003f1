package persistence_test

import (
	"context"
	"testing"

	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
	"github.com/openpatience/solitaire/persistence/storetest"
)

// TestPostgresBehindPgBouncer runs the conformance suite on a store whose
// every statement goes through a real PgBouncer in transaction pooling
// mode (pgtest.Bouncer): the pooler is detected and statements are sent
// unprepared (cache_describe), migrations included; pgx's default named
// statements fail there.
func TestPostgresBehindPgBouncer(t *testing.T) {
	t.Parallel()
	storetest.RunSQL(t, func(t *testing.T) *persistence.Store {
		s, err := persistence.Open(context.Background(), persistence.Config{
			DatabaseURL: pgtest.Bouncer(t, pgtest.DSN(t)), SnapshotEvery: storetest.SnapshotEvery})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
