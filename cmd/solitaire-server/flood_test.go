package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sizes of the connection flood: the connections the abuser opens, how
// many it dials at once, how often it pings each, and the other client's
// requests (and how long each may take).
const (
	floodConns      = 1100
	floodDialers    = 64
	floodPingEvery  = 500 * time.Millisecond
	floodRequests   = 100
	floodTimeout    = 10 * time.Second
	floodMaxFailing = 3 // the other client stops after this many failures
)

// TestConnectionFlood: the built server under `ulimit -n 1024`, on the
// embedded database. An abuser opens 1,100 keep-alive connections and
// pings /healthz on each every 0.5 s; meanwhile another client, from
// 127.0.0.1, sends 100 ordinary API requests (a new player, then the
// variants and the player's games, alternately), each on a new
// connection, and every one must answer 2xx within 10 s. Once from one
// address (127.0.0.2), which meets its address's bound (128): its
// longest-idle connections are closed to make room, so it holds at most
// 128 and the server's descriptors are never exhausted. Once from ten
// addresses (127.0.0.2 to .11, 110 each), which together meet the
// server's bound (939 under ulimit -n 1024 with the default pool of 20):
// the other client's connections replace the busiest address's idle ones.
// Without the bounds the one address took every descriptor (1,011
// connections) and every other client timed out.
func TestConnectionFlood(t *testing.T) {
	t.Parallel()
	wrapper := underOpenFileLimit(t, buildBinary(t), 1024)
	p := startServerProcess(t, wrapper, "SOLITAIRE_ADDR=127.0.0.1:0",
		"SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "flood.db"))
	if logs := p.logs.String(); !strings.Contains(logs, `"max_conns":939`) || !strings.Contains(logs, `"max_conns_per_address":128`) {
		t.Fatalf("the server does not bound connections at 939, 128 per address, under ulimit -n 1024:\n%s", tail(logs))
	}
	addr := strings.TrimPrefix(p.base, "http://")
	for _, sc := range []struct {
		name      string
		addresses int
		most      int // connections the abuser may hold at the end
	}{
		{"one address", 1, defaultMaxConnsPerAddress},
		{"ten addresses", 10, 939},
	} {
		t.Run(sc.name, func(t *testing.T) {
			before := serverConnMetrics(t, p.base)
			ctx, stop := context.WithCancel(context.Background())
			ab := &abuser{addr: addr}
			var wg sync.WaitGroup
			wg.Go(func() { ab.flood(ctx, sc.addresses) })
			// The other client starts with the flood and goes on once the
			// abuser holds its connections.
			lat, failures := otherClient(t, p.base)
			ab.waitDialled()
			stop()
			wg.Wait()
			after := serverConnMetrics(t, p.base)
			load := loadAverage()

			if failures != "" {
				t.Errorf("the other client: %d of %d requests answered 2xx within %v; failures:\n%s\nserver log:\n%s",
					len(lat), floodRequests, floodTimeout, failures, tail(p.logs.String()))
			}
			held := int(ab.held.Load())
			if held > sc.most || ab.connected.Load() < floodConns/2 {
				t.Errorf("the abuser connected %d times and holds %d connections at the end, want at most %d",
					ab.connected.Load(), held, sc.most)
			}
			made := after["closed_idle"] + after["refused"] - before["closed_idle"] - before["refused"]
			if want := int(ab.connected.Load()) - sc.most; made < want {
				t.Errorf("the server closed %d idle connections and refused %d, want at least %d together (%d connected, bound %d)",
					after["closed_idle"]-before["closed_idle"], after["refused"]-before["refused"], want, ab.connected.Load(), sc.most)
			}
			if strings.Contains(p.logs.String(), "too many open files") {
				t.Errorf("the server ran out of descriptors:\n%s", tail(p.logs.String()))
			}
			if len(lat) == 0 {
				return
			}
			slices.Sort(lat) // p50 and p99 by nearest rank
			figure(t, "ulimit -n 1024, SQLite, %d address(es) x %d keep-alive connections pinging /healthz every %v: "+
				"%d connected, %d answered at least once (%d pings 200, %d 429), %d held at the end (bound %d); "+
				"server closed %d idle, refused %d; other client %d/%d answered 2xx, p50 %v, p99 %v, slowest %v; load average %s",
				sc.addresses, floodConns/sc.addresses, floodPingEvery, ab.connected.Load(), ab.answered.Load(),
				ab.ok.Load(), ab.limited.Load(), held, sc.most,
				after["closed_idle"]-before["closed_idle"], after["refused"]-before["refused"],
				len(lat), floodRequests, lat[(len(lat)+1)/2-1].Round(time.Microsecond),
				lat[(len(lat)*99+99)/100-1].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), load)
		})
	}
}

// abuser opens keep-alive connections and pings /healthz on each until
// told to stop, counting what it gets.
type abuser struct {
	addr      string
	dialled   sync.WaitGroup // one per connection, done once its dial has ended
	connected atomic.Int64   // dials that connected
	answered  atomic.Int64   // connections answered at least once
	ok        atomic.Int64   // pings answered 200
	limited   atomic.Int64   // pings answered 429
	held      atomic.Int64   // connections still answering when told to stop
}

// flood opens floodConns connections spread over addresses local
// addresses (127.0.0.2 onwards), at most floodDialers being dialled at
// once, and pings on each until ctx is done.
func (a *abuser) flood(ctx context.Context, addresses int) {
	a.dialled.Add(floodConns)
	sem := make(chan struct{}, floodDialers)
	var wg sync.WaitGroup
	for i := range floodConns {
		sem <- struct{}{}
		wg.Go(func() { a.conn(ctx, byte(2+i%addresses), sem) })
	}
	wg.Wait()
}

// waitDialled waits until every dial of the flood has ended.
func (a *abuser) waitDialled() { a.dialled.Wait() }

// conn dials from 127.0.0.from, frees its place in sem, and pings until
// ctx is done or the server closes the connection; at the end one more
// ping says whether the connection is still held.
func (a *abuser) conn(ctx context.Context, from byte, sem chan struct{}) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, from)}, Timeout: floodTimeout}
	conn, err := d.Dial("tcp", a.addr)
	<-sem
	a.dialled.Done()
	if err != nil {
		return
	}
	defer conn.Close()
	a.connected.Add(1)
	rd := bufio.NewReader(conn)
	for i := 0; ; i++ {
		done := ctx.Err() != nil
		conn.SetDeadline(time.Now().Add(floodTimeout))
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n"); err != nil {
			return
		}
		res, err := http.ReadResponse(rd, nil)
		if err != nil {
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		switch res.StatusCode {
		case http.StatusOK:
			a.ok.Add(1)
		case http.StatusTooManyRequests:
			a.limited.Add(1)
		}
		if i == 0 {
			a.answered.Add(1)
		}
		if done {
			a.held.Add(1)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(floodPingEvery):
		}
	}
}

// otherClient sends floodRequests API requests from 127.0.0.1, each on a
// new connection and paced over the flood: a new player, then the
// variants and the player's games in turn. It returns the latencies of
// the 2xx answers and a line for each failure; it stops after
// floodMaxFailing failures.
func otherClient(t *testing.T, base string) (lat []time.Duration, failures string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
	client := &http.Client{Timeout: floodTimeout, Transport: &http.Transport{DisableKeepAlives: true, DialContext: d.DialContext}}
	var token string
	failed := 0
	for i := 0; i < floodRequests && failed < floodMaxFailing; i++ {
		time.Sleep(30 * time.Millisecond)
		method, path, tok, body := "GET", "/v1/variants", "", any(nil)
		var out any
		var pl struct{ Token string }
		switch {
		case i == 0:
			method, path, body, out = "POST", "/v1/players", map[string]string{"name": "other"}, &pl
		case i%2 == 0:
			path, tok = "/v1/games", token
		}
		begin := time.Now()
		s, err := jsonCall(client, method, base+path, tok, nil, body, out)
		took := time.Since(begin)
		if s/100 != 2 {
			failed++
			failures += fmt.Sprintf("  %s %s after %v: %d %v\n", method, path, took.Round(time.Millisecond), s, err)
			continue
		}
		if i == 0 {
			token = pl.Token
		}
		lat = append(lat, took)
	}
	return lat, failures
}

// connMetricRE matches the connection bound's counters on /metrics.
var connMetricRE = regexp.MustCompile(`(?m)^solitaire_http_connections_(open|closed_idle_total|refused_total) (\S+)$`)

// serverConnMetrics reads the connection bound's counts from /metrics (from
// 127.0.0.1, on a connection of its own): open, closed_idle, refused.
func serverConnMetrics(t *testing.T, base string) map[string]int {
	t.Helper()
	client := &http.Client{Timeout: floodTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, match := range connMetricRE.FindAllStringSubmatch(string(b), -1) {
		f, err := strconv.ParseFloat(match[2], 64)
		if err != nil {
			t.Fatalf("/metrics: %s", match[0])
		}
		m[strings.TrimSuffix(match[1], "_total")] = int(f)
	}
	if len(m) != 3 {
		t.Fatalf("/metrics has %d of the 3 connection metrics", len(m))
	}
	return m
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes
// (/proc/loadavg), for the figures; "unknown" elsewhere.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
