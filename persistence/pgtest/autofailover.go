package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// AutoFailoverDB is the database the formation of NewAutoFailover serves
// (pg_autoctl create postgres --dbname).
const AutoFailoverDB = "solitaire"

// AutoFailover is a pg_auto_failover formation of a test's own: a monitor
// and two PostgreSQL nodes (the formation "default", one group, the
// standby synchronous: a commit is acknowledged once the standby has its
// WAL), each a `pg_autoctl` process of its own that supervises its
// server, in a temporary directory, on free loopback ports. The test may
// kill a node (Kill: the machine's loss, as far as the formation can
// tell), start it again (Start: it rejoins as a standby, through
// pg_rewind), and ask for a switchover (Switchover). The machine's own
// PostgreSQL is never touched.
//
// The monitor's health checks are tightened for the test (a node that
// does not answer is failed over within seconds, not the default 20 s and
// more): see autoFailoverMonitorSettings.
type AutoFailover struct {
	// URL is the formation's database for clients: the multi-host URL
	// `pg_autoctl show uri --formation default` prints
	// (postgres://host1:port1,host2:port2/solitaire?target_session_attrs=read-write),
	// with the user postgres (trust auth) and sslmode=disable.
	URL string
	// MonitorURL is the monitor's database as user postgres
	// (postgres://postgres@127.0.0.1:<port>/pg_auto_failover).
	MonitorURL string

	autoctl, pgctl, dir string
	env                 []string
	cred                *syscall.Credential
	monitorURI          string // the nodes' way to the monitor (autoctl_node)
	monitor             *sql.DB

	mu    sync.Mutex
	procs map[string]*afProcess // "monitor", "node_1", "node_2": the running pg_autoctl
}

// afProcess is a running pg_autoctl (and its server: one process group).
type afProcess struct {
	proc   *os.Process
	exited <-chan struct{}
	log    string
}

// NodeState is a node as the monitor sees it (pgautofailover.node):
// its name (node_1, node_2), port, and its reported and goal states
// (pg_auto_failover's state machine: primary, secondary, wait_primary,
// draining, demoted, catchingup, ...).
type NodeState struct {
	Name     string
	Port     int
	Reported string
	Goal     string
}

// autoFailoverMonitorSettings are the monitor's health-check settings for
// tests, in milliseconds (pg_auto_failover's defaults in brackets): a
// check each second [5 s], given up after 1 s [5 s], retried once [2
// times] after 0.2 s [2 s]; a node is unhealthy after 2 s without news
// [20 s], its keeper gets 2 s to demote it [30 s]; a new node's grace is
// 2 s [10 s]. On loopback, with nothing else failing, these are ample.
var autoFailoverMonitorSettings = map[string]int{
	"health_check_period":               1000,
	"health_check_timeout":              1000,
	"health_check_max_retries":          1,
	"health_check_retry_delay":          200,
	"node_considered_unhealthy_timeout": 2000,
	"primary_demote_timeout":            2000,
	"startup_grace_period":              2000,
}

// findAutoCtl returns pg_autoctl (on $PATH, else beside the server
// binaries) and the binary directory of the newest PostgreSQL major
// version that has the pgautofailover extension (Debian:
// postgresql-<major>-auto-failover), or ok false.
func findAutoCtl() (autoctl, binDir string, ok bool) {
	libs, _ := filepath.Glob("/usr/lib/postgresql/*/lib/pgautofailover.so")
	sort.Slice(libs, func(i, j int) bool { return major(filepath.Dir(libs[i])) > major(filepath.Dir(libs[j])) })
	for _, lib := range libs {
		d := filepath.Join(filepath.Dir(filepath.Dir(lib)), "bin")
		if !isExec(filepath.Join(d, "pg_ctl")) {
			continue
		}
		for _, p := range []string{filepath.Join(d, "pg_autoctl"), "/usr/bin/pg_autoctl"} {
			if isExec(p) {
				return p, d, true
			}
		}
		if p, err := exec.LookPath("pg_autoctl"); err == nil {
			return p, d, true
		}
	}
	return "", "", false
}

// HaveAutoFailover reports whether pg_autoctl and the pgautofailover
// extension are installed (NewAutoFailover skips the test without them).
func HaveAutoFailover() bool {
	_, _, ok := findAutoCtl()
	return ok
}

// NewAutoFailover starts a formation for t (see AutoFailover) and returns
// once its first node is primary and its second a synchronous standby
// (about 15 s); everything is killed and removed when t ends. It skips t
// when pg_autoctl or the extension is not installed (Debian:
// apt-get install postgresql-15-auto-failover; .ci/run does), and calls
// t.Fatal when the formation does not come up within three minutes.
func NewAutoFailover(t testing.TB) *AutoFailover {
	t.Helper()
	autoctl, bin, ok := findAutoCtl()
	if !ok {
		t.Skip("pg_autoctl and the pgautofailover extension are not installed " +
			"(Debian: apt-get install postgresql-15-auto-failover; .ci/run installs it)")
	}
	sweepClusters()
	dir, err := os.MkdirTemp("", clusterPrefix+"af-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &AutoFailover{autoctl: autoctl, pgctl: filepath.Join(bin, "pg_ctl"), dir: dir, procs: map[string]*afProcess{}}
	t.Cleanup(func() {
		f.mu.Lock()
		names := make([]string, 0, len(f.procs))
		for n := range f.procs {
			names = append(names, n)
		}
		f.mu.Unlock()
		for _, n := range names {
			f.kill(n)
		}
		if f.monitor != nil {
			f.monitor.Close()
		}
		os.RemoveAll(dir)
	})
	// pg_autoctl keeps its configuration and state under the XDG
	// directories: the test's own, so that nothing of the machine's is
	// read or written. Servers put their sockets in the default directory
	// (/var/run/postgresql on Debian), on their own ports.
	f.env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"PG_CONFIG=" + filepath.Join(bin, "pg_config"), "PATH=" + bin + ":/usr/bin:/bin", "LANG=C.UTF-8"}
	if os.Geteuid() == 0 {
		// pg_autoctl, like initdb and postgres, refuses to run as root.
		pu, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgtest: running as root and no postgres user to run pg_autoctl as: %v", err)
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		f.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.MkdirAll("/var/run/postgresql", 0o2775); err == nil {
			os.Chown("/var/run/postgresql", uid, gid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := f.start(ctx); err != nil {
		t.Fatalf("pgtest: pg_auto_failover formation: %v\n%s", err, f.Logs())
	}
	return f
}

// start creates the monitor and the two nodes and waits for them.
func (f *AutoFailover) start(ctx context.Context) error {
	ports := make([]int, 3)
	for i := range ports {
		p, err := listenPort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	if err := f.run("monitor", "create", "monitor", "--pgdata", filepath.Join(f.dir, "monitor"),
		"--pgport", strconv.Itoa(ports[0]), "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl",
		"--pgctl", f.pgctl, "--run"); err != nil {
		return err
	}
	f.MonitorURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable", ports[0])
	f.monitorURI = fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", ports[0])
	// The monitor answers once its extension is in place.
	for {
		db, err := connect(f.MonitorURL)
		if err == nil {
			if _, err = db.ExecContext(ctx, `SELECT count(*) FROM pgautofailover.node`); err == nil {
				f.monitor = db
				break
			}
			db.Close()
		}
		if f.exited() != "" {
			return errors.New("pg_autoctl create monitor exited")
		}
		if err := sleep(ctx, 200*time.Millisecond, err); err != nil {
			return fmt.Errorf("the monitor does not answer: %w", err)
		}
	}
	for name, ms := range autoFailoverMonitorSettings {
		if _, err := f.monitor.ExecContext(ctx, fmt.Sprintf("ALTER SYSTEM SET pgautofailover.%s = %d", name, ms)); err != nil {
			return err
		}
	}
	if _, err := f.monitor.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	for i, port := range ports[1:] {
		name := fmt.Sprintf("node_%d", i+1)
		if err := f.run(name, "create", "postgres", "--pgdata", filepath.Join(f.dir, name), "--pgport", strconv.Itoa(port),
			"--listen", "127.0.0.1", "--hostname", "127.0.0.1", "--name", name, "--auth", "trust", "--no-ssl",
			"--pgctl", f.pgctl, "--monitor", f.monitorURI, "--dbname", AutoFailoverDB, "--run"); err != nil {
			return err
		}
		// The first node registers (and so becomes the primary) before
		// the second starts.
		if err := f.WaitFor(ctx, func(ns []NodeState) bool { return len(ns) == i+1 }); err != nil {
			return err
		}
	}
	if err := f.WaitSettled(ctx); err != nil {
		return err
	}
	out, err := f.command("show", "uri", "--pgdata", filepath.Join(f.dir, "monitor"), "--formation", "default").Output()
	if err != nil {
		return fmt.Errorf("pg_autoctl show uri: %w", err)
	}
	u, err := url.Parse(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("pg_autoctl show uri: %q: %w", out, err)
	}
	u.User = url.User("postgres")
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	f.URL = u.String()
	return nil
}

// listenPort returns a port that is free on every address and lies below
// the kernel's range of ephemeral ports (net.ipv4.ip_local_port_range),
// for a server that listens on all addresses (the monitor: pg_autoctl
// sets listen_addresses '*'). A port from the ephemeral range, as
// freePort gives, may meanwhile be the local port of some process's
// outgoing connection; the server's bind on 0.0.0.0 then fails, it
// listens on [::] only, and 127.0.0.1 is refused.
func listenPort() (int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	for range 100 {
		p := 1024 + rand.IntN(low-1024)
		l4, err := net.Listen("tcp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l6, err := net.Listen("tcp6", net.JoinHostPort("::", strconv.Itoa(p)))
		l4.Close()
		if err == nil {
			l6.Close()
			return p, nil
		} else if !errors.Is(err, syscall.EADDRINUSE) {
			return p, nil // no IPv6 on the machine
		}
	}
	return 0, errors.New("no free port below the ephemeral range")
}

// sleep waits d, or returns an error (naming last, the reason to wait)
// once ctx is done.
func sleep(ctx context.Context, d time.Duration, last error) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
	case <-time.After(d):
		return nil
	}
}

// command is pg_autoctl with args, as the formation's user and
// environment, in its own process group.
func (f *AutoFailover) command(args ...string) *exec.Cmd {
	cmd := exec.Command(f.autoctl, args...)
	cmd.Dir = f.dir
	cmd.Env = f.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: f.cred, Setpgid: true}
	return cmd
}

// run starts a long-running pg_autoctl under name, logging to
// <dir>/<name>.log. The process is tied to the test binary: it gets
// SIGTERM (and stops its server) if the binary exits.
func (f *AutoFailover) run(name string, args ...string) error {
	logPath := filepath.Join(f.dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := f.command(args...)
	exited, err := startTied(cmd, logFile, syscall.SIGTERM)
	if err != nil {
		return fmt.Errorf("start pg_autoctl %s: %w", name, err)
	}
	f.mu.Lock()
	f.procs[name] = &afProcess{proc: cmd.Process, exited: exited, log: logPath}
	f.mu.Unlock()
	return nil
}

// exited returns the name of a pg_autoctl of the formation that has
// exited by itself (not killed), or "".
func (f *AutoFailover) exited() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, p := range f.procs {
		select {
		case <-p.exited:
			return name
		default:
		}
	}
	return ""
}

// Nodes returns the formation's nodes as the monitor sees them, by name.
func (f *AutoFailover) Nodes(ctx context.Context) ([]NodeState, error) {
	rows, err := f.monitor.QueryContext(ctx, `SELECT nodename, nodeport, reportedstate::text, goalstate::text
		FROM pgautofailover.node ORDER BY nodename`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ns []NodeState
	for rows.Next() {
		var n NodeState
		if err := rows.Scan(&n.Name, &n.Port, &n.Reported, &n.Goal); err != nil {
			return nil, err
		}
		ns = append(ns, n)
	}
	return ns, rows.Err()
}

// WaitFor polls the monitor every 100 ms until ok holds for its nodes.
// Errors: ctx's, with the last states seen.
func (f *AutoFailover) WaitFor(ctx context.Context, ok func([]NodeState) bool) error {
	for {
		ns, err := f.Nodes(ctx)
		if err == nil && ok(ns) {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("states %v", ns)
		}
		if name := f.exited(); name != "" {
			return fmt.Errorf("pg_autoctl %s exited (states %v)", name, ns)
		}
		if err := sleep(ctx, 100*time.Millisecond, err); err != nil {
			return err
		}
		f.nudgeBaseBackup(ctx, ns)
	}
}

// nudgeBaseBackup asks the primary for an immediate checkpoint while a
// node catches up: pg_autoctl's pg_basebackup waits for a checkpoint,
// which the primary otherwise spreads over minutes
// (checkpoint_completion_target of checkpoint_timeout).
func (f *AutoFailover) nudgeBaseBackup(ctx context.Context, ns []NodeState) {
	var primary, catching *NodeState
	for i := range ns {
		switch ns[i].Reported {
		case "wait_primary", "primary", "single":
			primary = &ns[i]
		case "wait_standby", "catchingup":
			catching = &ns[i]
		}
	}
	if primary == nil || catching == nil {
		return
	}
	db, err := connect(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", primary.Port))
	if err != nil {
		return
	}
	defer db.Close()
	db.ExecContext(ctx, "CHECKPOINT")
}

// WaitSettled waits until one node is primary and the other its
// synchronous standby (secondary), both as assigned.
func (f *AutoFailover) WaitSettled(ctx context.Context) error {
	return f.WaitFor(ctx, func(ns []NodeState) bool {
		states := map[string]int{}
		for _, n := range ns {
			if n.Reported == n.Goal {
				states[n.Reported]++
			}
		}
		return len(ns) == 2 && states["primary"] == 1 && states["secondary"] == 1
	})
}

// Primary returns the name of the node that takes writes (reported and
// assigned primary, wait_primary or single), or "" if none does.
func (f *AutoFailover) Primary(ctx context.Context) (string, error) {
	ns, err := f.Nodes(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range ns {
		switch n.Reported {
		case "primary", "wait_primary", "single":
			if n.Goal == n.Reported {
				return n.Name, nil
			}
		}
	}
	return "", nil
}

// Kill sends SIGKILL to node name's pg_autoctl and its PostgreSQL server
// (postmaster and backends: one process group) at once, as the loss of
// the node's machine would stop them, and waits for pg_autoctl to exit.
// Killing only the server would not fail over: the node's pg_autoctl
// starts it again within a second.
func (f *AutoFailover) Kill(name string) {
	f.kill(name)
}

func (f *AutoFailover) kill(name string) {
	f.mu.Lock()
	p := f.procs[name]
	delete(f.procs, name)
	f.mu.Unlock()
	if p == nil {
		return
	}
	syscall.Kill(-p.proc.Pid, syscall.SIGKILL)
	// The postmaster, should pg_autoctl have started it in a process group of
	// its own (through pg_ctl), with its backends.
	if b, err := os.ReadFile(filepath.Join(f.dir, name, "postmaster.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil && pid > 0 {
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				syscall.Kill(-pid, syscall.SIGKILL)
			} else {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
}

// Start starts node name's pg_autoctl again after Kill, on its data: it
// rejoins the formation (as a standby when another node was promoted
// meanwhile, rewound with pg_rewind).
func (f *AutoFailover) Start(name string) error {
	if name != "node_1" && name != "node_2" {
		return errors.New("pgtest: no node " + name)
	}
	return f.run(name, "run", "--pgdata", filepath.Join(f.dir, name))
}

// Switchover runs `pg_autoctl perform switchover` on the formation: the
// primary is demoted and the standby promoted, and it returns once the
// formation is settled again (or ctx ends it). Errors: pg_autoctl's exit
// status, with its output.
func (f *AutoFailover) Switchover(ctx context.Context) error {
	cmd := f.command("perform", "switchover", "--pgdata", filepath.Join(f.dir, "monitor"), "--formation", "default",
		"--group", "0", "--wait", "180")
	done := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		out, err = cmd.CombinedOutput()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("pg_autoctl perform switchover: %w: %s", err, lastLines(out))
		}
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return ctx.Err()
	}
	return f.WaitSettled(ctx)
}

// Logs returns the end of each pg_autoctl log of the formation, for a
// failing test's message.
func (f *AutoFailover) Logs() string {
	paths, _ := filepath.Glob(filepath.Join(f.dir, "*.log"))
	var b strings.Builder
	for _, p := range paths {
		out, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(p), lastLines(out))
	}
	return b.String()
}
