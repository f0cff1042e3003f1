package api_test

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// tcpProxy stands between the store and PostgreSQL so a test can cut the
// database off (every open connection reset, new ones closed at once) and
// bring it back, as a network partition or a database restart would.
type tcpProxy struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newTCPProxy listens on a free loopback port and forwards to target
// (host:port) until the test ends.
func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			resetConn(c)
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.pipe(c)
	}
}

// pipe forwards one client connection until either side closes or the
// proxy cuts it.
func (p *tcpProxy) pipe(c net.Conn) {
	defer p.wg.Done()
	u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	p.mu.Lock()
	if err != nil || p.down {
		p.mu.Unlock()
		if u != nil {
			resetConn(u)
		}
		p.drop(c)
		return
	}
	p.conns[u] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
	p.drop(c)
	p.drop(u)
	<-done
}

// drop resets a connection and forgets it.
func (p *tcpProxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	resetConn(c)
}

// reset closes c with a TCP RST, as a dead peer or a firewall would.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// Cut resets every connection and refuses new ones until Restore.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		resetConn(c)
		delete(p.conns, c)
	}
}

// Restore lets connections through again.
func (p *tcpProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// outagePlayer is one client of the outage test, playing its own game.
type outagePlayer struct {
	token, game string
	rnd         *rand.Rand

	acked           map[int]json.RawMessage // version -> the event a 200 answer listed
	sent, ok, stale int
	unavailable     int // 503 database_unavailable
	transport       int // no answer at all
	lastOK          time.Time
}

// TestDatabaseOutage cuts PostgreSQL off under clients that keep playing:
// while it is gone every request is answered 503 database_unavailable with
// Retry-After (never 500) and /readyz is 503; once it is back the server
// serves again by itself within seconds, without a restart; afterwards every
// event a client was told about is in the log, byte for byte, and every
// game's hash chain verifies (nothing half written).
func TestDatabaseOutage(t *testing.T) {
	t.Parallel() // mostly waiting
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	store, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: u.String(), SnapshotEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	// Every 503 is logged; the answers are what the test checks.
	e := newEnvOn(t, store, func(c *api.Config) { c.Logger = nil })

	const clients = 4
	players := make([]*outagePlayer, clients)
	for i := range players {
		_, token := e.newPlayer("p" + strconv.Itoa(i))
		var g api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: token,
			body: api.CreateGameRequest{Variant: "relaxed"}}).decode(t, &g)
		players[i] = &outagePlayer{token: token, game: g.ID, rnd: rand.New(rand.NewPCG(uint64(i), 8)),
			acked: map[int]json.RawMessage{}}
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && !t.Failed() {
				if !p.step(t, e) {
					return
				}
			}
		}()
	}

	time.Sleep(800 * time.Millisecond)
	proxy.Cut()
	cutAt := time.Now()
	readyDown := waitReady(e, http.StatusServiceUnavailable, 5*time.Second)
	if readyDown < 0 {
		t.Errorf("/readyz did not fail within 5 s of the cut")
	}
	time.Sleep(1500 * time.Millisecond)
	proxy.Restore()
	restoredAt := time.Now()
	readyUp := waitReady(e, http.StatusOK, 15*time.Second)
	if readyUp < 0 {
		t.Errorf("/readyz did not recover within 15 s of the database's return")
	}
	// Every client must have had a move accepted after the return.
	var movesUp time.Duration = -1
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		all := true
		for _, p := range players {
			if p.lastOKAt().Before(restoredAt) {
				all = false
			}
		}
		if all {
			movesUp = time.Since(restoredAt)
			break
		}
	}
	if movesUp < 0 {
		t.Errorf("not every client could play within 15 s of the database's return")
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	var sent, ok, unavailable, transport, stale, lost, ambiguous int
	for _, p := range players {
		sent += p.sent
		ok += p.ok
		unavailable += p.unavailable
		transport += p.transport
		stale += p.stale
		l, a := p.verify(t, e)
		lost += l
		ambiguous += a
	}
	if unavailable == 0 {
		t.Errorf("no request was answered 503 during the outage")
	}
	if lost > 0 {
		t.Errorf("%d acknowledged events are not in the log", lost)
	}
	if five := serverErrors(e); five > 0 {
		t.Errorf("%d answers were 5xx other than 503", five)
	}
	figures(t, "%d clients, %d requests (%d moves accepted, %d answered 503, %d unanswered, %d stale), outage %v, "+
		"/readyz 503 after %v, ready again %v and all clients playing %v after the database returned, "+
		"5xx other than 503: %d, events lost: %d, applied though answered 503: %d, chains verified: %d",
		clients, sent, ok, unavailable, transport, stale, restoredAt.Sub(cutAt).Round(time.Millisecond),
		readyDown.Round(time.Millisecond), readyUp.Round(time.Millisecond), movesUp.Round(time.Millisecond),
		serverErrors(e), lost, ambiguous, clients)
}

// waitReady polls /readyz until it answers want and returns how long that
// took, or -1 after limit.
func waitReady(e *env, want int, limit time.Duration) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < limit {
		r, err := e.sendRaw(rawReq{method: "GET", path: "/readyz", token: "-", timeout: 3 * time.Second})
		if err == nil && r.status == want {
			return time.Since(t0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return -1
}

var outageMu sync.Mutex // guards the players' lastOK for the test goroutine

func (p *outagePlayer) lastOKAt() time.Time {
	outageMu.Lock()
	defer outageMu.Unlock()
	return p.lastOK
}

// step reads the legal moves and plays one of them with If-Match (so a
// retry after an unknown outcome is refused, never applied twice). It
// returns false once the game has no move left.
func (p *outagePlayer) step(t *testing.T, e *env) bool {
	r, err := e.sendRaw(rawReq{method: "GET", path: "/v1/games/" + p.game + "/legal-moves", token: p.token})
	if !p.count(t, r, err, false) {
		return true
	}
	var l api.LegalMoves
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Errorf("legal moves: %v", err)
		return false
	}
	var choice []api.MoveRequest
	for _, m := range l.Moves {
		if m.Type != "resign" && (m.Type != "undo" || p.rnd.IntN(5) == 0) {
			choice = append(choice, m)
		}
	}
	if len(choice) == 0 {
		return false
	}
	body, _ := json.Marshal(choice[p.rnd.IntN(len(choice))])
	r, err = e.sendRaw(rawReq{method: "POST", path: "/v1/games/" + p.game + "/moves", token: p.token, body: body,
		header: map[string]string{"If-Match": quoted(l.Version)}})
	if !p.count(t, r, err, true) {
		return true
	}
	var res struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Errorf("move result: %v", err)
		return false
	}
	for _, ev := range res.Events {
		var v struct {
			Version int `json:"version"`
		}
		json.Unmarshal(ev, &v)
		p.acked[v.Version] = ev
	}
	p.ok++
	outageMu.Lock()
	p.lastOK = time.Now()
	outageMu.Unlock()
	return true
}

// count files an answer; it reports whether it was a 200 to go on with.
// 503 must be database_unavailable with Retry-After; 412 means an earlier
// move whose answer was lost was applied after all.
func (p *outagePlayer) count(t *testing.T, r resp, err error, isMove bool) bool {
	p.sent++
	switch {
	case err != nil:
		p.transport++
		time.Sleep(20 * time.Millisecond)
		return false
	case r.status == http.StatusOK:
		return true
	case r.status == http.StatusServiceUnavailable:
		var prob api.Problem
		if json.Unmarshal(r.body, &prob); prob.Code != api.CodeDatabaseUnavailable {
			t.Errorf("503 with code %q, want %s", prob.Code, api.CodeDatabaseUnavailable)
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("503 with Retry-After %q", r.header.Get("Retry-After"))
		}
		p.unavailable++
		time.Sleep(20 * time.Millisecond)
		return false
	case r.status == http.StatusPreconditionFailed && isMove:
		p.stale++
		return false
	}
	t.Errorf("unexpected answer %d: %s", r.status, truncate(r.body))
	return false
}

// verify checks the game after the test: its chain verifies, its record
// matches its log, and every acknowledged event is in the log as it was
// sent. It returns the events lost and those in the log that no 200 answer
// listed (applied, but the answer was a 503 or never came).
func (p *outagePlayer) verify(t *testing.T, e *env) (lost, ambiguous int) {
	ctx := context.Background()
	bad, err := e.store.VerifyChain(ctx, p.game)
	if err != nil || bad != 0 {
		t.Errorf("game %s: chain broken at %d (%v)", p.game, bad, err)
	}
	if _, _, err := e.store.Load(ctx, p.game); err != nil {
		t.Errorf("game %s does not load: %v", p.game, err)
	}
	logged := map[int]json.RawMessage{}
	after := 0
	for {
		var page struct {
			Events    []json.RawMessage `json:"events"`
			NextAfter *int              `json:"next_after"`
		}
		r := e.must(http.StatusOK, req{method: "GET", token: p.token,
			path: "/v1/games/" + p.game + "/events?limit=500&after=" + strconv.Itoa(after)})
		r.decode(t, &page)
		for _, ev := range page.Events {
			var v struct {
				Version int `json:"version"`
			}
			json.Unmarshal(ev, &v)
			logged[v.Version] = ev
		}
		if page.NextAfter == nil {
			break
		}
		after = *page.NextAfter
	}
	for v, ev := range p.acked {
		got, ok := logged[v]
		if !ok || !sameJSON(got, ev) {
			lost++
			t.Errorf("game %s: acknowledged event %d is not in the log as sent:\nsent   %s\nlogged %s", p.game, v, ev, got)
		}
	}
	for v := range logged {
		if _, ok := p.acked[v]; !ok && v > 1 {
			ambiguous++
		}
	}
	return lost, ambiguous
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
