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
