package persistence

import (
	"testing"
	"time"

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

// TestReadOnlyDropsConnection: a write that a read-only server refuses
// (SQLSTATE 25006, as on a standby or a primary being demoted) is an
// outage, and the connection it came on leaves the pool, so the next
// statement runs on a new connection (to the primary, when the URL lists
// several hosts with target_session_attrs=read-write).
func TestReadOnlyDropsConnection(t *testing.T) {
	t.Parallel()
	db, _, _, err := postgresPool(t.Context(), pgtest.DSN(t), ExecModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE read_only_probe (x integer)`)
	if !isUnavailable(err) {
		t.Fatalf("a write on a read-only connection: %v, want an outage (25006)", err)
	}
	var ro string
	if err := db.QueryRow(`SHOW default_transaction_read_only`).Scan(&ro); err != nil || ro != "off" {
		t.Errorf("the next statement ran on a connection with default_transaction_read_only %q (%v): the read-only one was kept", ro, err)
	}
	if _, err := db.Exec(`CREATE TABLE read_only_probe (x integer)`); err != nil {
		t.Errorf("a write after the read-only connection left: %v", err)
	}
}

// TestHostCount: the hosts of a URL are counted once each, whatever
// fallbacks sslmode adds.
func TestHostCount(t *testing.T) {
	for url, want := range map[string]int{
		"postgres://u@h1:5432/db?sslmode=prefer":                                         1,
		"postgres://u@h1:5432/db?sslmode=disable":                                        1,
		"postgres://u@h1:5432,h2:5433/db?sslmode=prefer&target_session_attrs=read-write": 2,
		"postgres://u@h1:5432,h1:5433,h2:5432/db?sslmode=disable":                        3,
	} {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostCount(&cfg.Config); got != want {
			t.Errorf("%s: hostCount = %d, want %d", url, got, want)
		}
	}
}

// TestConnectTimeout: a URL without connect_timeout gets
// DefaultConnectTimeout for each connection attempt; one with it keeps its
// own.
func TestConnectTimeout(t *testing.T) {
	for url, want := range map[string]time.Duration{
		"postgres://app@127.0.0.1:1/none?sslmode=disable":                   DefaultConnectTimeout,
		"postgres://app@127.0.0.1:1/none?sslmode=disable&connect_timeout=2": 2 * time.Second,
	} {
		db, pcfg, _, err := postgresPool(t.Context(), url, ExecModeExec) // a mode asked for: nothing is dialled
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if pcfg.ConnectTimeout != want {
			t.Errorf("%s: connect timeout %s, want %s", url, pcfg.ConnectTimeout, want)
		}
	}
}
