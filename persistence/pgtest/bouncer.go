package pgtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bouncer starts a PgBouncer (the Debian package pgbouncer; .ci/run
// installs it) in transaction pooling mode in front of the server of dsn,
// a URL from DSN, and returns the URL of dsn's database through it. The
// bouncer is a process of its own on a free loopback port, with a
// generated configuration in a temporary directory (trust auth to its
// clients; the server is reached as dsn's user, with dsn's password if
// any); it is stopped when t ends. The machine's own PgBouncer service, if
// any, is left alone. Bouncer calls t.Fatal if pgbouncer cannot be run.
func Bouncer(t testing.TB, dsn string) string {
	t.Helper()
	bin := bouncerBinary(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: bouncer: %v", err)
	}
	listen, err := freePort()
	if err != nil {
		t.Fatalf("pgtest: bouncer: %v", err)
	}
	ini := writeBouncerConfig(t, u, listen)
	args := []string{ini}
	if os.Geteuid() == 0 {
		runAs := "nobody"
		if _, err := user.Lookup("postgres"); err == nil {
			runAs = "postgres"
		}
		args = []string{"-u", runAs, ini}
	}
	cmd := exec.Command(bin, args...)
	logs := &lockedLog{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgtest: start pgbouncer: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(listen))
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("pgtest: pgbouncer exited: %s", lastLines([]byte(logs.String())))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: pgbouncer does not listen on %s: %s", addr, lastLines([]byte(logs.String())))
		}
		time.Sleep(50 * time.Millisecond)
	}
	through := *u
	through.Host = addr
	return through.String()
}

// bouncerBinary is the path of the pgbouncer program: on $PATH, or in
// /usr/sbin or /usr/bin, where the Debian package puts it (often not on
// a user's $PATH). It calls t.Fatal if there is none.
func bouncerBinary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"} {
			if isExec(p) {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		t.Fatal("pgtest: pgbouncer not found; install the Debian package pgbouncer (.ci/run does)")
	}
	return bin
}

// writeBouncerConfig writes Bouncer's configuration into a new temporary
// directory, removed when t ends, and returns the path of its
// pgbouncer.ini: transaction pooling on 127.0.0.1:listen in front of the
// server of u (default 127.0.0.1:5432), trust auth to its clients, and an
// auth file with u's user and password (if any) for the server. It calls
// t.Fatal if a file cannot be written.
func writeBouncerConfig(t testing.TB, u *url.URL, listen int) string {
	t.Helper()
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "5432"
	}
	userName := u.User.Username()
	password, _ := u.User.Password()
	// pgbouncer refuses to run as root; -u drops to another user, who must
	// read the configuration.
	dir, err := os.MkdirTemp("", "pgtest-bouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	users := filepath.Join(dir, "users.txt")
	ini := filepath.Join(dir, "pgbouncer.ini")
	conf := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,search_path
server_login_retry = 1
`, host, port, listen, users)
	for path, content := range map[string]string{users: quote(userName) + " " + quote(password) + "\n", ini: conf} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ini
}

// lockedLog collects a process's output.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
