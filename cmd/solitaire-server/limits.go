package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Defaults of the rate limit (README "Limits"): far above what a
// person or a well-behaved bot sends, so normal play is never throttled;
// floods are.
const (
	defaultRateLimit = 50 // requests per second per token, or per address without one
	// defaultPlayersPerHour bounds new players per client address: enough
	// for a household or a classroom behind one address, far too few to
	// defeat the per-token limit with fresh tokens.
	defaultPlayersPerHour = 20
	// defaultGamesInProgress bounds one player's games in progress: far
	// more than anyone plays at once, few enough that a script cannot
	// fill the database with open games (each holds its deal and state).
	defaultGamesInProgress = 100
	// defaultProbeRate bounds GET /healthz and /readyz per client address,
	// a second (bursts of twice that): a load balancer or an orchestrator
	// probes every few seconds, so several of them behind one address fit
	// many times over; a client pinging them on every connection does not.
	defaultProbeRate = 10
)

// loadLimits reads SOLITAIRE_RATE_LIMIT (requests per second, 0 = no
// limit; default defaultRateLimit), SOLITAIRE_RATE_BURST (default twice the
// limit), SOLITAIRE_PLAYER_CREATE_LIMIT (new players per hour per client
// address, 0 = no limit; default defaultPlayersPerHour) and
// SOLITAIRE_CORS_ORIGINS (comma-separated; api.New checks each).
// SOLITAIRE_MAX_GAMES_IN_PROGRESS is the bound of one player's games in
// progress (0 = none; default defaultGamesInProgress).
// SOLITAIRE_PROBE_RATE_LIMIT is the probes' rate per client address
// (requests per second, 0 = no limit; default defaultProbeRate).
//
// SOLITAIRE_SHARED_MIN_ACCOUNT_AGE (a Go duration, 0..8760h, default 0 =
// off) is app.Competitions.MinAccountAge: accounts younger than it when
// a duel or daily deal opened play it unranked and count in no standings.
func (c *config) loadLimits(getenv func(string) string) error {
	if err := rangeVar(getenv, "SOLITAIRE_SHARED_MIN_ACCOUNT_AGE", time.ParseDuration, 0, 365*24*time.Hour,
		"a duration of 0s..8760h, e.g. 24h (0 checks nothing)", &c.minAccountAge); err != nil {
		return err
	}
	c.gamesInProgress = defaultGamesInProgress
	if err := rangeVar(getenv, "SOLITAIRE_MAX_GAMES_IN_PROGRESS", strconv.Atoi, 0, 1_000_000,
		"games per player, 0 for no bound", &c.gamesInProgress); err != nil {
		return err
	}
	c.playersPerHour = defaultPlayersPerHour
	if err := rangeVar(getenv, "SOLITAIRE_PLAYER_CREATE_LIMIT", strconv.Atoi, 0, 1_000_000,
		"new players per hour per address, 0 for no limit", &c.playersPerHour); err != nil {
		return err
	}
	c.rateLimit = defaultRateLimit
	if err := rangeVar(getenv, "SOLITAIRE_RATE_LIMIT", parseFloat, 0, math.MaxFloat64,
		"requests per second, 0 for no limit", &c.rateLimit); err != nil {
		return err
	}
	c.probeRate = defaultProbeRate
	if err := rangeVar(getenv, "SOLITAIRE_PROBE_RATE_LIMIT", parseFloat, 0, 1e6,
		"probes per second per address (up to 1000000), 0 for no limit", &c.probeRate); err != nil {
		return err
	}
	c.rateBurst = max(1, int(math.Ceil(2*c.rateLimit)))
	if err := rangeVar(getenv, "SOLITAIRE_RATE_BURST", strconv.Atoi, 1, math.MaxInt,
		"a whole number of requests from 1", &c.rateBurst); err != nil {
		return err
	}
	c.corsOrigins = nil
	for _, o := range strings.Split(getenv("SOLITAIRE_CORS_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.corsOrigins = append(c.corsOrigins, o)
		}
	}
	return nil
}
