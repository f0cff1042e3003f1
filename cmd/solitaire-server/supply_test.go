package main

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// TestLoadSupplyConfig: the supply's variables (README "Configuration"),
// their defaults and their bounds.
func TestLoadSupplyConfig(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.supplyOn || c.supply.Workers != 1 || c.supply.Buffer != 0 || c.supply.Wait != 0 || c.supply.Nodes != 0 || !c.supply.Nice {
		t.Errorf("defaults: %+v on %v", c.supply, c.supplyOn)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_WINNABLE_WORKERS": "2", "SOLITAIRE_WINNABLE_BUFFER": "5",
		"SOLITAIRE_WINNABLE_WAIT": "500ms", "SOLITAIRE_WINNABLE_NODES": "50000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.supply.Workers != 2 || c.supply.Buffer != 5 || c.supply.Wait != 500*time.Millisecond || c.supply.Nodes != 50000 {
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
	} {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestR7_2_SupplyAtStartUp: the server's supply is the games' Dealer and
// begins at once with the default rules of every one-deck variant (the
// daily deals; klassik is also the duels' default), so the day's first
// daily game finds a deal; multi-deck variants get none.
func TestR7_2_SupplyAtStartUp(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	games := &domain.Games{}
	stop := startSupply(c, games, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	s, ok := games.Dealer.(*solver.Supply)
	if !ok {
		t.Fatalf("Dealer %T", games.Dealer)
	}
	t0 := time.Now()
	deadline := t0.Add(3 * time.Minute)
	for _, v := range domain.Variants() {
		rules, _, err := v.Resolve(domain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rules.OneDeck() {
			if s.Ready(rules) != 0 {
				t.Errorf("%s: proven deals of a multi-deck variant", v.ID)
			}
			continue
		}
		for s.Ready(rules) < 1 {
			if time.Now().After(deadline) {
				proven, tried := s.Counts()
				t.Fatalf("%s: no proven deal after 3 minutes (%d proven of %d tried)", v.ID, proven, tried)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	proven, tried := s.Counts()
	t.Logf("a deal of every one-deck variant after %v: %d proven of %d tried", time.Since(t0).Round(time.Millisecond), proven, tried)
	c.supplyOn = false
	off := &domain.Games{}
	startSupply(c, off, slog.New(slog.NewTextHandler(io.Discard, nil)))()
	if off.Dealer != nil {
		t.Error("a Dealer with the supply off")
	}
}
