package persistence_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestReadReplica: with Config.ReadURL a hot standby of the database, a
// game's events and its audit are read from the standby once it has
// replayed them, and from the primary while it has not (replay paused):
// a read never shows less than the moves already answered.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t)
	s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: primary.URL, ReadURL: standby.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admin, err := sql.Open("pgx", standby.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	g, id := notifyGame(t, s)
	check := func(when string, moves int) {
		t.Helper()
		recs, err := s.Events(t.Context(), id, 0, 0)
		if err != nil || len(recs) != moves+1 {
			t.Fatalf("%s: %d events (%v), want %d", when, len(recs), err, moves+1)
		}
		if bad, err := s.VerifyChain(t.Context(), id); err != nil || bad != 0 {
			t.Fatalf("%s: chain broken at %d (%v)", when, bad, err)
		}
	}
	moves := 0
	for range 15 {
		draw(t, g, id)
		moves++
		check("replaying", moves) // right after the answer: replica or primary, never short
	}
	if st := s.ReadStats(); st.Served+st.Behind != 30 {
		t.Errorf("read stats %+v: want 30 reads in all", st)
	}

	if _, err := admin.Exec(`SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	before := s.ReadStats()
	for range 5 {
		draw(t, g, id)
		moves++
		check("replay paused", moves)
	}
	if st := s.ReadStats(); st.Behind-before.Behind != 10 || st.Served != before.Served {
		t.Errorf("replay paused: read stats %+v, before %+v; want every read on the primary", st, before)
	}
	if _, err := admin.Exec(`SELECT pg_wal_replay_resume()`); err != nil {
		t.Fatal(err)
	}
	before = s.ReadStats()
	for {
		check("replay resumed", moves)
		if s.ReadStats().Served > before.Served {
			break // the standby caught up and serves again
		}
	}
	t.Logf("read stats %+v", s.ReadStats())
	if _, err := s.Leaderboard(t.Context(), "klondike", 1, false, time.Time{}, time.Time{}, 10); err != nil {
		t.Fatal(err)
	}
}
