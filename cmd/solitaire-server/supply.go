package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/domain/solver"
	"github.com/openpatience/solitaire/domain/supply"
)

// loadSupply reads the configuration of the supply of proven winnable deals
// (RULES R7.2; supply.Supply): SOLITAIRE_WINNABLE_WORKERS (0..8 goroutines,
// default 1; 0 turns the supply off: winnable games answer 503
// deal_not_ready and duels and daily deals are dealt at random),
// SOLITAIRE_WINNABLE_BUFFER (deals kept per rule set, 1..100, default 2),
// SOLITAIRE_WINNABLE_WAIT (the longest a request waits for an empty
// buffer, 0s..10s, default 2s), SOLITAIRE_WINNABLE_NODES (the node
// budget of one proof attempt of a one-deck deal, 1000..
// solver.DifficultyNodes, default supply.DefaultProofNodes) and
// SOLITAIRE_WINNABLE_MULTIDECK_NODES (the same for two or three decks,
// minMultiDeckNodes..solver.DifficultyNodes, default
// supply.DefaultMultiDeckProofNodes).
func (c *config) loadSupply(getenv func(string) string) error {
	c.supply = supply.Config{Workers: supply.DefaultWorkers, Nice: true}
	c.supplyOn = true
	if v := getenv("SOLITAIRE_WINNABLE_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 8 {
			return fmt.Errorf("SOLITAIRE_WINNABLE_WORKERS=%q: want 0..8 goroutines, 0 for no winnable deals", v)
		}
		c.supply.Workers, c.supplyOn = n, n > 0
	}
	if v := getenv("SOLITAIRE_WINNABLE_BUFFER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return fmt.Errorf("SOLITAIRE_WINNABLE_BUFFER=%q: want 1..100 deals per rule set", v)
		}
		c.supply.Buffer = n
	}
	if v := getenv("SOLITAIRE_WINNABLE_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > 10*time.Second {
			return fmt.Errorf("SOLITAIRE_WINNABLE_WAIT=%q: want a duration of 0s..10s, e.g. 2s", v)
		}
		c.supply.Wait = max(d, time.Millisecond) // 0 would mean the default
	}
	for _, b := range []struct {
		name string
		min  int64
		to   *int64
	}{{"SOLITAIRE_WINNABLE_NODES", 1000, &c.supply.Nodes}, {"SOLITAIRE_WINNABLE_MULTIDECK_NODES", minMultiDeckNodes, &c.supply.MultiDeckNodes}} {
		if v := getenv(b.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < b.min || n > solver.DifficultyNodes {
				return fmt.Errorf("%s=%q: want %d..%d nodes", b.name, v, b.min, solver.DifficultyNodes)
			}
			*b.to = n
		}
	}
	return nil
}

// minMultiDeckNodes is the least proof budget of a Harp or Tripleharp
// deal: their searches take thousands of positions even for the easiest
// deals (4,322 the fewest of Harp seeds 1-200), and a budget that proves
// almost none leaves their daily deals answering 503.
const minMultiDeckNodes = 100_000

// startSupply starts the supply of proven deals and makes it games'
// Dealer, unless it is off. It begins at once with the rules of every
// variant's daily deal (the variant's defaults; the duels' default
// variant is one of them), so that the day's first daily game and the
// first duel find a deal: the buffer of two holds today's and tomorrow's.
// Every rule set fills within seconds: a Tripleharp deal costs about
// 0.15 s of one core at low priority (supply.DefaultMultiDeckProofNodes).
// The returned function stops it.
func startSupply(cfg config, games *app.Games, log *slog.Logger) func() {
	if !cfg.supplyOn {
		log.Warn("winnable deals are off (SOLITAIRE_WINNABLE_WORKERS=0): duels and daily deals are dealt at random")
		return func() {}
	}
	s := supply.New(cfg.supply)
	games.Dealer = s
	for _, rules := range dailyRules() {
		s.Want(rules)
	}
	return s.Close
}

// dailyRules are the default rules of every variant: the rule sets of the
// daily deals and of a duel that names no options.
func dailyRules() []domain.Rules {
	var out []domain.Rules
	for _, v := range domain.Variants() {
		if rules, _, err := v.Resolve(domain.Options{}); err == nil {
			out = append(out, rules)
		}
	}
	return out
}
