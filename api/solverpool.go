package api

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// ErrSolverBusy: every worker of the SolverPool is busy and its queue is
// full; the search was not started. The API answers 503 solver_busy with
// Retry-After (SolverRetryAfter).
var ErrSolverBusy = errors.New("every solver worker is busy and the queue is full")

// Defaults of a SolverPool and of the searches the API runs on it.
const (
	// DefaultSolverQueue is how many searches may wait for a worker: a
	// short queue absorbs a burst without holding requests for long.
	DefaultSolverQueue = 4
	// DefaultSolverMaxBudget is the most time one search may take (the cap
	// of POST /v1/solve's budget_ms, and the budget of hints and of each
	// search of an analysis).
	DefaultSolverMaxBudget = 10 * time.Second
	// SolverRetryAfter is the Retry-After of a 503 solver_busy answer.
	SolverRetryAfter = time.Second
)

// DefaultSolverWorkers is the default number of searches run at once:
// GOMAXPROCS-1, so one core stays free for the moves (which never touch the
// pool), and at least 1.
func DefaultSolverWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// SolverPool runs solver searches (RULES R7) on a bounded number of
// workers with a short queue, so that searches, each of which may take a
// core for seconds, never starve the rest of the server. It is safe for
// concurrent use and is a prometheus.Collector of its metrics:
// solitaire_solver_duration_seconds (by route),
// solitaire_solver_verdicts_total (by verdict and route) and
// solitaire_solver_busy_total (searches refused with ErrSolverBusy, by
// route), and the gauges solitaire_solver_running and
// solitaire_solver_waiting. The route of a search is the one its context names
// (WithSolverRoute), "other" if none.
type SolverPool struct {
	// slots holds one token per search admitted (running or queued), up
	// to workers+queue; workers one per search running.
	slots, workers chan struct{}

	duration *prometheus.HistogramVec
	verdicts *prometheus.CounterVec
	busy     *prometheus.CounterVec
	running  prometheus.Gauge // searches on a worker now
	waiting  prometheus.Gauge // searches queued for a worker now
}

// NewSolverPool returns a pool that runs at most workers searches at once
// (DefaultSolverWorkers() if workers < 1) and lets at most queue more wait
// for a worker (none if queue < 1). Its metrics are registered on each of
// metrics given; a registry that already has them (the same pool
// registered twice) is left as it is, any other registration error is
// ignored too (the pool works without them). api.New registers the pool
// on Config.Metrics itself.
func NewSolverPool(workers, queue int, metrics ...prometheus.Registerer) *SolverPool {
	if workers < 1 {
		workers = DefaultSolverWorkers()
	}
	queue = max(queue, 0)
	p := &SolverPool{slots: make(chan struct{}, workers+queue), workers: make(chan struct{}, workers),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "duration_seconds",
			Help:    "Time of one solver search (R7), waiting for a worker excluded, by route.",
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
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "solitaire", Subsystem: "solver", Name: "running",
			Help: "Solver searches running on a worker now.",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
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

// Describe is prometheus.Collector.
func (p *SolverPool) Describe(ch chan<- *prometheus.Desc) {
	p.duration.Describe(ch)
	p.verdicts.Describe(ch)
	p.busy.Describe(ch)
	p.running.Describe(ch)
	p.waiting.Describe(ch)
}

// Collect is prometheus.Collector.
func (p *SolverPool) Collect(ch chan<- prometheus.Metric) {
	p.duration.Collect(ch)
	p.verdicts.Collect(ch)
	p.busy.Collect(ch)
	p.running.Collect(ch)
	p.waiting.Collect(ch)
}

// solverRouteKey is the context key of WithSolverRoute.
type solverRouteKey struct{}

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

// Solve runs solver.Solve(ctx, st, b) on a worker (st is not changed) and
// returns its result. With every worker busy it waits in the queue; with
// the queue full too it returns ErrSolverBusy at once. If ctx is done
// while it waits, or cuts the search short, it returns ctx.Err(). b is
// used as given: callers cap it (the API caps time at its maximum budget).
func (p *SolverPool) Solve(ctx context.Context, st *domain.State, b solver.Budget) (solver.Result, error) {
	route := solverRoute(ctx)
	if err := ctx.Err(); err != nil {
		return solver.Result{}, err
	}
	select {
	case p.slots <- struct{}{}:
	default:
		p.busy.WithLabelValues(route).Inc()
		return solver.Result{}, ErrSolverBusy
	}
	defer func() { <-p.slots }()
	p.waiting.Inc()
	select {
	case p.workers <- struct{}{}:
		p.waiting.Dec()
	case <-ctx.Done():
		p.waiting.Dec()
		return solver.Result{}, ctx.Err()
	}
	p.running.Inc()
	defer func() { p.running.Dec(); <-p.workers }()
	res := solver.Solve(ctx, st, b)
	if err := ctx.Err(); err != nil && res.Verdict == solver.Unknown {
		return solver.Result{}, err // cut short by ctx, not by the budget
	}
	p.duration.WithLabelValues(route).Observe(res.Elapsed.Seconds())
	p.verdicts.WithLabelValues(string(res.Verdict), route).Inc()
	return res, nil
}

// solverBusyError is a search the pool did not run to its end: refused
// (ErrSolverBusy) or given up by its context while waiting or searching.
// Either way the client may try again: 503 solver_busy with Retry-After,
// never a 500.
type solverBusyError struct{ cause error }

func (e *solverBusyError) Error() string { return "solver: " + e.cause.Error() }

func (e *solverBusyError) Unwrap() error { return e.cause }

// RetryAfter is when to try again (server.fail sends it as Retry-After).
func (e *solverBusyError) RetryAfter() time.Duration { return SolverRetryAfter }

// solve runs a search on the server's pool for the request's route. Its
// errors are *solverBusyError.
func (s *server) solve(ctx context.Context, route string, st *domain.State, b solver.Budget) (solver.Result, error) {
	res, err := s.solver.Solve(WithSolverRoute(ctx, route), st, b)
	if err != nil {
		return solver.Result{}, &solverBusyError{cause: err}
	}
	return res, nil
}
