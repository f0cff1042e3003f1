package domain

import (
	"fmt"
	"strings"
)

// Board renders s as plain text for people (the replay tool, logs): a
// header, a line for stock and waste, a line with each foundation's top
// card, one line per tableau pile bottom first. Face-down cards print as
// "##", or in lower case when reveal is true; the stock's cards (drawn
// first, first) are listed only when reveal is true.
//
//	klondike  version 12  moves 9  in_progress
//	stock 20  waste 3H 9C  passes 1/1
//	foundations 2S | -- | -- | --
//	tableau/0  KH QS
//	tableau/1  ## ## 7D
func (s *State) Board(reveal bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  version %d  moves %d  %s\n", s.Rules.Variant, s.Version, s.Moves, s.Status)
	fmt.Fprintf(&b, "stock %d", len(s.Stock))
	if reveal && len(s.Stock) > 0 {
		fmt.Fprintf(&b, " %v", reversed(s.Stock))
	}
	b.WriteString("  waste")
	writeCardsSpaced(&b, s.Waste)
	if s.Rules.Passes > 0 {
		fmt.Fprintf(&b, "  passes %d/%d\n", s.Recycles+1, s.Rules.Passes)
	} else {
		fmt.Fprintf(&b, "  passes %d/unlimited\n", s.Recycles+1)
	}
	b.WriteString("foundations")
	for i, f := range s.Foundations {
		if i > 0 {
			b.WriteString(" |")
		}
		if len(f) == 0 {
			b.WriteString(" --")
		} else {
			writeCardsSpaced(&b, f[len(f)-1:])
		}
	}
	b.WriteByte('\n')
	for i, p := range s.Tableau {
		fmt.Fprintf(&b, "tableau/%d ", i)
		for k, c := range p.Cards {
			if k < p.Down && !reveal {
				b.WriteString(" ##")
			} else if k < p.Down {
				b.WriteString(" " + strings.ToLower(c.String()))
			} else {
				b.WriteString(" " + c.String())
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func writeCardsSpaced(b *strings.Builder, cards []Card) {
	if len(cards) == 0 {
		b.WriteString(" -")
	}
	for _, c := range cards {
		b.WriteString(" " + c.String())
	}
}
