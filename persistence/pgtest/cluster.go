package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is a PostgreSQL server of a test's own, initialised by initdb in
// a temporary directory, which the test may crash and start again (the
// machine's shared server must never be stopped by a test). Its data
// survives a crash as it would a crash of the database processes:
// commits are synchronous (an acknowledged commit is in the WAL), and
// only fsync is off, which matters for a crash of the machine, not of
// PostgreSQL.
type Cluster struct {
	URL string // postgres://postgres@127.0.0.1:<port>/postgres?sslmode=disable

	bin, dir, data string
	port           int
	cred           *syscall.Credential
	args           []string // extra server arguments (-c name=value ...)

	mu     sync.Mutex
	proc   *os.Process     // the postmaster, while running
	exited <-chan struct{} // closed when proc has exited
}

// NewCluster initialises and starts a cluster for t and stops it (and
// removes its files) when t ends. It calls t.Fatal if no cluster can be
// started (no initdb on the machine: see the package comment).
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := newCluster("-c", "fsync=off", "-c", "synchronous_commit=on", "-c", "max_connections=100")
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		t.Fatalf("pgtest: a cluster of the test's own: %v", err)
	}
	t.Cleanup(func() {
		c.Crash()
		os.RemoveAll(c.dir)
	})
	return c
}

// newCluster runs initdb in a new directory under os.TempDir() (marked
// as this process's, for sweepClusters) and picks a free port; args are
// the server's extra arguments.
func newCluster(args ...string) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	sweepClusters()
	dir, err := os.MkdirTemp("", clusterPrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), args: args}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		pu, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", c.data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLines(out))
	}
	if c.port, err = freePort(); err != nil {
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	return c, nil
}

// Start starts the server (again, after Crash) on the cluster's data and
// port, and returns once it answers. The server is tied to the test
// binary: it gets SIGINT if the binary exits.
func (c *Cluster) Start() error {
	logPath := filepath.Join(c.dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	args := append([]string{"-D", c.data, "-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1"}, c.args...)
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	exited, err := startTied(cmd, logFile, syscall.SIGINT)
	if err != nil {
		return fmt.Errorf("start postgres: %v", err)
	}
	c.mu.Lock()
	c.proc, c.exited = cmd.Process, exited
	c.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := connect(c.URL)
		if err == nil {
			db.Close()
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited: %s", lastLines(out))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return fmt.Errorf("postgres did not answer within a minute: %v", err)
		}
	}
}

// startTied starts cmd with its output to logFile, tied to the test
// binary: cmd gets signal sig when the binary exits (Pdeathsig, set on
// cmd.SysProcAttr, which must not be nil). The returned channel is closed
// once cmd has exited (logFile is closed then). Pdeathsig is sent when
// the thread that started the child exits, so the child is started from
// a goroutine that keeps its thread locked for as long as it runs.
func startTied(cmd *exec.Cmd, logFile *os.File, sig syscall.Signal) (<-chan struct{}, error) {
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr.Pdeathsig = sig
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			logFile.Close()
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

// Crash stops the server at once, as `pg_ctl stop -m immediate` does
// (SIGQUIT to the postmaster: every backend quits without a checkpoint;
// the next Start recovers from the WAL), and waits until it has exited.
// It does nothing if the server is not running.
func (c *Cluster) Crash() {
	c.mu.Lock()
	p, exited := c.proc, c.exited
	c.proc = nil
	c.mu.Unlock()
	if p == nil {
		return
	}
	p.Signal(syscall.SIGQUIT)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		p.Kill()
		<-exited
	}
}

// Standby makes a hot standby of c for t: a base backup of c
// (pg_basebackup -R: it streams c's WAL and replays it) started on a free
// port of its own, and returns it once it answers. It is stopped and
// removed when t ends. It calls t.Fatal if the backup or the start fails.
func (c *Cluster) Standby(t testing.TB) *Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", clusterPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	sb := &Cluster{bin: c.bin, dir: dir, data: filepath.Join(dir, "data"), cred: c.cred, args: c.args}
	backup := exec.Command(filepath.Join(c.bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(c.port),
		"-U", "postgres", "-D", sb.data, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	backup.Dir = dir
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := backup.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: pg_basebackup: %v: %s", err, lastLines(out))
	}
	if sb.port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	sb.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", sb.port)
	if err := sb.Start(); err != nil {
		t.Fatalf("pgtest: standby: %v", err)
	}
	t.Cleanup(sb.Crash)
	return sb
}
