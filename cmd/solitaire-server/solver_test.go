package main

import (
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
)

// The solver pool's configuration: defaults, values in range taken, values
// out of range refused.
func TestLoadSolverConfig(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.solverWorkers != api.DefaultSolverWorkers() || c.solverQueue != api.DefaultSolverQueue ||
		c.solverShare != (api.SolverShare{Running: 1, Queued: 1, AddressRunning: 2, AddressQueued: 2}) || c.solverMaxBudget != 10*time.Second {
		t.Errorf("defaults: %d workers, %d queued, share %+v, %v", c.solverWorkers, c.solverQueue, c.solverShare, c.solverMaxBudget)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_SOLVER_WORKERS": "3", "SOLITAIRE_SOLVER_QUEUE": "0",
		"SOLITAIRE_SOLVER_RUNNING_PER_PLAYER": "2", "SOLITAIRE_SOLVER_QUEUE_PER_PLAYER": "0",
		"SOLITAIRE_SOLVER_RUNNING_PER_ADDRESS": "0", "SOLITAIRE_SOLVER_QUEUE_PER_ADDRESS": "5",
		"SOLITAIRE_SOLVER_MAX_BUDGET_MS": "2500"}))
	if err != nil || c.solverWorkers != 3 || c.solverQueue != 0 || c.solverShare != (api.SolverShare{Running: 2, AddressQueued: 5}) ||
		c.solverMaxBudget != 2500*time.Millisecond {
		t.Errorf("set: %d workers, %d queued, share %+v, %v, %v", c.solverWorkers, c.solverQueue, c.solverShare, c.solverMaxBudget, err)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_SOLVER_WORKERS": "0"},
		{"SOLITAIRE_SOLVER_WORKERS": "many"},
		{"SOLITAIRE_SOLVER_QUEUE": "-1"},
		{"SOLITAIRE_SOLVER_RUNNING_PER_PLAYER": "0"},
		{"SOLITAIRE_SOLVER_RUNNING_PER_PLAYER": "257"},
		{"SOLITAIRE_SOLVER_QUEUE_PER_PLAYER": "-1"},
		{"SOLITAIRE_SOLVER_QUEUE_PER_PLAYER": "1025"},
		{"SOLITAIRE_SOLVER_RUNNING_PER_ADDRESS": "-1"},
		{"SOLITAIRE_SOLVER_RUNNING_PER_ADDRESS": "257"},
		{"SOLITAIRE_SOLVER_QUEUE_PER_ADDRESS": "1025"},
		{"SOLITAIRE_SOLVER_RUNNING_PER_PLAYER": "3"},                                          // above the address's 2
		{"SOLITAIRE_SOLVER_QUEUE_PER_PLAYER": "1", "SOLITAIRE_SOLVER_QUEUE_PER_ADDRESS": "0"}, // above the address's 0
		{"SOLITAIRE_SOLVER_MAX_BUDGET_MS": "99"},
		{"SOLITAIRE_SOLVER_MAX_BUDGET_MS": "600001"},
	} {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
