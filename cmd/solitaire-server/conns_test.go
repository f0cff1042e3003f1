package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fakeConn is a connection from remote that records its closing; nothing
// else of it is used by admit.
type fakeConn struct {
	net.Conn
	remote string
	closed bool
}

func (f *fakeConn) RemoteAddr() net.Addr {
	a, err := net.ResolveTCPAddr("tcp", f.remote)
	if err != nil {
		panic(err)
	}
	return a
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

// admitFrom offers a new connection from remote to l: the held connection
// (nil if refused) and the one closed to make room (nil if none).
func admitFrom(t *testing.T, l *connLimiter, remote string) (admitted, victim *limitedConn) {
	t.Helper()
	admitted, victim = l.admit(&fakeConn{remote: remote})
	if victim != nil && !victim.gone {
		t.Fatalf("the connection closed for %s is still on the books", remote)
	}
	return admitted, victim
}

// checkBooks fails unless l holds open connections in all, and its
// per-address groups add up to that and to their idle counts.
func checkBooks(t *testing.T, l *connLimiter, open int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	sum := 0
	for key, g := range l.addrs {
		idle := 0
		for c := range g.conns {
			if c.idle {
				idle++
			}
			if c.gone || c.key != key {
				t.Errorf("%s holds a connection that is gone (%v) or of %s", key, c.gone, c.key)
			}
		}
		if idle != g.idle || len(g.conns) == 0 || len(g.conns) > l.perAddress {
			t.Errorf("%s: %d connections, %d idle, counted %d idle (bound %d)", key, len(g.conns), idle, g.idle, l.perAddress)
		}
		sum += len(g.conns)
	}
	if sum != l.open || l.open != open || l.open > l.total {
		t.Errorf("%d connections held, groups add up to %d, want %d (bound %d)", l.open, sum, open, l.total)
	}
}

// TestConnLimiterIdleFirst: the choices of the connection bound. At an
// address's bound a new connection replaces that address's longest-idle
// connection (idle since its accept, or since its last answer), or is
// refused when every one of them is serving a request; at the server's
// bound it replaces the longest-idle connection of the address holding
// the most among those with an idle one, or is refused when none is idle.
// IPv6 addresses count by /64, as the rate limit groups them; closing a
// connection, by the server or by its state, frees its place.
func TestConnLimiterIdleFirst(t *testing.T) {
	const a, b, c, d = "192.0.2.1:1000", "192.0.2.2:1000", "192.0.2.3:1000", "192.0.2.4:1000"
	l := newConnLimiter(nil, 3, 5)
	a1, _ := admitFrom(t, l, a)
	a2, _ := admitFrom(t, l, "192.0.2.1:1001")
	a3, _ := admitFrom(t, l, "192.0.2.1:1002")
	if a1 == nil || a2 == nil || a3 == nil {
		t.Fatal("connections under the bounds refused")
	}
	checkBooks(t, l, 3)
	// a1 serves a request; a2 answered one after a3 was accepted, so a3
	// has been idle the longest.
	l.connState(a1, http.StateNew)
	l.connState(a1, http.StateActive)
	l.connState(a2, http.StateActive)
	l.connState(a2, http.StateIdle)
	a4, victim := admitFrom(t, l, a)
	if a4 == nil || victim != a3 {
		t.Fatalf("a 4th connection of an address with a bound of 3: admitted %v, closed %p, want a3 %p closed", a4 != nil, victim, a3)
	}
	checkBooks(t, l, 3)
	// a2 answered before a4 was accepted: a2 has been idle longer.
	a5 := victimOf(t, l, a, a2)
	// Every connection of a busy: the next one is refused.
	l.connState(a5, http.StateHijacked) // a hijacked connection counts as serving
	if got := l.addrs["192.0.2.1"]; got == nil || got.idle != 1 {
		t.Fatalf("address a: %+v, want one idle connection", got)
	}
	l.connState(l.addrs["192.0.2.1"].longestIdle(), http.StateActive)
	if admitted, victim := admitFrom(t, l, a); admitted != nil || victim != nil {
		t.Fatalf("a connection over a's bound with none idle: admitted %v, closed %v, want refused", admitted != nil, victim != nil)
	}
	checkBooks(t, l, 3)

	// The server's bound (5): b holds 2, then c's new connection replaces
	// b's longest-idle one, since a's are all busy though a holds more.
	b1, _ := admitFrom(t, l, b)
	b2, _ := admitFrom(t, l, "192.0.2.2:1001")
	checkBooks(t, l, 5)
	l.connState(b1, http.StateActive)
	l.connState(b1, http.StateIdle) // b2 is now the longest idle of b
	c1, victim := admitFrom(t, l, c)
	if c1 == nil || victim != b2 {
		t.Fatalf("c's connection at the server's bound: admitted %v, closed %p, want b2 %p", c1 != nil, victim, b2)
	}
	checkBooks(t, l, 5)
	// b and c hold one each; of equals, the first address (b) gives way.
	if _, victim := admitFrom(t, l, d); victim != b1 {
		t.Fatalf("closed %p, want b1 %p (b and c hold one each; b sorts first)", victim, b1)
	}
	l.connState(c1, http.StateActive)
	for c := range l.addrs["192.0.2.4"].conns {
		l.connState(c, http.StateActive)
	}
	// Nothing idle anywhere: refused.
	if admitted, victim := admitFrom(t, l, "192.0.2.5:1"); admitted != nil || victim != nil {
		t.Fatalf("a connection at the server's bound with none idle: admitted %v, closed %v, want refused", admitted != nil, victim != nil)
	}
	// Closing frees a place, whether by Close or by its state.
	c1.Close()
	checkBooks(t, l, 4)
	if admitted, victim := admitFrom(t, l, "192.0.2.5:1"); admitted == nil || victim != nil {
		t.Fatalf("after a close: admitted %v, closed %v, want admitted without closing another", admitted != nil, victim != nil)
	}
	l.connState(a1, http.StateClosed)
	a1.Close() // the server closes it too: counted once
	checkBooks(t, l, 4)
	if s := l.stats(); s.open != 4 || s.closedIdle != 4 || s.refused != 2 {
		t.Errorf("stats %+v, want 4 open, 4 closed to make room, 2 refused", s)
	}

	// The address holding the most gives way, though another's connection
	// has been idle longer.
	l = newConnLimiter(nil, 10, 4)
	admitFrom(t, l, "198.51.100.1:1")
	y1, _ := admitFrom(t, l, "198.51.100.2:1")
	admitFrom(t, l, "198.51.100.2:2")
	admitFrom(t, l, "198.51.100.2:3")
	victimOf(t, l, "198.51.100.3:1", y1)
	checkBooks(t, l, 4)

	// IPv6: one /64 is one address.
	l = newConnLimiter(nil, 2, 10)
	v1, _ := admitFrom(t, l, "[2001:db8:1:2::1]:1")
	admitFrom(t, l, "[2001:db8:1:2:ffff::9]:1")
	if _, victim := admitFrom(t, l, "[2001:db8:1:2::77]:1"); victim != v1 {
		t.Errorf("a 3rd connection of one /64 with a bound of 2: closed %p, want the first %p", victim, v1)
	}
	if admitted, victim := admitFrom(t, l, "[2001:db8:1:3::1]:1"); admitted == nil || victim != nil {
		t.Errorf("another /64: admitted %v, closed %v, want admitted", admitted != nil, victim != nil)
	}
	checkBooks(t, l, 3)
}

// victimOf admits a connection from remote and fails unless it replaced
// want.
func victimOf(t *testing.T, l *connLimiter, remote string, want *limitedConn) *limitedConn {
	t.Helper()
	admitted, victim := admitFrom(t, l, remote)
	if admitted == nil || victim != want {
		t.Fatalf("admitted %v, closed %p, want %p closed", admitted != nil, victim, want)
	}
	return admitted
}

// TestConnLimiterServes: the bound in front of a real http.Server, over
// TCP from several loopback addresses (127.0.0.2 ...). A keep-alive
// connection idle the longest is closed by the server when its address
// opens one too many (its client reads EOF), one serving a request is
// never closed for another, a new connection with nothing to replace is
// closed before it is answered, and at the server's bound the busiest
// address with an idle connection gives way.
func TestConnLimiterServes(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimiter(tcp, 2, 3)
	release := make(chan struct{})
	srv := &http.Server{ConnState: l.connState, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-release
			}
		})}
	go srv.Serve(l)
	defer srv.Close()
	defer close(release)
	addr := tcp.Addr().String()

	// One after the other, each idle before the next is asked: the order
	// of their idle times is then the order of the asks, however the
	// server's goroutines are scheduled.
	a1 := ask(t, addr, 2, "/")
	waitIdle(t, l, "127.0.0.2", 1)
	a2 := ask(t, addr, 2, "/")
	waitIdle(t, l, "127.0.0.2", 2)
	a3 := ask(t, addr, 2, "/") // a1 has been idle the longest
	if err := a1.closedByServer(); err != nil {
		t.Errorf("a1 after its address's 3rd connection: %v", err)
	}
	if err := a2.again("/"); err != nil {
		t.Errorf("a2 after its address's 3rd connection: %v", err)
	}
	// a2 and a3 serve requests that last: a 4th connection is refused.
	for _, c := range []*testConn{a2, a3} {
		if _, err := c.start("/block"); err != nil {
			t.Fatal(err)
		}
	}
	a4 := dial(t, addr, 2)
	if err := a4.refused(); err != nil {
		t.Errorf("a 4th connection while the address's 2 serve requests: %v", err)
	}
	// The server's bound (3): b holds one idle connection, c's new one
	// replaces it (a holds more, but none of a's is idle).
	b1 := ask(t, addr, 3, "/")
	waitIdle(t, l, "127.0.0.3", 1)
	c1 := ask(t, addr, 4, "/")
	if err := b1.closedByServer(); err != nil {
		t.Errorf("b1 after c's connection at the server's bound: %v", err)
	}
	waitIdle(t, l, "127.0.0.4", 1)
	if _, err := c1.start("/block"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, l, "127.0.0.4", 0)
	if err := dial(t, addr, 5).refused(); err != nil {
		t.Errorf("a connection at the server's bound with none idle: %v", err)
	}
	if s := l.stats(); s.open != 3 || s.closedIdle != 2 || s.refused != 2 {
		t.Errorf("stats %+v, want 3 open, 2 closed to make room, 2 refused", s)
	}
}

// testConn is a client's raw HTTP/1.1 connection from 127.0.0.n.
type testConn struct {
	t    *testing.T
	conn net.Conn
	rd   *bufio.Reader
}

// dial opens a connection to addr from 127.0.0.n.
func dial(t *testing.T, addr string, n byte) *testConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, n)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testConn{t: t, conn: conn, rd: bufio.NewReader(conn)}
}

// ask dials from 127.0.0.n and gets path on the new connection.
func ask(t *testing.T, addr string, n byte, path string) *testConn {
	t.Helper()
	c := dial(t, addr, n)
	if err := c.again(path); err != nil {
		t.Fatalf("%s from 127.0.0.%d: %v", path, n, err)
	}
	return c
}

// start sends a request for path and reads its status line and headers:
// the answer, whose body is still to be read.
func (c *testConn) start(path string) (*http.Response, error) {
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return nil, err
	}
	res, err := http.ReadResponse(c.rd, nil)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	return res, nil
}

// again gets path on the connection, body included.
func (c *testConn) again(path string) error {
	res, err := c.start(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, res.Body)
	return err
}

// closedByServer reports an error unless the server has closed the
// connection: reading finds its end (EOF or a reset), not a timeout.
func (c *testConn) closedByServer() error {
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.rd.ReadByte()
	var ne net.Error
	switch {
	case err == nil:
		return errors.New("the connection sent a byte, want it closed")
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("the connection is still open: %v", err)
	}
	return nil
}

// refused reports an error unless a request on the connection gets no
// answer, the server having closed it.
func (c *testConn) refused() error {
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c.conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return nil // closed already
	}
	return c.closedByServer()
}

// waitIdle waits until the address key has idle connections on l's books
// (the server marks a connection idle just after its answer is written).
func waitIdle(t *testing.T, l *connLimiter, key string, idle int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		l.mu.Lock()
		n := 0
		if g := l.addrs[key]; g != nil {
			n = g.idle
		}
		l.mu.Unlock()
		if n == idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d idle connections, want %d", key, n, idle)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLoadConns: SOLITAIRE_MAX_CONNS_PER_ADDRESS and SOLITAIRE_MAX_CONNS,
// the default bound from the open-file limit, and the refusals of bad
// values, each naming its variable.
func TestLoadConns(t *testing.T) {
	for _, tc := range []struct {
		nofile  uint64
		db      int
		want    int
		wantErr bool
	}{
		{0, 20, 10_000, false}, {1024, 20, 939, false}, {1024, 100, 859, false},
		{1 << 20, 20, 10_000, false}, {10_100, 20, 10_000, false}, {10_000, 20, 9915, false},
		{85, 20, 0, true}, {86, 20, 1, false},
	} {
		c := config{}
		c.store.MaxConns = tc.db
		err := c.loadConns(env(nil), tc.nofile)
		if (err != nil) != tc.wantErr || (err == nil && c.maxConns != tc.want) || c.maxConnsPerAddress != 128 {
			t.Errorf("ulimit -n %d, pool %d: bound %d, per address %d, %v; want %d, 128, error %v",
				tc.nofile, tc.db, c.maxConns, c.maxConnsPerAddress, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "ulimit -n") {
			t.Errorf("the error does not say what to raise: %v", err)
		}
	}
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.maxConnsPerAddress != defaultMaxConnsPerAddress || c.maxConns != connBound(openFileLimit(), 20) {
		t.Errorf("defaults: per address %d, server %d", c.maxConnsPerAddress, c.maxConns)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "3", "SOLITAIRE_MAX_CONNS": "500"}))
	if err != nil || c.maxConnsPerAddress != 3 || c.maxConns != 500 {
		t.Errorf("from env: per address %d, server %d, %v", c.maxConnsPerAddress, c.maxConns, err)
	}
	c = config{}
	if err := c.loadConns(env(map[string]string{"SOLITAIRE_MAX_CONNS": "939"}), 1024); err != nil || c.maxConns != 939 {
		t.Errorf("SOLITAIRE_MAX_CONNS=939 under ulimit -n 1024: %d %v", c.maxConns, err)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "0"}, {"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "many"},
		{"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "-1"}, {"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "1000001"},
		{"SOLITAIRE_MAX_CONNS": "0"}, {"SOLITAIRE_MAX_CONNS": "1e3"}, {"SOLITAIRE_MAX_CONNS": "2000000"},
	} {
		_, err := loadConfig(env(bad))
		for name := range bad {
			if err == nil || !strings.Contains(err.Error(), name+"=") {
				t.Errorf("%v: %v, want an error naming %s", bad, err, name)
			}
		}
	}
	c = config{}
	err = c.loadConns(env(map[string]string{"SOLITAIRE_MAX_CONNS": "940"}), 1024)
	if err == nil || !strings.Contains(err.Error(), "want 1..939 connections") {
		t.Errorf("SOLITAIRE_MAX_CONNS=940 under ulimit -n 1024: %v, want refused (1..939)", err)
	}
	// A bad value stops the server before it listens.
	vars := map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "SOLITAIRE_SQLITE_PATH": t.TempDir() + "/s.db",
		"SOLITAIRE_MAX_CONNS_PER_ADDRESS": "none"}
	if err := run(t.Context(), nil, env(vars), io.Discard, nil); err == nil || !strings.Contains(err.Error(), "SOLITAIRE_MAX_CONNS_PER_ADDRESS") {
		t.Errorf("a bad SOLITAIRE_MAX_CONNS_PER_ADDRESS: %v", err)
	}
}
