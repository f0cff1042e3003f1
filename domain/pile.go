package domain

import (
	"strconv"
	"strings"
)

// PileKind names the kind of a pile (R1.3). Values are persisted: do not
// reorder.
type PileKind uint8

// The pile kinds of R1.3.
const (
	NoPile PileKind = iota
	Stock
	Waste
	Foundation
	Tableau
)

var pileKindNames = [...]string{"", "stock", "waste", "foundation", "tableau"}

// String is the pile kind's name as used in pile references: "stock",
// "waste", "foundation", "tableau" ("" for NoPile).
func (k PileKind) String() string {
	if int(k) < len(pileKindNames) {
		return pileKindNames[k]
	}
	return ""
}

// AnyFoundation is the Index of a PileRef{Kind: Foundation} that names no
// particular foundation: "whichever foundation takes it" (R2.2).
const AnyFoundation = -1

// PileRef names one pile: Kind plus a 0-based Index for foundations
// (0..foundations-1, or AnyFoundation) and tableau piles (0..piles-1).
// Index is 0 for stock and waste. The zero value names no pile.
type PileRef struct {
	Kind  PileKind
	Index int
}

// Pile references for the singletons and constructors for indexed piles.
var (
	StockPile = PileRef{Kind: Stock}
	WastePile = PileRef{Kind: Waste}
)

// TableauRef returns the reference of tableau pile i (0-based).
func TableauRef(i int) PileRef { return PileRef{Kind: Tableau, Index: i} }

// FoundationRef returns the reference of foundation i (0-based), or of
// "whichever foundation takes it" for AnyFoundation.
func FoundationRef(i int) PileRef { return PileRef{Kind: Foundation, Index: i} }

// String is the API spelling of the reference: "stock", "waste",
// "foundation" (any), "foundation/<i>", "tableau/<i>"; "" for no pile.
func (p PileRef) String() string {
	switch p.Kind {
	case Stock, Waste:
		return p.Kind.String()
	case Foundation:
		if p.Index == AnyFoundation {
			return "foundation"
		}
		return "foundation/" + strconv.Itoa(p.Index)
	case Tableau:
		return "tableau/" + strconv.Itoa(p.Index)
	}
	return ""
}

// IsZero reports whether p names no pile.
func (p PileRef) IsZero() bool { return p.Kind == NoPile }

// MarshalText encodes the reference as String does ("" for no pile).
func (p PileRef) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a reference; see ParsePileRef. The empty string
// decodes to the zero PileRef.
func (p *PileRef) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*p = PileRef{}
		return nil
	}
	v, err := ParsePileRef(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// maxPileIndex bounds indices accepted by ParsePileRef; no variant has more
// than this many piles of one kind. Whether an index exists in a given game
// is checked against its rules when a move is decided.
const maxPileIndex = 99

// ParsePileRef parses "stock", "waste", "foundation", "foundation/<i>" or
// "tableau/<i>" with i a decimal 0..99 without sign or leading zeros. Any
// other input returns a *MoveError with reason ReasonBadPile.
func ParsePileRef(s string) (PileRef, error) {
	bad := &MoveError{Reason: ReasonBadPile, Detail: "unknown pile " + quoteShort(s) +
		`: want "stock", "waste", "foundation", "foundation/<i>" or "tableau/<i>"`}
	switch s {
	case "stock":
		return StockPile, nil
	case "waste":
		return WastePile, nil
	case "foundation":
		return FoundationRef(AnyFoundation), nil
	}
	kind, num, ok := strings.Cut(s, "/")
	if !ok || num == "" || len(num) > 2 || (len(num) > 1 && num[0] == '0') {
		return PileRef{}, bad
	}
	i := 0
	for _, ch := range []byte(num) {
		if ch < '0' || ch > '9' {
			return PileRef{}, bad
		}
		i = i*10 + int(ch-'0')
	}
	switch kind {
	case "foundation":
		return FoundationRef(i), nil
	case "tableau":
		return TableauRef(i), nil
	}
	return PileRef{}, bad
}
