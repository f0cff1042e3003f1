package app

import (
	"strings"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// t0 is the service tests' clock start; sec(n) is n seconds after it.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func sec(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Second))) }

func ptr[T any](v T) *T { return &v }

var mvDraw = domain.Move{Type: domain.MoveDraw}

// emptyPiles is n empty tableau piles in the position notation.
func emptyPiles(n int) string { return strings.TrimSuffix(strings.Repeat(":/", n), "/") }

// foundUpto is foundations holding each suit's cards from the ace up to
// the given top ("KH"), "-" for an empty one, in the position notation.
func foundUpto(tops ...string) string {
	out := make([]string, len(tops))
	for i, top := range tops {
		if top == "-" {
			out[i] = "-"
			continue
		}
		a, _ := domain.ParseCard("A" + top[1:])
		b, _ := domain.ParseCard(top)
		var sb strings.Builder
		for c := a; c <= b; c++ {
			sb.WriteString(c.String())
		}
		out[i] = sb.String()
	}
	return strings.Join(out, "/")
}
