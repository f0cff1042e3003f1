package main

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"

	"github.com/openpatience/solitaire/domain/supply"
)

// TestLoadSupplyConfig: the supply's variables (README "Configuration"),
// their defaults and their bounds.
func TestLoadSupplyConfig(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.supplyOn || c.supply.Workers != 1 || c.supply.Buffer != 0 || c.supply.Wait != 0 || c.supply.Nodes != 0 || c.supply.MultiDeckNodes != 0 || !c.supply.Nice {
		t.Errorf("defaults: %+v on %v", c.supply, c.supplyOn)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_WINNABLE_WORKERS": "2", "SOLITAIRE_WINNABLE_BUFFER": "5",
		"SOLITAIRE_WINNABLE_WAIT": "500ms", "SOLITAIRE_WINNABLE_NODES": "50000",
		"SOLITAIRE_WINNABLE_MULTIDECK_NODES": "1500000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.supply.Workers != 2 || c.supply.Buffer != 5 || c.supply.Wait != 500*time.Millisecond || c.supply.Nodes != 50000 ||
		c.supply.MultiDeckNodes != 1_500_000 {
		t.Errorf("from env: %+v", c.supply)
	}
	if c, err = loadConfig(env(map[string]string{"SOLITAIRE_WINNABLE_WORKERS": "0"})); err != nil || c.supplyOn {
		t.Errorf("workers 0: on %v, %v", c.supplyOn, err)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_WINNABLE_WORKERS": "-1"}, {"SOLITAIRE_WINNABLE_WORKERS": "9"},
		{"SOLITAIRE_WINNABLE_BUFFER": "0"}, {"SOLITAIRE_WINNABLE_BUFFER": "x"},
		{"SOLITAIRE_WINNABLE_WAIT": "11s"}, {"SOLITAIRE_WINNABLE_WAIT": "soon"},
		{"SOLITAIRE_WINNABLE_NODES": "10"}, {"SOLITAIRE_WINNABLE_NODES": "3000000"},
		{"SOLITAIRE_WINNABLE_MULTIDECK_NODES": "99999"}, {"SOLITAIRE_WINNABLE_MULTIDECK_NODES": "2000001"},
	} {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// rulesOf is variant's default rules.
func rulesOf(t *testing.T, variant string) domain.Rules {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(domain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestR7_2_SupplyAtStartUp: the server's supply is the games' Dealer and
// begins at once with the default rules of every variant, Harp and
// Tripleharp included (the daily deals; klassik is also the duels'
// default), so the day's first daily game finds a deal.
func TestR7_2_SupplyAtStartUp(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	games := &app.Games{}
	stop := startSupply(c, games, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	s, ok := games.Dealer.(*supply.Supply)
	if !ok {
		t.Fatalf("Dealer %T", games.Dealer)
	}
	var want []domain.Rules
	for _, v := range domain.Variants() {
		rules, _, err := v.Resolve(domain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rules.TimeLimitS = 0 // as the supply keys its buffers
		want = append(want, rules)
	}
	got := s.Wanted()
	key := func(r domain.Rules) string { return fmt.Sprint(r) }
	slices.SortFunc(got, func(a, b domain.Rules) int { return strings.Compare(key(a), key(b)) })
	slices.SortFunc(want, func(a, b domain.Rules) int { return strings.Compare(key(a), key(b)) })
	if !slices.Equal(got, want) || len(want) != 6 {
		t.Errorf("proving for %v, want the default rules of the six variants %v", got, want)
	}
	// relaxed, the daily deal whose proofs take milliseconds, is ready
	// soon; the strict variants take seconds each (far more under -race).
	relaxed := rulesOf(t, "relaxed")
	t0 := time.Now()
	for s.Ready(relaxed) < 1 {
		if time.Since(t0) > 3*time.Minute {
			proven, tried := s.Counts()
			t.Fatalf("no relaxed deal after 3 minutes (%d proven of %d tried)", proven, tried)
		}
		time.Sleep(20 * time.Millisecond)
	}
	proven, tried := s.Counts()
	t.Logf("a relaxed deal after %v: %d proven of %d tried", time.Since(t0).Round(time.Millisecond), proven, tried)
	c.supplyOn = false
	off := &app.Games{}
	startSupply(c, off, slog.New(slog.NewTextHandler(io.Discard, nil)))()
	if off.Dealer != nil {
		t.Error("a Dealer with the supply off")
	}
}
