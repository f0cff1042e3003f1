package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// hardLayout is a three-deck deal (tripleharp, seed 7) that the search
// neither wins nor exhausts within a few seconds: a search of it runs its
// whole time budget.
func hardLayout(t testing.TB) *api.Layout {
	deal := domain.Deal(rulesOf(t, "tripleharp"), 7)
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

// The flood of TestSolverFairShare: floodRequests requests at once, each
// a search of hardLayout with the server's whole budget, floodBudget.
const (
	floodRequests = 6
	floodBudget   = 1500 * time.Millisecond
)

// TestSolverFairShare: one player floods POST /v1/solve with
// floodRequests concurrent searches of the server's maximum budget, each
// sent again as soon as it is answered, while another player asks for
// hints (each on a new game, so that each searches) and solves, one after
// the other. The pool has one worker and a queue of 4 (the default on a
// two-core machine). Every request of the second player is answered 200;
// the flooder gets its share (searches answered 200) and refusals beyond
// it (429 too_many_searches with Retry-After: 1), and nothing else.
func TestSolverFairShare(t *testing.T) {
	t.Parallel()
	forEachStore(t, solverFairShare, func(c *api.Config) {
		c.Solver = api.NewSolverPool(1, 4, api.DefaultSolverShare())
		c.SolverMaxBudget = floodBudget
	})
}

func solverFairShare(t *testing.T, e *env) {
	_, flooder := e.newPlayer("Flood")
	flood := hardSolve(t, flooder, floodBudget)
	var (
		stop     = make(chan struct{})
		stopOnce sync.Once
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[string]int{} // the flooder's answers: status, problem code, Retry-After
	)
	halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	defer halt()
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
				r := e.do(flood)
				key := strconv.Itoa(r.status)
				if r.status != http.StatusOK {
					key += " " + r.problem(t).Code + " Retry-After " + r.header.Get("Retry-After")
					time.Sleep(10 * time.Millisecond)
				}
				mu.Lock()
				outcomes[key]++
				mu.Unlock()
			}
		}()
	}
	// The flooder's share in use: one search running, one waiting.
	e.waitMetric(map[string]string{"solitaire_solver_running": "1", "solitaire_solver_waiting": "1"})

	const rounds = 3
	failed := 0
	for i := range rounds {
		g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: runs()})
		h := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
		s := e.do(req{method: "POST", path: "/v1/solve", body: api.SolveRequest{Variant: "relaxed", Layout: runs()}})
		for what, r := range map[string]resp{"hint": h, "solve": s} {
			if r.status != http.StatusOK {
				failed++
				t.Errorf("round %d: the other player's %s: %d %s", i, what, r.status, truncate(r.body))
			}
		}
	}
	halt()
	t.Logf("the other player: %d of %d requests failed; the flooder's answers: %v", failed, 2*rounds, outcomes)
	refused := outcomes["429 "+api.CodeTooManySearches+" Retry-After 1"]
	switch {
	case outcomes["200"] == 0:
		t.Errorf("the flooder got no search answered: %v", outcomes)
	case refused == 0:
		t.Errorf("the flooder was never refused beyond its share: %v", outcomes)
	case outcomes["200"]+refused != total(outcomes):
		t.Errorf("the flooder got answers other than 200 and 429 too_many_searches: %v", outcomes)
	}
	if got := e.metricValue(`solitaire_solver_refused_total{reason="share",route="/v1/solve"}`); got != strconv.Itoa(refused) {
		t.Errorf("refusals for the share counted %q, want %d", got, refused)
	}
	if got := e.metricValue(`solitaire_solver_busy_total{route="/v1/solve"}`); got != "" {
		t.Errorf("busy refusals counted: %q", got)
	}
}

// total is the sum of m's counts.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestSolverQueueLeave: a waiting search whose client goes away gives its
// queue place back at once. With one worker busy and a queue of one, a
// third player is refused 503 solver_busy while a second player's search
// waits (behind a first player's search of 3 s); once the second player's request is cancelled, the queue is
// empty again and the third player's search waits its turn and is
// answered 200, as is the first.
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
		first = e.do(hardSolve(t, "", 3*time.Second))
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
