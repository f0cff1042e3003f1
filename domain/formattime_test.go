package domain

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestFormatTimeIsTimeFormat (R5.1) holds FormatTime's own digits to
// time.Format with its layout, since the text is part of every event's
// hash: random instants in several zones across years 0..9999, the
// edges of that range and past them (where FormatTime defers to
// time.Format), sub-millisecond parts that must be truncated, not
// rounded, and the zero time.
func TestFormatTimeIsTimeFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -(12*3600 + 30*60))}
	check := func(tm time.Time) {
		t.Helper()
		if got, want := FormatTime(tm), tm.UTC().Format(timeLayout); got != want {
			t.Fatalf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 100_000 {
		tm := time.Unix(lo+r.Int64N(hi-lo), r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		check(tm)
	}
	for _, tm := range []time.Time{
		{},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 11, 29, 12, 30, 1, 123_999_999, time.UTC),
		time.Date(2026, 11, 29, 23, 30, 1, 5_000_000, zones[1]),
		time.UnixMilli(0),
	} {
		check(tm)
	}
	if got := FormatTime(time.Date(2026, 11, 29, 12, 30, 1, 123_999_999, time.UTC)); got != "2026-11-29T12:30:01.123Z" {
		t.Fatalf("truncation: %q", got)
	}
}

// BenchmarkFormatTime is one event time's text.
func BenchmarkFormatTime(b *testing.B) {
	tm := time.Date(2026, 11, 29, 12, 30, 1, 123_456_789, time.UTC)
	for b.Loop() {
		_ = FormatTime(tm)
	}
}
