package domaintest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/openpatience/solitaire/domain"
)

// SolvedDeal is one line of testdata/klondike-solved-draw*.jsonl: a
// Klondike deal and a winning line for it from an independent solver (see
// testdata/README.md for the source and the token grammar). Tableau piles
// list their cards bottom first, the last FaceUp[i] of pile i face up;
// Stock is drawn first, first.
type SolvedDeal struct {
	ID       string     `json:"id"`
	Draw     int        `json:"draw"` // 1 or 3
	Tableau  [][]string `json:"tableau"`
	FaceUp   []int      `json:"face_up"`
	Stock    []string   `json:"stock"`
	Solution []string   `json:"solution"`
}

// LoadSolved reads a JSON-lines file of SolvedDeal. Errors: the file's, a
// line that does not decode, a file without deals.
func LoadSolved(path string) ([]SolvedDeal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []SolvedDeal
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var d SolvedDeal
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(out)+1, err)
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no deals", path)
	}
	return out, nil
}

// Position is the deal as a domain position (four empty foundations).
// Errors: a card code that does not parse (R1.1).
func (d SolvedDeal) Position() (domain.Position, error) {
	var bad error
	cards := func(codes []string) []domain.Card {
		out := make([]domain.Card, len(codes))
		for i, s := range codes {
			c, err := domain.ParseCard(s)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s: %w", d.ID, err)
			}
			out[i] = c
		}
		return out
	}
	p := domain.Position{Stock: cards(d.Stock), Foundations: make([][]domain.Card, 4)}
	for k, pile := range d.Tableau {
		all := cards(pile)
		n := len(all) - d.FaceUp[k]
		p.Tableau = append(p.Tableau, domain.PileLayout{Down: all[:n], Up: all[n:]})
	}
	return p, bad
}

// Strict reports whether the line needs neither a recycle ("NEW") nor a
// take-back (a suit letter followed by a tableau digit): whether strict
// Klondike (one pass, no take-back, R3) can play it.
func (d SolvedDeal) Strict() bool {
	for _, tok := range d.Solution {
		if tok == "NEW" || (strings.ContainsRune("CDHS", rune(tok[0])) && len(tok) > 1 && tok[1] >= '1' && tok[1] <= '7') {
			return false
		}
	}
	return true
}
