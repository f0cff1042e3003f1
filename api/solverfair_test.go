package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// hardLayout is a three-deck deal (tripleharp, seed 723: the one of seeds
// 1-1,000 undecided after 10 s, 25.9 M positions; BENCHMARKS.md "Harp and
// Tripleharp") that the search neither wins nor exhausts: a search of it
// runs its whole budget.
func hardLayout(t testing.TB) *api.Layout {
	deal := domain.Deal(rulesOf(t, "tripleharp"), 723)
	l := &api.Layout{Stock: cardCodes(deal.Stock)}
	for _, p := range deal.Tableau {
		l.Tableau = append(l.Tableau, api.LayoutPile{FaceDown: cardCodes(p.Down), FaceUp: cardCodes(p.Up)})
	}
	return l
}

// hardSolve is a POST /v1/solve of hardLayout by token that runs for
// budget.
func hardSolve(t testing.TB, token string, budget time.Duration) req {
	return req{method: "POST", path: "/v1/solve", token: token,
		body: api.SolveRequest{Variant: "tripleharp", Layout: hardLayout(t), BudgetMS: num(int(budget.Milliseconds()))}}
}

// waitMetric waits until every sample of want has its value, and fails
// after 10 s.
func (e *env) waitMetric(want map[string]string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for name, v := range want {
		for got := e.metricValue(name); got != v; got = e.metricValue(name) {
			if time.Now().After(deadline) {
				e.t.Fatalf("%s = %q, want %q", name, got, v)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// The floods of TestSolverFairShare and BenchmarkHintUnderFlood:
// floodRequests requests at once (startFlood), each a search of hardLayout
// with the server's whole budget; floodBudget is the test server's.
const (
	floodRequests = 6
	floodBudget   = 1500 * time.Millisecond
)

// TestSolverFairShare: a flood of POST /v1/solve, floodRequests
// concurrent searches of the server's maximum budget per flooding player,
// each sent again as soon as it is answered, while another client asks for
// hints (each on a new game, so that each searches) and solves, one after
// the other. The pool has one worker and a queue of 4 (the default on a
// two-core machine). The flood comes from one player on the other client's
// address ("player"), or from five players on an address of their own
// (127.0.0.2; the other client sends from 127.0.0.3: "address"), who
// together hold no more than the address's share. Either way the flood
// waits with at most its share (one search per player, two per address),
// so the queue keeps room for the other client, whose every request is
// answered 200; the flood gets its share (searches answered 200) and
// refusals beyond it (429 too_many_searches with Retry-After: 1), and
// nothing else.
func TestSolverFairShare(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		name          string
		flooders      int
		from, askFrom byte
		waiting       int // the flood's share of the queue
	}{
		{"player", 1, 0, 0, api.DefaultSolverQueuePerClient},
		{"address", 5, 2, 3, api.DefaultSolverQueuePerAddress},
	} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			forEachStore(t, func(t *testing.T, e *env) {
				solverFairShare(t, e, f.flooders, f.from, f.askFrom, f.waiting)
			}, func(c *api.Config) {
				c.Solver = api.NewSolverPool(1, 4, api.DefaultSolverShare())
				c.SolverMaxBudget = floodBudget
			})
		})
	}
}

func solverFairShare(t *testing.T, e *env, flooders int, from, askFrom byte, waiting int) {
	var (
		outcomes floodOutcomes
		halts    []func()
	)
	for i := range flooders {
		_, token := e.newPlayer(fmt.Sprintf("Flood%d", i))
		flood := hardSolve(t, token, floodBudget)
		flood.from = from
		halts = append(halts, startFlood(outcomes.sender(t, e, flood)))
	}
	halt := func() {
		for _, h := range halts {
			h()
		}
	}
	defer halt()
	// The flood's share in use: one search running, and its share
	// waiting, never more, over at least 300 ms of the flood.
	e.waitMetric(map[string]string{"solitaire_solver_running": "1"})
	most := 0
	for start := time.Now(); most < waiting || time.Since(start) < 300*time.Millisecond; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the flood never had %d searches waiting (most %d)", waiting, most)
		}
		n, _ := strconv.Atoi(e.metricValue("solitaire_solver_waiting"))
		most = max(most, n)
	}
	if most != waiting {
		t.Errorf("the flood had up to %d searches waiting, want its share of %d", most, waiting)
	}

	askDuringFlood(t, e, "", askFrom)
	halt()
	refused := outcomes.check(t)
	if got := e.metricValue(`solitaire_solver_refused_total{reason="share",route="/v1/solve"}`); got != strconv.Itoa(refused) {
		t.Errorf("refusals for the share counted %q, want %d", got, refused)
	}
	if got := e.metricValue(`solitaire_solver_busy_total{route="/v1/solve"}`); got != "" {
		t.Errorf("busy refusals counted: %q", got)
	}
}

// floodOutcomes counts a flood's answers by status, problem code and
// Retry-After.
type floodOutcomes struct {
	mu sync.Mutex
	n  map[string]int
}

// sender is a startFlood send function that sends q and counts its answer.
func (o *floodOutcomes) sender(t *testing.T, e *env, q req) func() bool {
	return func() bool {
		r := e.do(q)
		key := strconv.Itoa(r.status)
		if r.status != http.StatusOK {
			key += " " + r.problem(t).Code + " Retry-After " + r.header.Get("Retry-After")
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.n == nil {
			o.n = map[string]int{}
		}
		o.n[key]++
		return r.status == http.StatusOK
	}
}

// check fails unless the flood got searches answered, refusals beyond its
// share (429 too_many_searches with Retry-After: 1), and nothing else; it
// returns the refusals.
func (o *floodOutcomes) check(t *testing.T) int {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	t.Logf("the flood's answers: %v", o.n)
	refused := o.n["429 "+api.CodeTooManySearches+" Retry-After 1"]
	switch {
	case o.n["200"] == 0:
		t.Errorf("the flood got no search answered: %v", o.n)
	case refused == 0:
		t.Errorf("the flood was never refused beyond its share: %v", o.n)
	case o.n["200"]+refused != total(o.n):
		t.Errorf("the flood got answers other than 200 and 429 too_many_searches: %v", o.n)
	}
	return refused
}

// askDuringFlood asks, as token ("" the env's player) from 127.0.0.from (0
// the env's client), for three hints (each on a new game, so that each
// searches) and three solves, one after the other, and fails unless each
// is answered 200.
func askDuringFlood(t *testing.T, e *env, token string, from byte) {
	t.Helper()
	for i := range 3 {
		g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: runs()})
		h := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/hints", token: token, body: map[string]any{}, from: from})
		s := e.do(req{method: "POST", path: "/v1/solve", token: token, body: api.SolveRequest{Variant: "relaxed", Layout: runs()}, from: from})
		for what, r := range map[string]resp{"hint": h, "solve": s} {
			if r.status != http.StatusOK {
				t.Errorf("round %d: the other client's %s: %d %s", i, what, r.status, truncate(r.body))
			}
		}
	}
}

// total is the sum of m's counts.
func total[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestSolverQueueLeave: a waiting search whose client goes away gives its
// queue place back at once. With one worker busy and a queue of one, a
// third player is refused 503 solver_busy while a second player's search
// waits (behind a first player's search of 8 s, long enough for the steps
// that need it running on a loaded machine); once the second player's
// request is cancelled, the queue is empty again and the third player's
// search waits its turn and is answered 200, as is the first.
func TestSolverQueueLeave(t *testing.T) {
	t.Parallel()
	forEachStore(t, solverQueueLeave, func(c *api.Config) { c.Solver = api.NewSolverPool(1, 1, api.DefaultSolverShare()) })
}

func solverQueueLeave(t *testing.T, e *env) {
	_, bob := e.newPlayer("Bob")
	_, carol := e.newPlayer("Carol")
	var first resp
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		first = e.do(hardSolve(t, "", 8*time.Second))
	}()
	e.waitMetric(map[string]string{"solitaire_solver_running": "1"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := make(chan error, 1)
	go func() {
		j, _ := json.Marshal(hardSolve(t, bob, time.Second).body)
		hr, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/solve", bytes.NewReader(j))
		if err != nil {
			left <- err
			return
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Authorization", "Bearer "+bob)
		res, err := e.client.Do(hr)
		if err == nil {
			res.Body.Close()
			err = errors.New("answered " + res.Status)
		}
		left <- err
	}()
	e.waitMetric(map[string]string{"solitaire_solver_waiting": "1"})
	easy := req{method: "POST", path: "/v1/solve", token: carol, body: api.SolveRequest{Variant: "relaxed", Layout: runs()}}
	if r := e.do(easy); r.status != http.StatusServiceUnavailable || r.problem(t).Code != api.CodeSolverBusy {
		t.Errorf("with the queue full: %d %s", r.status, truncate(r.body))
	}
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled request: %v", err)
	}
	e.waitMetric(map[string]string{"solitaire_solver_waiting": "0"})
	e.must(http.StatusOK, easy)
	<-firstDone
	if first.status != http.StatusOK {
		t.Errorf("the first search: %d %s", first.status, truncate(first.body))
	}
	// Two searches had a worker (the first and the third player's): the
	// second player's left the queue without one.
	if got := e.metricValue(`solitaire_solver_wait_seconds_count{route="/v1/solve"}`); got != "2" {
		t.Errorf("searches given a worker: %q, want 2", got)
	}
}

// BenchmarkHintUnderFlood measures one player's hints while another floods
// the solver, side by side with no flood: for a pool of 1 worker (the
// default on two cores) and of 2, each with DefaultSolverQueue and the
// default share, it times b.N hints as BenchmarkHintHTTP does, once with
// nothing else asked of the server (quiet) and once while a second player
// keeps floodRequests searches of hardLayout with the server's maximum
// budget (DefaultSolverMaxBudget) in flight, each sent again as soon as it
// is answered (10 ms after a refusal). It reports the hints' p50-ms and
// p99-ms (nearest rank), and for the flood the flooder's searches answered
// (flood-200) and refused (flood-429) while the hints were timed. A hint
// refused (503 or 429) fails it.
func BenchmarkHintUnderFlood(b *testing.B) {
	for _, workers := range []int{1, 2} {
		for _, flood := range []bool{false, true} {
			name := fmt.Sprintf("workers=%d/quiet", workers)
			if flood {
				name = fmt.Sprintf("workers=%d/flood", workers)
			}
			b.Run(name, func(b *testing.B) {
				e := newBenchEnv(b, func(c *api.Config) {
					c.Solver = api.NewSolverPool(workers, api.DefaultSolverQueue, api.DefaultSolverShare())
				})
				starts := e.hintStarts()
				stop := func() map[int]int { return nil }
				if flood {
					stop = e.flood()
				}
				b.ResetTimer()
				times := e.timeHints(starts)
				answers := stop()
				b.ReportMetric(float64(percentile(times, 50).Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(percentile(times, 99).Microseconds())/1000, "p99-ms")
				if flood {
					b.ReportMetric(float64(answers[http.StatusOK]), "flood-200")
					b.ReportMetric(float64(answers[http.StatusTooManyRequests]), "flood-429")
					if n := answers[http.StatusOK] + answers[http.StatusTooManyRequests]; n != total(answers) {
						b.Errorf("the flooder got answers other than 200 and 429: %v", answers)
					}
				}
			})
		}
	}
}

// flood starts a new player's flood of BenchmarkHintUnderFlood and waits
// until its share is in use (one search waiting). stop ends the flood,
// waits for its requests in flight, and counts the answers by status from
// the moment flood returned (0 for a request that failed).
func (e *benchEnv) flood() (stop func() map[int]int) {
	var p api.PlayerCreated
	_, out, err := e.send("", "/v1/players", api.NewPlayer{Name: "Flood"})
	if err != nil {
		e.b.Fatal(err)
	}
	e.decode(out, &p)
	search := api.SolveRequest{Variant: "tripleharp", Layout: hardLayout(e.b),
		BudgetMS: num(int(api.DefaultSolverMaxBudget.Milliseconds()))}
	var (
		mu       sync.Mutex
		answers  = map[int]int{}
		counting bool
	)
	halt := startFlood(func() bool {
		status, _, _ := e.send(p.Token, "/v1/solve", search)
		mu.Lock()
		if counting {
			answers[status]++
		}
		mu.Unlock()
		return status == http.StatusOK
	})
	for deadline := time.Now().Add(10 * time.Second); metricAt(e.b, e.url, "solitaire_solver_waiting") != "1"; {
		if time.Now().After(deadline) {
			e.b.Fatal("the flood never filled its share")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	counting = true
	mu.Unlock()
	return func() map[int]int {
		mu.Lock()
		counting = false
		mu.Unlock()
		halt()
		return answers
	}
}

// startFlood calls send from floodRequests goroutines at once, each again
// as soon as send returns (10 ms later when it returns false, a refusal),
// until halt is called; halt waits for the calls in flight and may be
// called more than once.
func startFlood(send func() bool) (halt func()) {
	var (
		stop = make(chan struct{})
		once sync.Once
		wg   sync.WaitGroup
	)
	for range floodRequests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !send() {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	return func() { once.Do(func() { close(stop) }); wg.Wait() }
}
