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
// its client (a player, WithSolverClient, or all the players of a client
// address together, WithSolverAddress) already has as many searches
// waiting as its share allows and holds at least one search, running or
// waiting. Running and Queued are the share (SolverShare) of Per, "player"
// or "address". The search was not started. The API answers 429
// too_many_searches with Retry-After (SolverRetryAfter): what the client
// waits for is its own searches, not the server.
type TooManySearchesError struct {
	Running, Queued int    // the share: searches running, and waiting, per Per
	Per             string // "player" or "address"
}

// Error says what the share is, for the client.
func (e *TooManySearchesError) Error() string {
	return "your searches already take your share of the solver (at most " + strconv.Itoa(e.Running) +
		" running and " + strconv.Itoa(e.Queued) + " waiting per " + e.Per + "); send this one again once one of " +
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
	// DefaultSolverRunningPerAddress and DefaultSolverQueuePerAddress are
	// the share of all the players of one client address together: two
	// of each, so that a few players behind one address (a household, a
	// school's NAT) still search side by side, while accounts made in
	// numbers on one address cannot take every worker and every queue
	// place from the other addresses.
	DefaultSolverRunningPerAddress = 2
	DefaultSolverQueuePerAddress   = 2
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
// more) per player; and, if AddressRunning is at least 1, AddressRunning
// running and AddressQueued (0 or more) waiting for all the players of one
// client address together (WithSolverAddress), since accounts are free and
// one address can make many. A client beyond a share gets a
// *TooManySearchesError at once. AddressRunning 0 sets no address share.
type SolverShare struct {
	Running, Queued               int
	AddressRunning, AddressQueued int
}

// DefaultSolverShare is DefaultSolverRunningPerClient running and
// DefaultSolverQueuePerClient waiting per player, and
// DefaultSolverRunningPerAddress and DefaultSolverQueuePerAddress per
// address.
func DefaultSolverShare() SolverShare {
	return SolverShare{Running: DefaultSolverRunningPerClient, Queued: DefaultSolverQueuePerClient,
		AddressRunning: DefaultSolverRunningPerAddress, AddressQueued: DefaultSolverQueuePerAddress}
}

// SolverPool runs solver searches (RULES R7) on a bounded number of
// workers with a short queue, so that searches, each of which may take a
// core for seconds, never starve the rest of the server, and shares them
// fairly between its clients: players (WithSolverClient) and the client
// addresses they send from (WithSolverAddress), each search counting
// against both:
//
//   - each player, and each address, has at most its SolverShare: a search
//     beyond either is refused at once (*TooManySearchesError), whatever
//     the rest of the pool is doing, so that a flood takes no more than
//     its share of the workers and of the queue, however many accounts
//     one address sends it from;
//   - the queue is served round-robin by address, then by player: when a
//     worker is free it goes to the first waiting search whose address
//     and player are both below their running shares, of the address
//     running fewest searches and served least recently, then of the
//     player likewise (clients not served since they were last idle in
//     order of arrival); so a search waits for at most one search of each
//     other address, however many players they hold;
//   - a search that finds a worker free and its player and address below
//     their running shares starts at once; one that must wait takes a
//     place in the queue if both have a queue place left and the queue is
//     not full, and is refused (ErrSolverBusy) if the queue is full;
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
	waiting  []*solverWaiter          // searches in the queue, in order of arrival
	clients  map[string]*solverClient // players and addresses running or waiting, by solverKey
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

// solverClient is one player's or address's searches in a SolverPool: how
// many run, how many wait, and its turn, the pool's turns at the last
// search it was given a worker (0: none since it was last idle).
type solverClient struct {
	running, waiting int
	turn             uint64
}

// solverKey names a search's clients in SolverPool.clients: its address
// (address, "" for none) and its player. The two kinds never collide.
type solverKey struct{ address, player string }

// solverWaiter is a search in the queue: ready is closed once granted is
// set, when it has a worker; arrival orders searches otherwise equal.
type solverWaiter struct {
	key     solverKey
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
// (a share.Running below 1 is 1, a share.Queued or share.AddressQueued
// below 0 is 0; DefaultSolverShare() is the API's). Its metrics are
// registered on each of metrics given; a registry that already has them
// (the same pool registered twice) is left as it is, any other
// registration error is ignored too (the pool works without them).
// api.New registers the pool on Config.Metrics itself.
func NewSolverPool(workers, queue int, share SolverShare, metrics ...prometheus.Registerer) *SolverPool {
	if workers < 1 {
		workers = DefaultSolverWorkers()
	}
	share.Running, share.Queued = max(share.Running, 1), max(share.Queued, 0)
	share.AddressRunning, share.AddressQueued = max(share.AddressRunning, 0), max(share.AddressQueued, 0)
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

// solverRouteKey, solverClientKey and solverAddressKey are the context
// keys of WithSolverRoute, WithSolverClient and WithSolverAddress.
type (
	solverRouteKey   struct{}
	solverClientKey  struct{}
	solverAddressKey struct{}
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

// WithSolverClient returns ctx naming client as the player the searches
// run with it are shared by (SolverShare): any string that tells players
// apart, such as a player id. Searches whose context names no client
// share the share of one client, "".
func WithSolverClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, solverClientKey{}, client)
}

// WithSolverAddress returns ctx naming address as the client address the
// searches run with it come from (the address share of SolverShare): any
// string that tells addresses apart, such as ClientKey of the peer's IP.
// Searches whose context names no address take no address share.
func WithSolverAddress(ctx context.Context, address string) context.Context {
	return context.WithValue(ctx, solverAddressKey{}, address)
}

// solverKeyOf is the player and address ctx names.
func solverKeyOf(ctx context.Context) solverKey {
	c, _ := ctx.Value(solverClientKey{}).(string)
	a, _ := ctx.Value(solverAddressKey{}).(string)
	return solverKey{address: a, player: c}
}

// Solve runs solver.Solve(ctx, st, b) on a worker (st is not changed) and
// returns its result. It starts at once if a worker is free and ctx's
// player (WithSolverClient) and address (WithSolverAddress) are below
// their running shares; otherwise it waits in the queue for its turn
// (SolverPool), or returns at once a *TooManySearchesError if the player
// or the address has no queue place left, or ErrSolverBusy if the queue is
// full. If ctx is done while it waits, or cuts the search short, it
// returns ctx.Err(). b is used as given: callers cap it (the API caps time
// at its maximum budget).
func (p *SolverPool) Solve(ctx context.Context, st *domain.State, b solver.Budget) (solver.Result, error) {
	route, key := solverRoute(ctx), solverKeyOf(ctx)
	if err := ctx.Err(); err != nil {
		return solver.Result{}, err
	}
	arrived := time.Now()
	w, err := p.admit(key)
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
			if !p.leave(w) {
				p.release(key) // given a worker as ctx ended
			}
			return solver.Result{}, ctx.Err()
		}
	}
	defer p.release(key)
	p.wait.WithLabelValues(route).Observe(time.Since(arrived).Seconds())
	res := solver.Solve(ctx, st, b)
	if err := ctx.Err(); err != nil && res.Verdict == solver.Unknown {
		return solver.Result{}, err // cut short by ctx, not by the budget
	}
	p.duration.WithLabelValues(route).Observe(res.Elapsed.Seconds())
	p.verdicts.WithLabelValues(string(res.Verdict), route).Inc()
	return res, nil
}

// shareOf is the running and queued share of the client named k (a key of
// solverKey.keys), and who it is per.
func (p *SolverPool) shareOf(k string) (running, queued int, per string) {
	if k[0] == 'a' { // "address:…"
		return p.share.AddressRunning, p.share.AddressQueued, "address"
	}
	return p.share.Running, p.share.Queued, "player"
}

// keys are the clients a search of k counts against and shares: with an
// address share its address (one for every search that names none) and
// its player, else its player alone. Every search of a pool has keys of
// one shape, so that dispatch compares addresses with addresses.
func (p *SolverPool) keys(k solverKey) []string {
	if p.share.AddressRunning < 1 {
		return []string{"player:" + k.player}
	}
	return []string{"address:" + k.address, "player:" + k.player}
}

// canRun reports whether a search of k may take a free worker: each of its
// clients is below its running share. p.mu is held.
func (p *SolverPool) canRun(k solverKey) bool {
	for _, name := range p.keys(k) {
		running, _, _ := p.shareOf(name)
		if c := p.clients[name]; c != nil && c.running >= running {
			return false
		}
	}
	return true
}

// admit gives a search of k a worker (nil waiter), a place in the queue
// (its waiter), or a refusal.
func (p *SolverPool) admit(k solverKey) (*solverWaiter, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// After every change dispatch leaves no worker free while a waiting
	// search could have it: with one free now, none of k's clients has a
	// search waiting that could run, so k starts without passing anyone.
	if p.running < p.workers && p.canRun(k) {
		p.start(k)
		return nil, nil
	}
	busy := false
	for _, name := range p.keys(k) {
		running, queued, per := p.shareOf(name)
		c := p.clients[name]
		if c == nil {
			c = &solverClient{}
		}
		if c.waiting >= queued {
			if c.running+c.waiting > 0 {
				return nil, &TooManySearchesError{Running: running, Queued: queued, Per: per}
			}
			busy = true // it may not wait, and holds nothing: the pool is busy for it
		}
	}
	if busy || len(p.waiting) >= p.queue {
		return nil, ErrSolverBusy
	}
	p.arrivals++
	w := &solverWaiter{key: k, ready: make(chan struct{}), arrival: p.arrivals}
	p.waiting = append(p.waiting, w)
	p.count(k, 0, 1)
	p.waitingG.Set(float64(len(p.waiting)))
	return w, nil
}

// count adds running and waiting to each client of k's, making and
// forgetting entries as they start and stop holding searches. p.mu is
// held.
func (p *SolverPool) count(k solverKey, running, waiting int) {
	for _, name := range p.keys(k) {
		c := p.clients[name]
		if c == nil {
			c = &solverClient{}
			p.clients[name] = c
		}
		c.running += running
		c.waiting += waiting
		if c.running == 0 && c.waiting == 0 {
			delete(p.clients, name)
		}
	}
}

// start gives a search of k a worker; p.mu is held.
func (p *SolverPool) start(k solverKey) {
	p.turns++
	p.count(k, 1, 0)
	for _, name := range p.keys(k) {
		p.clients[name].turn = p.turns
	}
	p.running++
	p.runningG.Set(float64(p.running))
}

// release gives back a worker of k's and passes the free workers on.
func (p *SolverPool) release(k solverKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(k, -1, 0)
	p.running--
	p.runningG.Set(float64(p.running))
	p.dispatch()
}

// leave takes w out of the queue, unless it was given a worker already
// (false: the caller must release it).
func (p *SolverPool) leave(w *solverWaiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted {
		return false
	}
	p.dequeue(w)
	return true
}

// dequeue takes w out of the queue; p.mu is held.
func (p *SolverPool) dequeue(w *solverWaiter) {
	p.waiting = slices.DeleteFunc(p.waiting, func(x *solverWaiter) bool { return x == w })
	p.count(w.key, 0, -1)
	p.waitingG.Set(float64(len(p.waiting)))
}

// dispatch gives each free worker to the waiting search whose turn it is:
// of those whose clients are all below their running shares, the one whose
// clients, address first, run fewest searches, then were served least
// recently, then that came first. p.mu is held.
func (p *SolverPool) dispatch() {
	for p.running < p.workers {
		var next *solverWaiter
		for _, w := range p.waiting {
			if p.canRun(w.key) && (next == nil || p.before(w, next)) {
				next = w
			}
		}
		if next == nil {
			return
		}
		p.dequeue(next)
		p.start(next.key)
		next.granted = true
		close(next.ready)
	}
}

// before reports whether w's turn comes before v's (dispatch): their
// clients compared in order, address before player, by searches running,
// then by turn; then by arrival. p.mu is held.
func (p *SolverPool) before(w, v *solverWaiter) bool {
	wk, vk := p.keys(w.key), p.keys(v.key)
	for i := range min(len(wk), len(vk)) {
		a, b := p.clients[wk[i]], p.clients[vk[i]]
		if a == b {
			continue
		}
		if a.running != b.running {
			return a.running < b.running
		}
		if a.turn != b.turn {
			return a.turn < b.turn
		}
	}
	return w.arrival < v.arrival
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
// (WithSolverRoute), its player (WithSolverClient; for a request without
// one, its client address stands in) and its client address as the rate
// limit groups addresses (WithSolverAddress, ClientKey), whose shares of
// the pool they take.
func solverContext(c *gin.Context) context.Context {
	address := ClientKey(c.ClientIP())
	client := "ip:" + address
	if p := playerOf(c); p != nil {
		client = p.ID
	}
	ctx := WithSolverAddress(WithSolverRoute(c.Request.Context(), c.FullPath()), address)
	return WithSolverClient(ctx, client)
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
