package solver

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// searchVerdict searches s once, with or without restarts, and reports
// the verdict and the restarts made.
func searchVerdict(s *domain.State, b Budget, restarts bool) (Verdict, int) {
	g, ok := fromState(s)
	if !ok {
		return Unknown, 0
	}
	g.sw.noRestart = !restarts
	sr := newSearch(context.Background(), g, b.withDefaults(), time.Now())
	v := verdictOf(sr)
	if v == Winnable {
		if _, ok := verify(s, sr.line()); !ok {
			return Unknown, sr.restart
		}
	}
	return v, sr.restart
}

// R7.1: restarts (search.run) lose nothing: on positions of seeded deals
// after random play, every variant of the table's one-deck Klondikes, the
// verdict with restarts equals the verdict of one attempt wherever both
// finish, winning lines replay to a win, and enough of the positions made
// restarts (more than 10,000 nodes) that both kinds of verdict are
// tested after one.
func TestR71RestartsKeepVerdicts(t *testing.T) {
	t.Parallel()
	want := 16
	if raceBuild || testing.Short() {
		want = 6
	}
	type variant struct {
		id   string
		draw int
	}
	variants := []variant{{"relaxed", 1}, {"relaxed", 3}, {"klondike", 1}, {"klondike-draw3", 3}}
	b := Budget{Nodes: 300_000, Time: time.Hour}
	rng := rand.New(rand.NewPCG(17, 4))
	restarted, wins, losses := 0, 0, 0
	for n := 0; n < 40*want && (restarted < want || wins == 0 || losses == 0); n++ {
		v := variants[n%len(variants)]
		s := walk(rng, seeded(t, v.id, domain.Options{Draw: &v.draw}, uint64(5000+n)), rng.IntN(20))
		on, restarts := searchVerdict(s, b, true)
		if restarts == 0 {
			continue // decided within the first attempt: nothing to compare
		}
		off, _ := searchVerdict(s, b, false)
		if on == Unknown || off == Unknown {
			continue
		}
		if on != off {
			t.Fatalf("%s draw %d, seed %d: %s with %d restarts, %s in one attempt\n%s",
				v.id, v.draw, 5000+n, on, restarts, off, s.Board(true))
		}
		restarted++
		if on == Winnable {
			wins++
		} else {
			losses++
		}
	}
	if restarted < want || wins == 0 || losses == 0 {
		t.Fatalf("%d positions with restarts decided both ways (want %d), %d winnable, %d not", restarted, want, wins, losses)
	}
	t.Logf("%d positions with restarts decided both ways: %d winnable, %d unwinnable", restarted, wins, losses)
}

// The table's deletion keeps every other key reachable: random keys in a
// small table (long probe runs, wrapping at the end), a third of them
// removed in random order, each key then found exactly when it was kept.
func TestTableRemove(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		tb := newTable(4)
		var keys []uint64
		for i := 0; i < 200; i++ {
			// Homes 508..511 and 0..3 of the final 512 slots (a key's
			// top 9 bits): long runs that wrap around the table's end.
			home := uint64(508+rng.IntN(8)) % 512
			k := home<<55 | rng.Uint64()>>9
			if tb.insert(k) {
				keys = append(keys, k)
			}
		}
		removed := map[uint64]bool{}
		for _, i := range rng.Perm(len(keys))[:len(keys)/3] {
			tb.remove(keys[i])
			removed[keys[i]] = true
		}
		if len(tb.slots) != 512 {
			t.Fatalf("table of %d slots, the test wants 512", len(tb.slots))
		}
		tb.remove(509<<55 | 12345) // absent: nothing happens
		if tb.n != len(keys)-len(removed) {
			t.Fatalf("round %d: %d keys counted, want %d", round, tb.n, len(keys)-len(removed))
		}
		for _, k := range keys {
			// insert reports true for a key that was not there (and puts it back)
			if fresh := tb.insert(k); fresh != removed[k] {
				t.Fatalf("round %d: key %x found %v, removed %v", round, k, !fresh, removed[k])
			}
		}
	}
}
