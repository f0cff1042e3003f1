package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Bounds of a load run: no run is longer, and no player sends more
// requests, whatever the flags say.
const (
	maxDuration         = 10 * time.Minute
	maxRequestsPerRound = 10_000_000
)

// Latencies are recorded in microseconds from 1 µs to 1 minute with three
// significant digits (HdrHistogram: 0.1% relative error).
const (
	histMin    = 1
	histMax    = int64(time.Minute / time.Microsecond)
	histDigits = 3
)

// loadConfig describes one load run: who plays, how, and for how long.
type loadConfig struct {
	URL      string        // the server's base URL, e.g. http://127.0.0.1:8080
	Players  int           // concurrent players, each with its own token and game
	Duration time.Duration // how long to play (measured part plus warm-up)
	Warmup   time.Duration // requests before this are not counted
	Variant  string        // variant of the games (relaxed: undo allowed)
	Options  json.RawMessage
	// GameMoves is how many moves a player makes in one game before it
	// starts the next (a game that ends earlier is replaced at once).
	GameMoves int
	// Games, if above 0, stops the run once that many games have been
	// created and played GameMoves moves each (the memory phase); the
	// games are left in progress.
	Games int
	// LegalShare is the share of moves chosen from GET …/legal-moves;
	// the others are draws and undos decided from the last game view, as a
	// frontend would (a draw is legal in relaxed whenever stock or waste
	// has a card, an undo whenever can_undo).
	LegalShare float64
	// UndoShare is the share of moves that are undos (when allowed).
	UndoShare float64
	Seed      uint64
	// Timeout bounds each request.
	Timeout time.Duration
}

// defaultLoadConfig is the configuration the flags start from.
func defaultLoadConfig() loadConfig {
	return loadConfig{URL: "http://127.0.0.1:8080", Players: 64, Duration: 20 * time.Second,
		Warmup: 2 * time.Second, Variant: "relaxed", GameMoves: 200, LegalShare: 0.5, UndoShare: 0.15,
		Seed: 1, Timeout: 10 * time.Second}
}

func (c loadConfig) validate() error {
	switch {
	case c.Players < 1 || c.Players > 1000:
		return fmt.Errorf("players %d: want 1..1000", c.Players)
	case c.Duration <= 0 || c.Duration > maxDuration:
		return fmt.Errorf("duration %s: want more than 0 and at most %s", c.Duration, maxDuration)
	case c.Warmup < 0 || c.Warmup >= c.Duration:
		return fmt.Errorf("warm-up %s: want 0 or more and less than the duration %s", c.Warmup, c.Duration)
	case c.GameMoves < 1:
		return fmt.Errorf("moves per game %d: want 1 or more", c.GameMoves)
	case c.LegalShare < 0 || c.LegalShare > 1 || c.UndoShare < 0 || c.UndoShare > 1:
		return errors.New("shares must be in 0..1")
	}
	return loopbackURL(c.URL)
}

// loopbackURL refuses a URL that is not on this machine: load goes to a
// loopback address only.
func loopbackURL(u string) error {
	if !strings.HasPrefix(u, "http://127.") && !strings.HasPrefix(u, "http://localhost") &&
		!strings.HasPrefix(u, "http://[::1]") {
		return fmt.Errorf("url %q: load goes only to a loopback address (http://127.x.x.x, localhost, [::1])", u)
	}
	return nil
}

// The kinds of request a player sends, each with its own histogram.
const (
	opMove   = "move"   // POST /v1/games/{id}/moves
	opLegal  = "legal"  // GET /v1/games/{id}/legal-moves
	opCreate = "create" // POST /v1/games
)

var ops = []string{opMove, opLegal, opCreate}

// loadResult is what a run measured (after the warm-up).
type loadResult struct {
	Config   loadConfig
	Measured time.Duration // wall time of the counted part
	Moves    int64         // accepted moves (200)
	Games    int64         // games created
	Requests int64         // requests counted, all kinds
	Hist     map[string]*hdrhistogram.Histogram
	// Errors counts failed requests by "op status code" (e.g. "move 409
	// game_over", "legal transport").
	Errors map[string]int64
	// ByType counts accepted moves by move type.
	ByType map[string]int64
}

// MovesPerSecond is accepted moves per second of measured time.
func (r *loadResult) MovesPerSecond() float64 {
	if r.Measured <= 0 {
		return 0
	}
	return float64(r.Moves) / r.Measured.Seconds()
}

// ErrorCount is the number of failed requests.
func (r *loadResult) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// quantile returns the latency of op at quantile q (0..100).
func (r *loadResult) quantile(op string, q float64) time.Duration {
	h := r.Hist[op]
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond
}

// max returns the largest latency of op.
func (r *loadResult) max(op string) time.Duration {
	h := r.Hist[op]
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(h.Max()) * time.Microsecond
}

// Report writes the result in a fixed, readable form.
func (r *loadResult) Report(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "target       %s, %d players, %s (%s warm-up not counted), variant %s\n",
		c.URL, c.Players, c.Duration, c.Warmup, c.Variant)
	fmt.Fprintf(w, "moves        %d in %.1fs: %.1f moves/s (%d games created, %d requests)\n",
		r.Moves, r.Measured.Seconds(), r.MovesPerSecond(), r.Games, r.Requests)
	var types []string
	for t := range r.ByType {
		types = append(types, t)
	}
	sort.Strings(types)
	var parts []string
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%s %d", t, r.ByType[t]))
	}
	fmt.Fprintf(w, "move mix     %s\n", strings.Join(parts, ", "))
	for _, op := range ops {
		h := r.Hist[op]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		fmt.Fprintf(w, "%-12s n=%d p50 %s  p90 %s  p99 %s  max %s\n", op+" latency", h.TotalCount(),
			ms(r.quantile(op, 50)), ms(r.quantile(op, 90)), ms(r.quantile(op, 99)), ms(r.max(op)))
	}
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "errors       none")
		return
	}
	var keys []string
	for k := range r.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "errors       %s: %d\n", k, r.Errors[k])
	}
}

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

// newHTTPClient returns a client that keeps one connection per player.
func newHTTPClient(players int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * players,
		MaxIdleConnsPerHost: 2 * players,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// runLoad plays until cfg.Duration has passed (or cfg.Games are done, or
// ctx ends) and returns what it measured.
func runLoad(ctx context.Context, cfg loadConfig) (*loadResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	client := newHTTPClient(cfg.Players, cfg.Timeout)
	defer client.CloseIdleConnections()
	players := make([]*player, cfg.Players)
	for i := range players {
		p := &player{cfg: &cfg, client: client, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)),
			stats: newStats()}
		if err := p.register(ctx, i); err != nil {
			return nil, fmt.Errorf("player %d: %w", i, err)
		}
		players[i] = p
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	countFrom := start.Add(cfg.Warmup)
	var gamesLeft atomic.Int64
	gamesLeft.Store(int64(cfg.Games))
	var wg sync.WaitGroup
	for _, p := range players {
		p.countFrom = countFrom
		wg.Go(func() { p.play(ctx, &gamesLeft) })
	}
	wg.Wait()
	end := time.Now()
	res := &loadResult{Config: cfg, Measured: end.Sub(countFrom), Hist: map[string]*hdrhistogram.Histogram{},
		Errors: map[string]int64{}, ByType: map[string]int64{}}
	if res.Measured < 0 {
		res.Measured = 0
	}
	for _, op := range ops {
		res.Hist[op] = hdrhistogram.New(histMin, histMax, histDigits)
	}
	for _, p := range players {
		for op, h := range p.stats.hist {
			res.Hist[op].Merge(h)
		}
		for k, v := range p.stats.errors {
			res.Errors[k] += v
		}
		for k, v := range p.stats.byType {
			res.ByType[k] += v
		}
		res.Moves += p.stats.moves
		res.Games += p.stats.games
		res.Requests += p.stats.requests
	}
	return res, nil
}

// stats is one player's counts; merged after the run, so no locks.
type stats struct {
	hist     map[string]*hdrhistogram.Histogram
	errors   map[string]int64
	byType   map[string]int64
	moves    int64
	games    int64
	requests int64
}

func newStats() *stats {
	s := &stats{hist: map[string]*hdrhistogram.Histogram{}, errors: map[string]int64{}, byType: map[string]int64{}}
	for _, op := range ops {
		s.hist[op] = hdrhistogram.New(histMin, histMax, histDigits)
	}
	return s
}

// moveRequest is a move in the API's request shape (MoveRequest in
// openapi.yaml).
type moveRequest struct {
	Type  string  `json:"type"`
	From  *string `json:"from,omitempty"`
	To    *string `json:"to,omitempty"`
	Count *int    `json:"count,omitempty"`
	Pile  *string `json:"pile,omitempty"`
}

// gameView is the part of a Game the player looks at.
type gameView struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Version int    `json:"version"`
	CanUndo bool   `json:"can_undo"`
	Stock   struct {
		Count int `json:"count"`
	} `json:"stock"`
	Waste struct {
		Cards []struct{} `json:"cards"`
	} `json:"waste"`
}

// player is one simulated client: a token and the game it is playing.
type player struct {
	cfg       *loadConfig
	client    *http.Client
	rng       *rand.Rand
	token     string
	game      *gameView
	moved     int // moves in the current game
	countFrom time.Time
	stats     *stats
}

// register creates the player's account (not measured).
func (p *player) register(ctx context.Context, i int) error {
	body, _ := json.Marshal(map[string]string{"name": fmt.Sprintf("load-%d", i)})
	var out struct {
		Token string `json:"token"`
	}
	for attempt := 0; ; attempt++ {
		status, b, err := p.do(ctx, http.MethodPost, "/v1/players", body)
		if err == nil && status == http.StatusCreated {
			if err := json.Unmarshal(b, &out); err != nil || out.Token == "" {
				return fmt.Errorf("POST /v1/players: no token in %q", truncate(b))
			}
			p.token = out.Token
			return nil
		}
		if attempt >= 20 || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("status %d: %s", status, truncate(b))
			}
			return fmt.Errorf("POST /v1/players: %w", err)
		}
		time.Sleep(retryDelay(status, 50*time.Millisecond))
	}
}

// play makes moves until ctx ends or, with cfg.Games, the games run out.
func (p *player) play(ctx context.Context, gamesLeft *atomic.Int64) {
	for i := 0; i < maxRequestsPerRound && ctx.Err() == nil; i++ {
		if p.game == nil || p.game.Status != "in_progress" || p.moved >= p.cfg.GameMoves {
			if p.cfg.Games > 0 && gamesLeft.Add(-1) < 0 {
				return
			}
			p.newGame(ctx)
			continue
		}
		p.step(ctx)
	}
}

// newGame creates a game and makes it the current one.
func (p *player) newGame(ctx context.Context) {
	req := map[string]any{"variant": p.cfg.Variant}
	if len(p.cfg.Options) > 0 {
		req["options"] = p.cfg.Options
	}
	body, _ := json.Marshal(req)
	status, b, ok := p.measured(ctx, opCreate, http.MethodPost, "/v1/games", body)
	if !ok {
		return
	}
	if status != http.StatusCreated {
		p.fail(opCreate, status, b)
		return
	}
	var g gameView
	if err := json.Unmarshal(b, &g); err != nil || g.ID == "" {
		p.fail(opCreate, status, b)
		return
	}
	p.game, p.moved = &g, 0
	if p.counted() {
		p.stats.games++
	}
}

// step makes one move: from the legal-moves list, or a draw or undo
// decided from the last view.
func (p *player) step(ctx context.Context) {
	g := p.game
	r := p.rng.Float64()
	switch {
	case r < p.cfg.UndoShare && g.CanUndo:
		p.send(ctx, moveRequest{Type: "undo"})
	case r < p.cfg.UndoShare+(1-p.cfg.UndoShare)*(1-p.cfg.LegalShare) && (g.Stock.Count > 0 || len(g.Waste.Cards) > 0):
		p.send(ctx, moveRequest{Type: "draw"})
	default:
		m, ok := p.pickLegal(ctx)
		if ok {
			p.send(ctx, m)
		}
	}
}

// pickLegal asks for the legal moves and picks one at random, never a
// resign.
func (p *player) pickLegal(ctx context.Context) (moveRequest, bool) {
	status, b, ok := p.measured(ctx, opLegal, http.MethodGet, "/v1/games/"+p.game.ID+"/legal-moves", nil)
	if !ok {
		return moveRequest{}, false
	}
	if status != http.StatusOK {
		p.fail(opLegal, status, b)
		return moveRequest{}, false
	}
	var lm struct {
		Moves []moveRequest `json:"moves"`
	}
	if err := json.Unmarshal(b, &lm); err != nil {
		p.fail(opLegal, status, b)
		return moveRequest{}, false
	}
	var choice []moveRequest
	for _, m := range lm.Moves {
		if m.Type != "resign" {
			choice = append(choice, m)
		}
	}
	if len(choice) == 0 {
		p.game = nil // nothing but resign: start another game
		return moveRequest{}, false
	}
	return choice[p.rng.IntN(len(choice))], true
}

// send posts move m and takes the game view from the answer.
func (p *player) send(ctx context.Context, m moveRequest) {
	body, _ := json.Marshal(m)
	status, b, ok := p.measured(ctx, opMove, http.MethodPost, "/v1/games/"+p.game.ID+"/moves", body)
	if !ok {
		return
	}
	if status != http.StatusOK {
		p.fail(opMove, status, b)
		if status == http.StatusConflict {
			p.game = nil // ended under us; start another
		}
		return
	}
	var out struct {
		Game gameView `json:"game"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Game.ID == "" {
		p.fail(opMove, status, b)
		return
	}
	p.game = &out.Game
	p.moved++
	if p.counted() {
		p.stats.moves++
		p.stats.byType[m.Type]++
	}
}

// counted reports whether a request ending now counts (after the warm-up).
func (p *player) counted() bool { return !time.Now().Before(p.countFrom) }

// measured sends a request and records its latency under op. ok is false
// when there was no answer (counted as a transport error).
func (p *player) measured(ctx context.Context, op, method, path string, body []byte) (int, []byte, bool) {
	start := time.Now()
	status, b, err := p.do(ctx, method, path, body)
	took := time.Since(start)
	if ctx.Err() != nil {
		return 0, nil, false // the run ended mid-request: not counted
	}
	if p.counted() {
		p.stats.requests++
		_ = p.stats.hist[op].RecordValue(max(int64(took/time.Microsecond), histMin))
	}
	if err != nil {
		if p.counted() {
			p.stats.errors[op+" transport"]++
		}
		time.Sleep(10 * time.Millisecond) // do not spin on a dead server
		return 0, nil, false
	}
	if status == http.StatusTooManyRequests {
		p.fail(op, status, b)
		time.Sleep(retryDelay(status, 100*time.Millisecond))
		return 0, nil, false
	}
	return status, b, true
}

// fail counts a refused request by op, status and problem code.
func (p *player) fail(op string, status int, body []byte) {
	if !p.counted() {
		return
	}
	var prob struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(body, &prob)
	key := fmt.Sprintf("%s %d %s", op, status, prob.Code)
	if prob.Reason != "" {
		key += "/" + prob.Reason
	}
	p.stats.errors[strings.TrimSpace(key)]++
}

// do sends one request with the player's token and reads the whole body.
func (p *player) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.cfg.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// retryDelay is how long to wait after a 429 (its Retry-After is not
// visible here, so a short fixed pause) or another failure.
func retryDelay(status int, d time.Duration) time.Duration {
	if status == http.StatusTooManyRequests {
		return max(d, 100*time.Millisecond)
	}
	return d
}

// truncate shortens a body for an error message.
func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
