package supply

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

func relaxedRules(t *testing.T) domain.Rules { return rulesOf(t, "relaxed") }

// rulesOf is the default rules of variant id.
func rulesOf(t *testing.T, id string) domain.Rules {
	t.Helper()
	v, err := domain.LookupVariant(id)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(domain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// blocked is a random source that never answers until released: a supply
// on it proves nothing.
type blocked chan struct{}

func (b blocked) Read(p []byte) (int, error) {
	<-b
	return rand.Read(p)
}

// seeds is a random source that gives the secret seeds listed, in turn,
// and then fails (the supply then waits a second before it reads again).
// Its workers may read it at once.
type seeds struct {
	mu   sync.Mutex
	list []uint64
}

func (s *seeds) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 || len(p) < 8 {
		return 0, errors.New("no more seeds")
	}
	binary.BigEndian.PutUint64(p, s.list[0])
	s.list = s.list[1:]
	return 8, nil
}

// TestR7_2_SupplyDealsAreProven: a deal taken from the supply is dealt by
// its seed under the rules asked for, its line wins it through
// domain.Decide, its band is BandOf its decks and nodes and the same as
// Difficulty gives (R7.5: the node count to the first solution does not
// depend on the proof's smaller budget), and Prove gives it again on the
// same seed (a node budget: the same on every machine). Two takes are two
// deals. Harp and Tripleharp deals are proven within their own budget
// (DefaultMultiDeckProofNodes); their seeds are ones the search wins
// within a few hundred thousand positions, so that the test stays short
// under the race detector.
func TestR7_2_SupplyDealsAreProven(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		variant string
		random  *seeds // nil: crypto/rand
		budget  int64
	}{
		{"relaxed", nil, DefaultProofNodes},
		{"harp", &seeds{list: []uint64{6, 16}}, DefaultMultiDeckProofNodes},
		{"tripleharp", &seeds{list: []uint64{21, 19}}, DefaultMultiDeckProofNodes},
	} {
		t.Run(c.variant, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Wait: 2 * time.Minute}
			if c.random != nil {
				cfg.Random = c.random
			}
			provenTwice(t, cfg, rulesOf(t, c.variant), c.budget)
		})
	}
}

// provenTwice takes two deals of rules from a supply made with cfg and
// checks each as TestR7_2_SupplyDealsAreProven says, budget being the
// proof budget the supply has for rules.
func provenTwice(t *testing.T, cfg Config, rules domain.Rules, budget int64) {
	t.Helper()
	s := New(cfg)
	defer s.Close()
	s.Want(rules)
	ctx := context.Background()
	a, err := s.ProvenDeal(ctx, rules)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ProvenDeal(ctx, rules)
	if err != nil {
		t.Fatal(err)
	}
	if a.Seed == b.Seed {
		t.Errorf("two takes gave seed %d twice", a.Seed)
	}
	for _, d := range []domain.ProvenDeal{a, b} {
		dealt := domain.DealtEvent(rules, domain.Deal(rules, d.Seed), "", time.Unix(0, 0))
		if ok, why := domain.SolutionWins(dealt, d.Line); !ok {
			t.Errorf("seed %d: the line does not win: %s", d.Seed, why)
		}
		if d.Difficulty != solver.BandOf(rules.Decks, d.Nodes) || d.Nodes < 1 || d.Nodes > budget {
			t.Errorf("seed %d: %d nodes, band %s", d.Seed, d.Nodes, d.Difficulty)
		}
		st := &domain.State{}
		st.Apply(dealt)
		band, res := solver.Difficulty(ctx, st)
		if band != d.Difficulty || res.Nodes != d.Nodes {
			t.Errorf("seed %d: Difficulty says %s after %d nodes, the supply %s after %d", d.Seed, band, res.Nodes, d.Difficulty, d.Nodes)
		}
		again, ok := solver.Prove(ctx, rules, d.Seed, budget)
		if !ok || again.Nodes != d.Nodes || domain.EncodeLine(again.Line) != domain.EncodeLine(d.Line) {
			t.Errorf("seed %d: proving again gave %v, %d nodes", d.Seed, ok, again.Nodes)
		}
	}
}

// TestR7_2_SupplyMultiDeckBudget: a Harp deal is proven within
// Config.MultiDeckNodes, not the one-deck budget (200,000, which wins seed
// 6): with 100,000 positions seed 6 (157,235 to its first win) is skipped
// and seed 16 (31,328) dealt; with the default (2,000,000) seed 6 is dealt.
func TestR7_2_SupplyMultiDeckBudget(t *testing.T) {
	t.Parallel()
	harp := rulesOf(t, "harp")
	for _, c := range []struct {
		budget int64
		want   uint64
	}{{100_000, 16}, {0, 6}} {
		s := New(Config{Random: &seeds{list: []uint64{6, 16}}, MultiDeckNodes: c.budget, Buffer: 1, Wait: 2 * time.Minute})
		d, err := s.ProvenDeal(context.Background(), harp)
		s.Close()
		if err != nil || d.Seed != c.want {
			t.Errorf("budget %d: seed %d (%v), want %d", c.budget, d.Seed, err, c.want)
		}
	}
}

// TestR7_2_SupplyNotReady: an empty supply answers within its wait, or at
// once when ctx ends or the supply closes, with *domain.DealNotReadyError
// (a Retry-After of at least a second): never a random deal, never a hang.
func TestR7_2_SupplyNotReady(t *testing.T) {
	t.Parallel()
	gate := make(blocked)
	s := New(Config{Random: gate, Wait: 30 * time.Millisecond, RetryAfter: 3 * time.Second})
	rules := relaxedRules(t)
	_, err := s.ProvenDeal(context.Background(), rules)
	var nr *domain.DealNotReadyError
	if !errors.As(err, &nr) || !errors.Is(err, domain.ErrDealNotReady) || nr.RetryAfter() != 3*time.Second {
		t.Fatalf("empty supply: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.ProvenDeal(ctx, rules); !errors.Is(err, domain.ErrDealNotReady) {
		t.Errorf("cancelled request: %v", err)
	}
	if s.Ready(rules) != 0 {
		t.Error("a deal without a seed")
	}
	close(gate)
	s.Close()
	if _, err := s.ProvenDeal(context.Background(), rules); !errors.Is(err, domain.ErrDealNotReady) {
		t.Errorf("closed supply: %v", err)
	}
}

// TestR7_2_CheckSolution: the check of a revealed line fails for a line
// one move short, a reordered line, another salt and another commitment.
func TestR7_2_CheckSolution(t *testing.T) {
	t.Parallel()
	rules := relaxedRules(t)
	var d domain.ProvenDeal
	for seed := uint64(1); ; seed++ {
		var ok bool
		if d, ok = solver.Prove(context.Background(), rules, seed, DefaultProofNodes); ok && len(d.Line) > 2 {
			break
		}
	}
	salt := make([]byte, 32)
	salt[0] = 7
	dealt := domain.DealtEvent(rules, domain.Deal(rules, d.Seed), "", time.Unix(0, 0))
	dealt.Data.SolutionCommitment = domain.SolutionCommitment(d.Line, salt)
	if r := domain.CheckSolution(dealt, d.Line, salt); !r.OK || r.Problem != "" {
		t.Fatalf("the proven line: %+v", r)
	}
	swapped := slices.Clone(d.Line)
	swapped[0], swapped[len(swapped)-1] = swapped[len(swapped)-1], swapped[0]
	other := slices.Clone(salt)
	other[31] ^= 1
	tampered := dealt
	tampered.Data.SolutionCommitment = "sha256:" + string(make([]byte, 0))
	for what, r := range map[string]domain.SolutionReport{
		"one move short":     domain.CheckSolution(dealt, d.Line[:len(d.Line)-1], salt),
		"reordered":          domain.CheckSolution(dealt, swapped, salt),
		"another salt":       domain.CheckSolution(dealt, d.Line, other),
		"another commitment": domain.CheckSolution(tampered, d.Line, salt),
	} {
		if r.OK || r.Problem == "" {
			t.Errorf("%s: %+v", what, r)
		}
	}
	if r := domain.CheckSolution(dealt, d.Line[:len(d.Line)-1], salt); r.Wins {
		t.Error("a line one move short wins")
	}
	line, err := domain.DecodeLine(domain.EncodeLine(d.Line))
	if err != nil || domain.EncodeLine(line) != domain.EncodeLine(d.Line) {
		t.Errorf("the canonical encoding does not round-trip: %v", err)
	}
}

// TestR7_2_SupplyOneDeckFirst: the buffers of one-deck rule sets are
// filled before any multi-deck deal is proven (a multi-deck proof takes
// up to a second; a request for a one-deck deal must not wait behind the
// start-up's), whichever was wanted first, and a request waiting for a
// multi-deck deal still goes first. The workers' choice (next) is asked
// directly, on a supply without workers.
func TestR7_2_SupplyOneDeckFirst(t *testing.T) {
	harp, relaxed, klondike := rulesOf(t, "harp"), rulesOf(t, "relaxed"), rulesOf(t, "klondike")
	s := &Supply{cfg: Config{Buffer: 2}.withDefaults(), shelves: map[domain.Rules]*shelf{}}
	for _, r := range []domain.Rules{harp, relaxed, klondike} {
		s.shelf(key(r)).pinned = true
	}
	pick := func() domain.Rules {
		t.Helper()
		sh, ok := s.next()
		if !ok {
			t.Fatal("next: nothing to prove")
		}
		sh.busy = false
		sh.deals = append(sh.deals, domain.ProvenDeal{})
		return sh.rules
	}
	for i := range 4 { // two for each one-deck buffer
		if r := pick(); r.Decks != 1 {
			t.Fatalf("proof %d is for %s while a one-deck buffer is not full", i+1, r.Variant)
		}
	}
	if r := pick(); r.Variant != "harp" {
		t.Fatalf("with the one-deck buffers full the next proof is for %s, want harp", r.Variant)
	}
	s.shelf(key(relaxed)).deals = nil // taken
	s.shelf(key(harp)).waiting = 2    // two requests wait for harp: they go first
	if r := pick(); r.Variant != "harp" {
		t.Fatalf("a request waits for harp, and the next proof is for %s", r.Variant)
	}
	if r := pick(); r.Variant != "relaxed" {
		t.Fatalf("the next proof is for %s, want relaxed (harp's buffer is full)", r.Variant)
	}
}
