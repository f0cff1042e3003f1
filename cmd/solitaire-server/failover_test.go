package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// failoverClients is how many players play through TestFailover, and
// failoverPhase how many moves they acknowledge together between its
// steps.
const (
	failoverClients = 8
	failoverPhase   = 200
	failoverPause   = 10 * time.Millisecond
)

// failoverClient plays its own relaxed game with draws only (always
// legal), each with an Idempotency-Key of its own, and sends a request
// that gets no answer or a 503 again with the same key until it is
// answered. It keeps what the figures need: when each acknowledged move
// was sent and answered, and how 503s came.
type failoverClient struct {
	crashClient     // the game, and the moves acknowledged (retries and status500 unused)
	with503     int // 503 answers with Retry-After
	at503       []time.Time
	bare503     int // 503 answers without Retry-After
	other5xx    []string
	acks        []failoverAck
}

// failoverAck is one acknowledged move: when its (last) request was
// sent, when the answer came, and the game's version it gave.
type failoverAck struct {
	sent, answered time.Time
	version        int
}

// move sends one POST with key and returns the status, whether a 503
// carried Retry-After, and the decoded answer of a 200.
func (c *failoverClient) move(client *http.Client, base, key string) (int, bool, []json.RawMessage, int, error) {
	req, _ := http.NewRequest("POST", base+"/v1/games/"+c.game+"/moves", strings.NewReader(`{"type":"draw"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, false, nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, resp.Header.Get("Retry-After") != "", nil, 0, nil
	}
	var res struct {
		Game struct {
			Version int `json:"version"`
		} `json:"game"`
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return resp.StatusCode, false, nil, 0, fmt.Errorf("%s: %w", b, err)
	}
	return resp.StatusCode, false, res.Events, res.Game.Version, nil
}

// run plays until stop, finishing the move in hand; progress counts the
// acknowledged moves of every client.
func (c *failoverClient) run(client *http.Client, base string, stop *atomic.Bool, progress *atomic.Int64, deadline time.Time) {
	for i := 0; !stop.Load(); i++ {
		key := "move-" + strconv.Itoa(i)
		for {
			if time.Now().After(deadline) {
				c.other = append(c.other, "no answer before the deadline for "+key)
				return
			}
			sent := time.Now()
			s, retryAfter, events, version, err := c.move(client, base, key)
			switch {
			case err != nil:
				time.Sleep(20 * time.Millisecond)
				continue
			case s == http.StatusServiceUnavailable:
				c.at503 = append(c.at503, time.Now())
				if retryAfter {
					c.with503++
				} else {
					c.bare503++
				}
				// A client would wait Retry-After (2 s); this one comes
				// back sooner, so that the time to the first
				// acknowledged move after a fault is measured finely.
				time.Sleep(50 * time.Millisecond)
				continue
			case s >= 500:
				c.other5xx = append(c.other5xx, fmt.Sprintf("%s: %d", key, s))
				time.Sleep(50 * time.Millisecond)
				continue
			case s != http.StatusOK:
				c.other = append(c.other, fmt.Sprintf("%s: status %d", key, s))
				return
			}
			if version != c.version+len(events) {
				c.gaps++
			}
			c.acked++
			c.events += len(events)
			c.version = version
			c.acks = append(c.acks, failoverAck{sent: sent, answered: time.Now(), version: version})
			progress.Add(1)
			// A pause between moves leaves the two cores of a small CI
			// machine to the formation's processes as well.
			time.Sleep(failoverPause)
			break
		}
	}
}

// followStream reads the live stream of game from base until ctx ends,
// reconnecting with Last-Event-ID whenever it ends or fails (a stream
// ends when its database read fails), and records when each event
// version arrived.
func followStream(ctx context.Context, base, token, game string, arrived map[int]time.Time, mu *sync.Mutex) {
	last := 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/games/"+game+"/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if last > 0 {
			req.Header.Set("Last-Event-ID", strconv.Itoa(last))
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
						n, _ := strconv.Atoi(strings.TrimSpace(v))
						mu.Lock()
						arrived[n] = time.Now()
						mu.Unlock()
						last = max(last, n)
					}
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestFailover runs the built server on a pg_auto_failover formation (a
// monitor and two nodes, the standby synchronous: pgtest.NewAutoFailover)
// through the multi-host URL `pg_autoctl show uri` gives
// (target_session_attrs=read-write), under 8 players who send moves with
// an Idempotency-Key and send every unanswered move, or one answered 503,
// again with the same key. Mid-load the primary's node is killed (kill -9
// of its pg_autoctl and PostgreSQL: the monitor promotes the standby),
// then, once the old primary has rejoined as standby, a planned
// switchover (`pg_autoctl perform switchover`) moves the primary back.
// A second server process serves a live stream of one game throughout,
// so that its LISTEN connection must follow the primary too. Afterwards:
// no acknowledged move lost, none applied twice, no 5xx but 503, every
// 503 with Retry-After, every chain verifies, the stream delivered every
// acknowledged move, and the transparency log's sequencer took the games
// ended after the switchover. The figures: time from the kill to the
// first move acknowledged, the 503s meanwhile, the same for the
// switchover, and the stream's lag behind the moves' answers after the
// failover. It fails where pg_autoctl is not installed (.ci/run
// installs it).
func TestFailover(t *testing.T) {
	testStart := time.Now()
	if !pgtest.HaveAutoFailover() {
		// Fails, as the pooler and browser tests do without their tools:
		// a skip would let a run without the service pass unseen.
		t.Fatal("pg_autoctl and the pgautofailover extension are not installed " +
			"(Debian: apt-get install postgresql-15-auto-failover; .ci/run installs it)")
	}
	// The server builds while the formation starts (each takes seconds).
	type built struct {
		bin string
		err error
	}
	building := make(chan built, 1)
	dir := t.TempDir()
	go func() {
		bin, err := buildInto(dir)
		building <- built{bin, err}
	}()
	f := pgtest.NewAutoFailover(t)
	b := <-building
	if b.err != nil {
		t.Fatal(b.err)
	}
	bin := b.bin
	env := []string{"SOLITAIRE_ADDR=127.0.0.1:0", "DATABASE_URL=" + f.URL, "SOLITAIRE_RATE_LIMIT=0",
		"SOLITAIRE_PLAYER_CREATE_LIMIT=0"}
	p := startServerProcess(t, bin, env...)
	watcher := startServerProcess(t, bin, env...) // serves the stream: hears of p's appends by LISTEN
	base := p.base
	client := &http.Client{Timeout: 10 * time.Second}

	clients := make([]*failoverClient, failoverClients)
	for i := range clients {
		c := &failoverClient{}
		c.token, c.game, c.version = relaxedGame(t, client, base, "f"+strconv.Itoa(i))
		clients[i] = c
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	var streamMu sync.Mutex
	arrived := map[int]time.Time{}
	var streamDone sync.WaitGroup
	streamDone.Go(func() { followStream(streamCtx, watcher.base, clients[0].token, clients[0].game, arrived, &streamMu) })

	var stop atomic.Bool
	var progress atomic.Int64
	deadline := time.Now().Add(4 * time.Minute) // far beyond a run's minute: CI runs every package at once
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.run(client, base, &stop, &progress, deadline) })
	}
	defer func() { stop.Store(true); wg.Wait() }()
	waitAcked := func(n int64, what string) {
		t.Helper()
		for progress.Load() < n {
			if time.Now().After(deadline) {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("%s: %d moves acknowledged, want %d\nserver:\n%s\nformation:\n%s", what, progress.Load(), n,
					tail(p.logs.String()), f.Logs())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// 1. Load, then the primary's node dies.
	began := time.Now()
	waitAcked(failoverPhase, "before the kill")
	primary, err := f.Primary(ctx)
	if err != nil || primary == "" {
		t.Fatalf("no primary: %q %v", primary, err)
	}
	killed := time.Now()
	f.Kill(primary)
	killDone := time.Now()
	if err := f.WaitFor(ctx, func(ns []pgtest.NodeState) bool {
		for _, n := range ns {
			if n.Name != primary && n.Reported == "wait_primary" && n.Goal == n.Reported {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no promotion: %v\n%s", err, f.Logs())
	}
	promoted := time.Since(killed)
	atKill := progress.Load()
	waitAcked(atKill+failoverPhase, "after the failover")

	// 2. The old primary rejoins as standby; then a switchover under load.
	restarted := time.Now()
	if err := f.Start(primary); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitSettled(ctx); err != nil {
		t.Fatalf("the old primary did not rejoin: %v\n%s", err, f.Logs())
	}
	rejoined := time.Since(restarted)
	switched := time.Now()
	if err := f.Switchover(ctx); err != nil {
		t.Fatalf("switchover: %v\n%s", err, f.Logs())
	}
	switchEnd := time.Now()
	switchTook := switchEnd.Sub(switched)
	t.Logf("the serving server's log: %d notification sends failed, %d LISTEN reconnects; the stream's server's: %d LISTEN reconnects",
		strings.Count(p.logs.String(), "notifications not sent"), strings.Count(p.logs.String(), "LISTEN connection lost"),
		strings.Count(watcher.logs.String(), "LISTEN connection lost"))
	t.Logf("formation up in %v, servers started; kill at %v, promoted %v after the kill; switchover from %v to %v",
		began.Sub(testStart).Round(time.Second), killed.Sub(began).Round(time.Second), promoted.Round(100*time.Millisecond),
		switched.Sub(began).Round(time.Second), switchEnd.Sub(began).Round(time.Second))
	waitAcked(progress.Load()+failoverPhase, "after the switchover")
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(began)

	// The first acknowledged move sent after each fault, and the 503s
	// from the fault to it.
	firstAfter := func(from time.Time) (time.Time, bool) {
		var first time.Time
		for _, c := range clients {
			for _, a := range c.acks {
				if a.sent.After(from) && (first.IsZero() || a.answered.Before(first)) {
					first = a.answered
				}
			}
		}
		return first, !first.IsZero()
	}
	firstKill, ok := firstAfter(killDone)
	if !ok {
		t.Fatal("no move acknowledged after the kill")
	}
	// The switchover: the longest time without any acknowledged move
	// while it ran (the primary drains, the standby is promoted).
	var answers []time.Time
	for _, c := range clients {
		for _, a := range c.acks {
			answers = append(answers, a.answered)
		}
	}
	slices.SortFunc(answers, time.Time.Compare)
	var pause time.Duration
	var pauseFrom, pauseTo time.Time
	for i := 1; i < len(answers); i++ {
		if answers[i].After(switched) && answers[i-1].Before(switchEnd) {
			if gap := answers[i].Sub(answers[i-1]); gap > pause {
				pause, pauseFrom, pauseTo = gap, answers[i-1], answers[i]
			}
		}
	}

	between := func(from, to time.Time) (n int) {
		for _, c := range clients {
			for _, at := range c.at503 {
				if !at.Before(from) && !at.After(to) {
					n++
				}
			}
		}
		return n
	}
	killed503, switched503 := between(killed, firstKill), between(pauseFrom, pauseTo)

	// 3. The logs against the answers, as in TestCrashRetries.
	var total, events, logged, duplicates, lost, gaps, with503, bare503, other5xx int
	for i, c := range clients {
		if len(c.other) > 0 {
			t.Errorf("client %d: %v", i, c.other)
		}
		if len(c.other5xx) > 0 {
			t.Errorf("client %d: 5xx other than 503: %v", i, c.other5xx)
		}
		inLog, twice, missing := logAgainstAnswers(t, client, base, c.token, c.game, c.events, c.version)
		duplicates, lost = duplicates+twice, lost+missing
		total, events, logged, gaps = total+c.acked, events+c.events, logged+inLog, gaps+c.gaps
		with503, bare503, other5xx = with503+c.with503, bare503+c.bare503, other5xx+len(c.other5xx)
	}
	if duplicates != 0 || lost != 0 || gaps != 0 {
		t.Errorf("moves applied twice %d, lost %d, answers out of sequence %d", duplicates, lost, gaps)
	}
	if bare503 != 0 {
		t.Errorf("%d answers 503 without Retry-After", bare503)
	}

	// 4. The stream: every acknowledged move of its game delivered, and
	// how long after its answer, for the moves sent after the kill.
	streamDeadline := time.Now().Add(10 * time.Second)
	var lags, switchLags []time.Duration
	for {
		streamMu.Lock()
		missing := 0
		lags, switchLags = lags[:0], switchLags[:0]
		for _, a := range clients[0].acks {
			got, ok := arrived[a.version]
			switch {
			case !ok:
				missing++
			case a.sent.After(switched):
				switchLags = append(switchLags, max(0, got.Sub(a.answered)))
			case a.sent.After(killDone):
				lags = append(lags, max(0, got.Sub(a.answered)))
			}
		}
		streamMu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(streamDeadline) {
			t.Errorf("the stream never delivered %d of the %d acknowledged moves of its game\nwatcher:\n%s",
				missing, len(clients[0].acks), tail(watcher.logs.String()))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopStream()
	streamDone.Wait()
	slices.Sort(lags)
	slices.Sort(switchLags)
	if len(lags) == 0 || len(switchLags) == 0 {
		t.Fatalf("the stream saw %d moves after the kill, %d after the switchover began", len(lags), len(switchLags))
	}

	// 5. The games end; the sequencer, on the primary of the switchover,
	// logs them.
	for _, c := range clients {
		if s, err := jsonCall(client, "POST", base+"/v1/games/"+c.game+"/moves", c.token, nil,
			map[string]string{"type": "resign"}, nil); err != nil || s != 200 {
			t.Fatalf("resign %s: %d %v", c.game, s, err)
		}
	}
	ended := time.Now()
	var logSize int
	for {
		req, _ := http.NewRequest("GET", base+"/v1/log/checkpoint", nil)
		if resp, err := client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if lines := bytes.SplitN(b, []byte("\n"), 3); resp.StatusCode == 200 && len(lines) == 3 {
				logSize, _ = strconv.Atoi(string(lines[1]))
			}
		}
		if logSize >= failoverClients {
			break
		}
		if time.Since(ended) > 15*time.Second {
			t.Fatalf("the transparency log holds %d games 15 s after %d ended\n%s", logSize, failoverClients, tail(p.logs.String()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	logged8 := time.Since(ended)

	figure(t, "pg_auto_failover (monitor and 2 nodes, synchronous standby), multi-host DATABASE_URL with "+
		"target_session_attrs=read-write, %d clients with Idempotency-Key: %d moves acknowledged (%d events) in %v, "+
		"%d events in the logs, applied twice %d, lost %d, 5xx other than 503 %d, 503 with Retry-After %d (without %d); "+
		"kill -9 of the primary node: promoted after %v, first move acknowledged %v after the kill, 503s until then %d; "+
		"the old primary rejoined as standby %v after its restart; "+
		"switchover took %v, longest time without an acknowledged move %v, 503s meanwhile %d; "+
		"live stream on a second server (LISTEN), lag behind the move's answer: after the kill median %v, worst %v (%d events), "+
		"from the switchover on median %v, worst %v (%d events); "+
		"transparency log took the %d games ended after the switchover in %v",
		failoverClients, total, events, elapsed.Round(time.Second), logged, duplicates, lost, other5xx, with503, bare503,
		promoted.Round(100*time.Millisecond), firstKill.Sub(killed).Round(100*time.Millisecond), killed503, rejoined.Round(100*time.Millisecond),
		switchTook.Round(100*time.Millisecond), pause.Round(100*time.Millisecond), switched503,
		lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond), len(lags),
		switchLags[len(switchLags)/2].Round(time.Millisecond), switchLags[len(switchLags)-1].Round(time.Millisecond), len(switchLags),
		failoverClients, logged8.Round(100*time.Millisecond))
}
