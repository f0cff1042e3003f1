package persistence

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestDetectPooler: a direct connection is seen as direct, one through a
// real PgBouncer as a pooler, and the pool of each gets the exec mode that
// works there; an exec mode asked for is kept without probing.
func TestDetectPooler(t *testing.T) {
	t.Parallel()
	direct := pgtest.DSN(t)
	bounced := pgtest.Bouncer(t, direct)
	for _, c := range []struct {
		url, mode  string
		wantPooled bool
		wantMode   pgx.QueryExecMode
	}{
		{direct, "", false, pgx.QueryExecModeCacheStatement},
		{bounced, "", true, pgx.QueryExecModeCacheDescribe},
		{bounced, ExecModeAuto, true, pgx.QueryExecModeCacheDescribe},
		{bounced, ExecModeSimpleProtocol, false, pgx.QueryExecModeSimpleProtocol},
		{bounced + "&default_query_exec_mode=exec", "", false, pgx.QueryExecModeExec},
	} {
		db, cfg, pooled, err := postgresPool(t.Context(), c.url, c.mode)
		if err != nil {
			t.Fatalf("%s mode %q: %v", c.url, c.mode, err)
		}
		db.Close()
		if pooled != c.wantPooled || cfg.DefaultQueryExecMode != c.wantMode {
			t.Errorf("%s mode %q: pooled %v, mode %v; want %v, %v", c.url, c.mode, pooled, cfg.DefaultQueryExecMode,
				c.wantPooled, c.wantMode)
		}
	}
	if _, _, _, err := postgresPool(t.Context(), direct, "fast"); err == nil {
		t.Error("an unknown exec mode was accepted")
	}
}
