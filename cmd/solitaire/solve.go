package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// solveOutput is what `solitaire solve` prints: the verdict of RULES R7.1,
// the winning line as move requests (MoveRequest in openapi.yaml) when there
// is one, the positions searched, the time taken, and the difficulty band
// (R7.5) when asked for.
type solveOutput struct {
	Variant    string         `json:"variant"`
	Verdict    solver.Verdict `json:"verdict"`
	Line       []domain.Move  `json:"line,omitempty"`
	Nodes      int64          `json:"nodes"`
	ElapsedMS  int64          `json:"elapsed_ms"`
	Difficulty solver.Band    `json:"difficulty,omitempty"`
}

// gameFlags are the flags that choose rules: a variant and the options of
// R3 a client may set at creation.
type gameFlags struct {
	variant, flip *string
	draw          *int
	takeBack      *string
}

func addGameFlags(fs *flag.FlagSet) gameFlags {
	return gameFlags{
		variant:  fs.String("variant", "klondike", "variant id (RULES R3)"),
		draw:     fs.Int("draw", 0, "cards per draw, 1 or 3, where the variant offers the choice (default: the variant's)"),
		takeBack: fs.String("take-back", "", "true or false: allow foundation -> tableau (default: the variant's)"),
		flip:     fs.String("flip", "", "auto or player (default: the variant's)"),
	}
}

// rules resolves the flags (o overrides them where a request names
// options).
func (f gameFlags) rules(variant string, o domain.Options) (domain.Rules, error) {
	if variant == "" {
		variant = *f.variant
	}
	v, err := domain.LookupVariant(variant)
	if err != nil {
		return domain.Rules{}, err
	}
	if o.Draw == nil && *f.draw != 0 {
		o.Draw = f.draw
	}
	if o.TakeBack == nil && *f.takeBack != "" {
		b, err := strconv.ParseBool(*f.takeBack)
		if err != nil {
			return domain.Rules{}, fmt.Errorf("-take-back: %w", err)
		}
		o.TakeBack = &b
	}
	if o.Flip == nil && *f.flip != "" {
		m := domain.FlipMode(*f.flip)
		o.Flip = &m
	}
	r, _, err := v.Resolve(o)
	return r, err
}

// layoutRequest is a layout file: either the body of POST /v1/games with a
// layout (Layout in openapi.yaml) or the bare layout object.
type layoutRequest struct {
	Variant string           `json:"variant"`
	Options domain.Options   `json:"options"`
	Layout  *domain.Position `json:"layout"`
}

const solveUsage = `usage: solitaire solve (-seed N | -layout FILE | -log FILE [-at V]) [-variant ID] [-draw 1|3]
       [-take-back true|false] [-flip auto|player] [-budget DURATION] [-nodes N] [-difficulty]
`

// solveCmd is `solitaire solve`: the verdict of R7.1 and a winning line for
// a seeded deal, a layout, or the position of an exported log (after event
// V, default the last; the deal is in the log only once the game has ended,
// R6.4).
func solveCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("solve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gf := addGameFlags(fs)
	seed := fs.String("seed", "", "deal the variant's seeded deal (R6.1), a decimal uint64")
	layout := fs.String("layout", "", "a JSON layout file (a POST /v1/games body with a layout, or the layout), - for standard input")
	logFile := fs.String("log", "", "an exported NDJSON log (GET /v1/games/{id}/events), - for standard input")
	at := fs.Int("at", 0, "with -log: the position after event N (default the last)")
	budget := fs.Duration("budget", solver.DefaultTime, "time budget")
	nodes := fs.Int64("nodes", solver.DefaultNodes, "node budget")
	difficulty := fs.Bool("difficulty", false, "also rate the position (R7.5; searches again under the difficulty budget)")
	pos, err := parse(fs, args)
	given := 0
	for _, s := range []string{*seed, *layout, *logFile} {
		if s != "" {
			given++
		}
	}
	if err != nil || len(pos) != 0 || given != 1 {
		fmt.Fprint(stderr, solveUsage)
		return 2
	}
	var s *domain.State
	switch {
	case *seed != "":
		s, err = seededState(gf, *seed)
	case *layout != "":
		s, err = layoutState(gf, *layout, stdin)
	default:
		s, err = logState(*logFile, *at, stdin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 2
	}
	res := solver.Solve(context.Background(), s, solver.Budget{Nodes: *nodes, Time: *budget})
	out := solveOutput{Variant: s.Rules.Variant, Verdict: res.Verdict, Line: res.Line, Nodes: res.Nodes,
		ElapsedMS: res.Elapsed.Milliseconds()}
	if *difficulty {
		out.Difficulty, _ = solver.Difficulty(context.Background(), s)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	return 0
}

// dealt starts a game of rules r from pos.
func dealt(r domain.Rules, pos domain.Position) (*domain.State, error) {
	if err := pos.Validate(r); err != nil {
		return nil, err
	}
	s := &domain.State{}
	s.Apply(domain.DealtEvent(r, pos, "", time.Now()))
	if s.Fault != "" {
		return nil, errors.New(s.Fault)
	}
	return s, nil
}

func seededState(gf gameFlags, seed string) (*domain.State, error) {
	n, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("-seed: want a decimal uint64: %w", err)
	}
	r, err := gf.rules("", domain.Options{})
	if err != nil {
		return nil, err
	}
	return dealt(r, domain.Deal(r, n))
}

func layoutState(gf gameFlags, name string, stdin io.Reader) (*domain.State, error) {
	data, err := readAll(name, stdin)
	if err != nil {
		return nil, err
	}
	var req layoutRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if req.Layout == nil {
		// A bare layout: the file is the layout object itself.
		req = layoutRequest{Layout: &domain.Position{}}
		if err := json.Unmarshal(data, req.Layout); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	r, err := gf.rules(req.Variant, req.Options)
	if err != nil {
		return nil, err
	}
	p := *req.Layout
	if len(p.Foundations) == 0 {
		p.Foundations = make([][]domain.Card, r.Foundations)
	}
	return dealt(r, p)
}

func logState(name string, at int, stdin io.Reader) (*domain.State, error) {
	recs, err := readLog(name, stdin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if at == 0 {
		at = len(recs)
	}
	if at < 1 || at > len(recs) {
		return nil, fmt.Errorf("-at %d: the log has versions 1..%d", at, len(recs))
	}
	s := &domain.State{}
	for _, r := range recs[:at] {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			return nil, err
		}
		if e.Type == domain.EventGameDealt && e.Data.Deal == nil {
			return nil, errors.New("the log's deal is hidden: a game's cards are in its log once it has ended (R6.4)")
		}
		s.Apply(e)
	}
	if s.Fault != "" {
		return nil, fmt.Errorf("the log does not replay: %s", s.Fault)
	}
	return s, nil
}

func readAll(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}
