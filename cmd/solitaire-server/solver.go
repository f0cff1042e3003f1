package main

import (
	"fmt"
	"time"

	"github.com/openpatience/solitaire/api"
)

// loadSolver reads the solver pool's configuration (RULES R7; README
// "Configuration"): SOLITAIRE_SOLVER_WORKERS, the searches run at once
// (1..256; default api.DefaultSolverWorkers(), GOMAXPROCS-1 and at least
// 1), SOLITAIRE_SOLVER_QUEUE, how many more may wait for a worker (0..1024;
// default api.DefaultSolverQueue), SOLITAIRE_SOLVER_RUNNING_PER_PLAYER and
// SOLITAIRE_SOLVER_QUEUE_PER_PLAYER, one player's share of those
// (api.SolverShare: 1..256 running, 0..1024 waiting; default 1 and 1),
// SOLITAIRE_SOLVER_RUNNING_PER_ADDRESS and SOLITAIRE_SOLVER_QUEUE_PER_ADDRESS,
// the share of all the players of one client address together (0..256
// running, 0 for no address share; 0..1024 waiting; default 2 and 2; with
// an address share, a player's share may not exceed it), and
// SOLITAIRE_SOLVER_MAX_BUDGET_MS, the most milliseconds one search may
// take (100..600000; default 10000).
func (c *config) loadSolver(getenv func(string) string) error {
	c.solverWorkers, c.solverQueue, c.solverMaxBudget = api.DefaultSolverWorkers(), api.DefaultSolverQueue, api.DefaultSolverMaxBudget
	c.solverShare = api.DefaultSolverShare()
	ms := int(c.solverMaxBudget.Milliseconds())
	for _, v := range []struct {
		name   string
		lo, hi int
		want   string
		dst    *int
	}{
		{"SOLITAIRE_SOLVER_WORKERS", 1, 256, "searches at once", &c.solverWorkers},
		{"SOLITAIRE_SOLVER_QUEUE", 0, 1024, "waiting searches", &c.solverQueue},
		{"SOLITAIRE_SOLVER_RUNNING_PER_PLAYER", 1, 256, "searches at once per player", &c.solverShare.Running},
		{"SOLITAIRE_SOLVER_QUEUE_PER_PLAYER", 0, 1024, "waiting searches per player", &c.solverShare.Queued},
		{"SOLITAIRE_SOLVER_RUNNING_PER_ADDRESS", 0, 256, "searches at once per address (0: no address share)", &c.solverShare.AddressRunning},
		{"SOLITAIRE_SOLVER_QUEUE_PER_ADDRESS", 0, 1024, "waiting searches per address", &c.solverShare.AddressQueued},
		{"SOLITAIRE_SOLVER_MAX_BUDGET_MS", 100, 600_000, "milliseconds", &ms},
	} {
		if err := intVar(getenv, v.name, v.lo, v.hi, v.want, v.dst); err != nil {
			return err
		}
	}
	// A player's share beyond its address's could never be used: refused,
	// so that a setting is never silently capped.
	if sh := c.solverShare; sh.AddressRunning > 0 && (sh.Running > sh.AddressRunning || sh.Queued > sh.AddressQueued) {
		return fmt.Errorf("SOLITAIRE_SOLVER_RUNNING_PER_PLAYER=%d and SOLITAIRE_SOLVER_QUEUE_PER_PLAYER=%d: want at most the address's share, "+
			"%d and %d (SOLITAIRE_SOLVER_*_PER_ADDRESS; RUNNING_PER_ADDRESS=0 sets none)", sh.Running, sh.Queued, sh.AddressRunning, sh.AddressQueued)
	}
	c.solverMaxBudget = time.Duration(ms) * time.Millisecond
	return nil
}
