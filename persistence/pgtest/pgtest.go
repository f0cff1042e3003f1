// Package pgtest gives each test a fresh, empty PostgreSQL database.
//
// The server is, in order of preference:
//
//  1. the one TEST_DATABASE_URL names (a postgres:// URL of a role that may
//     CREATE DATABASE); if it is set but unreachable the test fails, it
//     does not fall back; TEST_DATABASE_URL=throwaway skips to 3.;
//  2. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, if it
//     answers (the development machines and CI run one with trust auth);
//  3. a throwaway cluster that pgtest starts once per test binary from the
//     local PostgreSQL binaries (/usr/lib/postgresql/*/bin, else $PATH):
//     initdb into a temporary directory, then the postgres server on a
//     free loopback port, as the postgres user when running as root. The
//     server is tied to the test binary (it gets SIGINT when the binary
//     exits); directories left by earlier binaries are removed.
//
// If none is possible the test fails with a message saying how to get one.
// Tests never skip for want of a database.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/openpatience/solitaire/persistence/pgurl"
)

// DefaultURL is the server tried when TEST_DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// EnvURL names the environment variable that selects the server.
const EnvURL = "TEST_DATABASE_URL"

// Throwaway is the value of TEST_DATABASE_URL that keeps the tests off
// every running server: pgtest starts its own throwaway cluster (3. in the
// package comment) even when 127.0.0.1:5432 answers, for a machine whose
// PostgreSQL is shared.
const Throwaway = "throwaway"

// server is the PostgreSQL server the test binary uses: its URL and an
// administrative connection to it, or why there is none.
type server struct {
	url   string
	admin *sql.DB
	err   error
}

var (
	once sync.Once
	srv  server
)

// DSN returns the postgres:// URL of a new, empty database created for t
// on the server described in the package comment, with a random name
// (solitaire_test_<hex>). The database is dropped, with any connections
// still open to it, when t and its subtests finish. DSN calls t.Fatal if
// no server can be had.
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(func() { srv = findServer() })
	if srv.err != nil {
		t.Fatal(srv.err)
	}
	name := pgurl.RandomName("solitaire_test_", 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s on %s: %v", name, pgurl.Redact(srv.url), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := srv.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := pgurl.WithDatabase(srv.url, name)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	return u
}

func findServer() server {
	if os.Getenv(EnvURL) == Throwaway {
		u, err := startCluster()
		if err == nil {
			var db *sql.DB
			if db, err = connect(u); err == nil {
				return server{url: u, admin: db}
			}
		}
		return server{err: fmt.Errorf("pgtest: %s=%s: no throwaway cluster could be started: %v", EnvURL, Throwaway, err)}
	}
	if u := os.Getenv(EnvURL); u != "" {
		db, err := connect(u)
		if err != nil {
			return server{err: fmt.Errorf("pgtest: %s=%s does not answer: %v", EnvURL, pgurl.Redact(u), err)}
		}
		return server{url: u, admin: db}
	}
	db, errDefault := connect(DefaultURL)
	if errDefault == nil {
		return server{url: DefaultURL, admin: db}
	}
	u, errCluster := startCluster()
	if errCluster == nil {
		db, errCluster = connect(u)
		if errCluster == nil {
			return server{url: u, admin: db}
		}
	}
	return server{err: fmt.Errorf("pgtest: no PostgreSQL server for the tests: %s is not set, %s does not answer (%v), "+
		"and no throwaway cluster could be started (%v). Set %s to the postgres:// URL of a server "+
		"where the role may CREATE DATABASE, or install PostgreSQL (Debian: apt-get install postgresql) "+
		"so that initdb and postgres are under /usr/lib/postgresql/*/bin or on $PATH",
		EnvURL, DefaultURL, errDefault, errCluster, EnvURL)}
}

// connect opens and pings a pool on u, giving up after a few seconds.
func connect(u string) (*sql.DB, error) {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.SetMaxOpenConns(4)
	return db, nil
}

// clusterPrefix starts the names of throwaway cluster directories in
// os.TempDir().
const clusterPrefix = "solitaire-pgtest-"

// startCluster initialises and starts a PostgreSQL server in a new
// temporary directory and returns its URL. The server is fast and not
// durable (fsync off, synchronous_commit off): it lives only as long as the
// test binary.
func startCluster() (string, error) {
	c, err := newCluster("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	if err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	return c.URL, nil
}

// findBinaries returns the directory holding initdb and postgres: the
// newest /usr/lib/postgresql/<major>/bin, else the one of initdb on $PATH.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb and postgres under /usr/lib/postgresql/*/bin or on $PATH")
}

func major(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// sweepClusters removes the directories of throwaway clusters whose test
// binary has exited.
func sweepClusters() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clusterPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lastLines returns the end of a command's output for an error message.
func lastLines(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
