package persistence

import "testing"

// TestSnapshotStep checks where snapshots fall: on every multiple of the
// interval up to 2×snapshotStretch intervals, then ever further apart but
// never more than v/snapshotStretch events behind version v, and few
// enough that the bytes written stay bounded per move in a long game.
func TestSnapshotStep(t *testing.T) {
	for _, every := range []int{1, 7, 100} {
		s := &Store{snapshotEvery: every}
		last, count := 0, 0
		for v := 1; v <= 300_000; v++ {
			if s.snapshotDue(v-1, v) {
				if v%every != 0 {
					t.Fatalf("every %d: snapshot at %d, not a multiple of the interval", every, v)
				}
				last, count = v, count+1
			} else if v < 2*snapshotStretch*every && v%every == 0 {
				t.Fatalf("every %d: no snapshot at %d", every, v)
			}
			if gap := v - last; gap >= every && gap > v/snapshotStretch {
				t.Fatalf("every %d: at version %d the newest snapshot is %d (%d events behind)", every, v, last, gap)
			}
		}
		// A fixed interval would give 300,000/every snapshots, the later
		// ones each holding an undo record ~300,000 turns long.
		if max := 2*snapshotStretch*20 + snapshotStretch; count > max {
			t.Errorf("every %d: %d snapshots in 300,000 events, want at most %d", every, count, max)
		}
		// A batch that jumps over a snapshot point still takes one.
		if !s.snapshotDue(8*every-1, 8*every+2) {
			t.Errorf("every %d: a batch across version %d took no snapshot", every, 8*every)
		}
	}
	if (&Store{}).snapshotDue(99, 100) {
		t.Error("snapshots off (interval 0) but one is due")
	}
}
