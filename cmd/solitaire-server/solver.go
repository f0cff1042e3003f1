package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/openpatience/solitaire/api"
)

// loadSolver reads the solver pool's configuration (RULES R7; README
// "Configuration"): SOLITAIRE_SOLVER_WORKERS, the searches run at once
// (1..256; default api.DefaultSolverWorkers(), GOMAXPROCS-1 and at least
// 1), SOLITAIRE_SOLVER_QUEUE, how many more may wait for a worker (0..1024;
// default api.DefaultSolverQueue), and SOLITAIRE_SOLVER_MAX_BUDGET_MS, the
// most milliseconds one search may take (100..600000; default 10000).
func (c *config) loadSolver(getenv func(string) string) error {
	c.solverWorkers, c.solverQueue, c.solverMaxBudget = api.DefaultSolverWorkers(), api.DefaultSolverQueue, api.DefaultSolverMaxBudget
	if v := getenv("SOLITAIRE_SOLVER_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 256 {
			return fmt.Errorf("SOLITAIRE_SOLVER_WORKERS=%q: want 1..256 searches at once", v)
		}
		c.solverWorkers = n
	}
	if v := getenv("SOLITAIRE_SOLVER_QUEUE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1024 {
			return fmt.Errorf("SOLITAIRE_SOLVER_QUEUE=%q: want 0..1024 waiting searches", v)
		}
		c.solverQueue = n
	}
	if v := getenv("SOLITAIRE_SOLVER_MAX_BUDGET_MS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 600_000 {
			return fmt.Errorf("SOLITAIRE_SOLVER_MAX_BUDGET_MS=%q: want 100..600000 milliseconds", v)
		}
		c.solverMaxBudget = time.Duration(n) * time.Millisecond
	}
	return nil
}
