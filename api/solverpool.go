package api

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// ErrSolverBusy: every worker of the SolverPool is busy and its queue is
// full; the search was not started. The API answers 503 solver_busy with
// Retry-After (SolverRetryAfter).
var ErrSolverBusy = errors.New("every solver worker is busy and the queue is full")

// TooManySearchesError is the refusal of a search that can neither start
// (no worker free, or its client at its running share) nor wait, because
// its client (a player, or a client address: WithSolverClient) already
// has as many searches waiting as its share allows and holds at least one
// search, running or waiting. Running and Queued are the share
// (SolverShare). The search was not started. The API answers 429
// too_many_searches with Retry-After (SolverRetryAfter): what the client
// waits for is its own searches, not the server.
type TooManySearchesError struct {
	Running, Queued int // the share: searches running, and waiting, per client
}

// Error says what the share is, for the client.
func (e *TooManySearchesError) Error() string {
	return "your searches already take your share of the solver (at most " + strconv.Itoa(e.Running) +
		" running and " + strconv.Itoa(e.Queued) + " waiting per player); send this one again once one of " +
		"them is answered, or after Retry-After seconds"
}

// RetryAfter is when to try again (the Retry-After of the 429).
func (e *TooManySearchesError) RetryAfter() time.Duration { return SolverRetryAfter }

// Defaults of a SolverPool and of the searches the API runs on it.
const (
	// DefaultSolverQueue is how many searches may wait for a worker: a
	// short queue absorbs a burst without holding requests for long.
	DefaultSolverQueue = 4
	// DefaultSolverRunningPerClient is how many searches one client (a
	// player) may have on a worker at once: one, so that a client never
	// holds a second worker that another client could need. A search
	// cannot be paused, and lasts up to DefaultSolverMaxBudget.
	DefaultSolverRunningPerClient = 1
	// DefaultSolverQueuePerClient is how many searches one client may have
	// waiting for a worker: one, so that a client's next search is ready
	// when its turn comes, and a flood of searches takes one queue place.
	DefaultSolverQueuePerClient = 1
	// DefaultSolverMaxBudget is the most time one search may take (the cap
	// of POST /v1/solve's budget_ms, and the budget of hints and of each
	// search of an analysis).
	DefaultSolverMaxBudget = 10 * time.Second
	// SolverRetryAfter is the Retry-After of a 503 solver_busy and of a 429
	// too_many_searches answer.
	SolverRetryAfter = time.Second
)

// DefaultSolverWorkers is the default number of searches run at once:
// GOMAXPROCS-1, so one core stays free for the moves (which never touch the
// pool), and at least 1.
func DefaultSolverWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// SolverShare is what one client of a SolverPool may hold at once: Running
// searches on a worker (at least 1) and Queued more waiting for one (0 or
// more). A client beyond its share gets a *TooManySearchesError at once.
type SolverShare struct {
	Running, Queued int
}

// DefaultSolverShare is DefaultSolverRunningPerClient running and
// DefaultSolverQueuePerClient waiting.
func DefaultSolverShare() SolverShare {
	return SolverShare{Running: DefaultSolverRunningPerClient, Queued: DefaultSolverQueuePerClient}
}

// SolverPool runs solver searches (RULES R7) on a bounded number of
// workers with a short queue, so that searches, each of which may take a
// core for seconds, never starve the rest of the server, and shares them
// fairly between its clients (WithSolverClient: the API names the player,
// or the client address of a request without one):
//
//   - each client has at most its SolverShare: a search beyond it is
//     refused at once (*TooManySearchesError), whatever the rest of the
//     pool is doing, so that a client's flood takes no more than its share
//     of the workers and of the queue;
//   - the queue is served round-robin by client: when a worker is free it
//     goes to the first waiting search of a client below its running
//     share, the one running fewest searches and, of those, served least
//     recently (clients not served since they were last idle in order of
//     arrival); so, with one search running per client, a search waits
//     for at most one search of each other client, however many they
//     send;
//   - a search that finds a worker free and its client below its running
//     share starts at once; one that must wait takes a place in the queue
//     if its client has a queue place left and the queue is not full, and
//     is refused (ErrSolverBusy) if the queue is full;
//   - a waiting search whose context ends (the client left) leaves the
//     queue at once, giving back its place.
//
// A client never holds more than its running share, even of an idle pool:
// a worker lent to it would keep a newcomer waiting for up to a whole
// search. It is safe for concurrent use and is a prometheus.Collector of
// its metrics: solitaire_solver_duration_seconds (by route),
// solitaire_solver_wait_seconds (time from arrival to a worker, by route),
// solitaire_solver_verdicts_total (by verdict and route),
// solitaire_solver_busy_total (searches refused with ErrSolverBusy, by
// route), solitaire_solver_refused_total (searches refused, by reason:
// "busy" for ErrSolverBusy, "share" for *TooManySearchesError; and by
// route), and the gauges solitaire_solver_running and
// solitaire_solver_waiting. The route of a search is the one its context
// names (WithSolverRoute), "other" if none.
type SolverPool struct {
	workers, queue int
	share          SolverShare

	mu       sync.Mutex
	running  int                      // searches on a worker
	waiting  int                      // searches in the queue
	clients  map[string]*solverClient // clients running or waiting
	turns    uint64                   // searches given a worker so far
	arrivals uint64                   // searches queued so far

	duration *prometheus.HistogramVec
	wait     *prometheus.HistogramVec
	verdicts *prometheus.CounterVec
	busy     *prometheus.CounterVec
	refused  *prometheus.CounterVec
	runningG prometheus.Gauge // searches on a worker now
	waitingG prometheus.Gauge // searches queued for a worker now
}

// solverClient is one client's searches in a SolverPool: how many run,
// those that wait in order of arrival, and its turn, the pool's turns at
// the last search it was given a worker (0: none since it was last idle).
type solverClient struct {
	running int
	queue   []*solverWaiter
	turn    uint64
}

// solverWaiter is a search in the queue: ready is closed once granted is
// set, when it has a worker; arrival orders clients never served.
type solverWaiter struct {
	ready   chan struct{}
	granted bool
	arrival uint64
}

// The reasons of solitaire_solver_refused_total.
const (
	refusedBusy  = "busy"
	refusedShare = "share"
)

// NewSolverPool returns a pool that runs at most workers searches at once
// (DefaultSolverWorkers() if workers < 1), lets at most queue more wait
// for a worker (none if queue < 1), and gives each client at most share
// (a share.Running below 1 is 1, a share.Queued below 0 is 0;
// DefaultSolverShare() is the API's). Its metrics are registered on each
// of metrics given; a registry that already has them (the same pool
// registered twice) is left as it is, any other registration error is
// ignored too (the pool works without them). api.New registers the pool
// on Config.Metrics itself.
func NewSolverPool(workers, queue int, share SolverShare, metrics ...prometheus.Registerer) *SolverPool {
	if workers < 1 {
		workers = DefaultSolverWorkers()
	}
	share.Running, share.Queued = max(share.Running, 1), max(share.Queued, 0)
	p := &SolverPool{workers: workers, queue: max(queue, 0), share: share, clients: map[string]*solverClient{},
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "duration_seconds",
			Help:    "Time of one solver search (R7), waiting for a worker excluded, by route.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "wait_seconds",
			Help:    "Time a solver search waited for a worker (0 when one was free), by route.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "verdicts_total",
			Help: "Solver searches finished, by verdict (winnable, unwinnable, unknown) and route.",
		}, []string{"verdict", "route"}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "busy_total",
			Help: "Solver searches refused because every worker was busy and the queue full, by route.",
		}, []string{"route"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "refused_total",
			Help: "Solver searches refused, by reason (busy: every worker busy and the queue full; " +
				"share: the client's share in use) and route.",
		}, []string{"reason", "route"}),
		runningG: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "running",
			Help: "Solver searches running on a worker now.",
		}),
		waitingG: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "waiting",
			Help: "Solver searches waiting for a worker now.",
		}),
	}
	for _, reg := range metrics {
		if reg != nil {
			_ = reg.Register(p)
		}
	}
	return p
}

// collectors are the pool's metrics.
func (p *SolverPool) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.duration, p.wait, p.verdicts, p.busy, p.refused, p.runningG, p.waitingG}
}

// Describe is prometheus.Collector.
func (p *SolverPool) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range p.collectors() {
		c.Describe(ch)
	}
}

// Collect is prometheus.Collector.
func (p *SolverPool) Collect(ch chan<- prometheus.Metric) {
	for _, c := range p.collectors() {
		c.Collect(ch)
	}
}

// solverRouteKey and solverClientKey are the context keys of
// WithSolverRoute and WithSolverClient.
type (
	solverRouteKey  struct{}
	solverClientKey struct{}
)

// WithSolverRoute returns ctx naming route (a route pattern, or another
// short fixed word such as "winnable_deal") as the label of the searches
// run with it. Keep the set of names small: each is a metrics series.
func WithSolverRoute(ctx context.Context, route string) context.Context {
	return context.WithValue(ctx, solverRouteKey{}, route)
}

func solverRoute(ctx context.Context) string {
	if r, ok := ctx.Value(solverRouteKey{}).(string); ok && r != "" {
		return r
	}
	return "other"
}

// WithSolverClient returns ctx naming client as the one the searches run
// with it are shared by (SolverShare): any string that tells clients
// apart, such as a player id or a client address. Searches whose context
// names no client share the share of one client, "".
func WithSolverClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, solverClientKey{}, client)
}

func solverClientOf(ctx context.Context) string {
	c, _ := ctx.Value(solverClientKey{}).(string)
	return c
}

// Solve runs solver.Solve(ctx, st, b) on a worker (st is not changed) and
// returns its result. It starts at once if a worker is free and ctx's
// client (WithSolverClient) is below its running share; otherwise it
// waits in the queue for its turn (SolverPool), or returns at once a
// *TooManySearchesError if the client has no queue place left, or
// ErrSolverBusy if the queue is full. If ctx is done while it waits, or
// cuts the search short, it returns ctx.Err(). b is used as given:
// callers cap it (the API caps time at its maximum budget).
func (p *SolverPool) Solve(ctx context.Context, st *domain.State, b solver.Budget) (solver.Result, error) {
	route, client := solverRoute(ctx), solverClientOf(ctx)
	if err := ctx.Err(); err != nil {
		return solver.Result{}, err
	}
	arrived := time.Now()
	w, err := p.admit(client)
	if err != nil {
		reason := refusedShare
		if errors.Is(err, ErrSolverBusy) {
			reason = refusedBusy
			p.busy.WithLabelValues(route).Inc()
		}
		p.refused.WithLabelValues(reason, route).Inc()
		return solver.Result{}, err
	}
	if w != nil {
		select {
		case <-w.ready:
		case <-ctx.Done():
			if !p.leave(client, w) {
				p.release(client) // given a worker as ctx ended
			}
			return solver.Result{}, ctx.Err()
		}
	}
	defer p.release(client)
	p.wait.WithLabelValues(route).Observe(time.Since(arrived).Seconds())
	res := solver.Solve(ctx, st, b)
	if err := ctx.Err(); err != nil && res.Verdict == solver.Unknown {
		return solver.Result{}, err // cut short by ctx, not by the budget
	}
	p.duration.WithLabelValues(route).Observe(res.Elapsed.Seconds())
	p.verdicts.WithLabelValues(string(res.Verdict), route).Inc()
	return res, nil
}

// admit gives a search of client a worker (nil waiter), a place in the
// queue (its waiter), or a refusal.
func (p *SolverPool) admit(client string) (*solverWaiter, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[client]
	if c == nil {
		c = &solverClient{}
		p.clients[client] = c
	}
	// After every change dispatch leaves no worker free while a waiting
	// search could have it: with one free now, c has nothing waiting (it
	// could run), so it starts without passing anyone.
	if p.running < p.workers && c.running < p.share.Running {
		p.start(c)
		return nil, nil
	}
	queueFull := len(c.queue) >= p.share.Queued
	switch {
	case queueFull && c.running+len(c.queue) > 0:
		return nil, &TooManySearchesError{Running: p.share.Running, Queued: p.share.Queued}
	case queueFull || p.waiting >= p.queue:
		p.forget(client, c)
		return nil, ErrSolverBusy
	}
	p.arrivals++
	w := &solverWaiter{ready: make(chan struct{}), arrival: p.arrivals}
	c.queue = append(c.queue, w)
	p.waiting++
	p.waitingG.Set(float64(p.waiting))
	return w, nil
}

// start gives c a worker; p.mu is held.
func (p *SolverPool) start(c *solverClient) {
	p.turns++
	c.turn = p.turns
	c.running++
	p.running++
	p.runningG.Set(float64(p.running))
}

// release gives back a worker of client's and passes the free workers on.
func (p *SolverPool) release(client string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[client]
	c.running--
	p.running--
	p.runningG.Set(float64(p.running))
	p.forget(client, c)
	p.dispatch()
}

// leave takes w out of client's queue, unless it was given a worker
// already (false: the caller must release it).
func (p *SolverPool) leave(client string, w *solverWaiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted {
		return false
	}
	c := p.clients[client]
	c.queue = slices.DeleteFunc(c.queue, func(x *solverWaiter) bool { return x == w })
	p.waiting--
	p.waitingG.Set(float64(p.waiting))
	p.forget(client, c)
	return true
}

// forget drops c, client's entry, once it neither runs nor waits; p.mu is
// held.
func (p *SolverPool) forget(client string, c *solverClient) {
	if c.running == 0 && len(c.queue) == 0 {
		delete(p.clients, client)
	}
}

// dispatch gives each free worker to the first waiting search of the
// client whose turn it is: of the clients below their running share with
// a search waiting, the one running fewest, then served least recently,
// then whose first waiting search came first. p.mu is held.
func (p *SolverPool) dispatch() {
	for p.running < p.workers {
		var next *solverClient
		for _, c := range p.clients {
			if len(c.queue) > 0 && c.running < p.share.Running && (next == nil || c.before(next)) {
				next = c
			}
		}
		if next == nil {
			return
		}
		w := next.queue[0]
		next.queue = next.queue[1:]
		p.waiting--
		p.waitingG.Set(float64(p.waiting))
		p.start(next)
		w.granted = true
		close(w.ready)
	}
}

// before reports whether c's turn comes before d's (dispatch).
func (c *solverClient) before(d *solverClient) bool {
	if c.running != d.running {
		return c.running < d.running
	}
	if c.turn != d.turn {
		return c.turn < d.turn
	}
	return c.queue[0].arrival < d.queue[0].arrival
}

// solverBusyError is a search the pool did not run to its end: refused
// (ErrSolverBusy, or *TooManySearchesError beyond the client's share) or
// given up by its context while waiting or searching. Either way the
// client may try again: 503 solver_busy, or 429 too_many_searches, with
// Retry-After; never a 500.
type solverBusyError struct{ cause error }

func (e *solverBusyError) Error() string { return "solver: " + e.cause.Error() }

func (e *solverBusyError) Unwrap() error { return e.cause }

// RetryAfter is when to try again (server.fail sends it as Retry-After).
func (e *solverBusyError) RetryAfter() time.Duration { return SolverRetryAfter }

// solverContext is the context of the searches of request c: its route
// (WithSolverRoute), and its client (WithSolverClient), whose share of the
// pool they take: the caller's player, or for a request without one its
// client address as the rate limit groups addresses (clientKey).
func solverContext(c *gin.Context) context.Context {
	client := "ip:" + ClientKey(c.ClientIP())
	if p := playerOf(c); p != nil {
		client = "player:" + p.ID
	}
	return WithSolverClient(WithSolverRoute(c.Request.Context(), c.FullPath()), client)
}

// solve runs a search on the server's pool with ctx, a solverContext. Its
// errors are *solverBusyError.
func (s *server) solve(ctx context.Context, st *domain.State, b solver.Budget) (solver.Result, error) {
	res, err := s.solver.Solve(ctx, st, b)
	if err != nil {
		return solver.Result{}, &solverBusyError{cause: err}
	}
	return res, nil
}
