package persistence

import (
	"context"
	"sync"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// Snapshots are written after the append that makes them due has
// committed, by one goroutine per store, never in the append itself. A
// snapshot holds the whole state, undo record included, so its size grows
// with the game: in the append it made every SnapshotEvery-th move of a
// long game wait for the encoding and the write of it (the tail of the
// move latency), and on PostgreSQL it kept that move out of the
// one-statement append. Snapshots only save time (Load replays the events
// after the newest usable one), so one that is never written (the queue
// full, the process killed, the write failed) costs a longer replay the
// next time the game is loaded without the cache, and nothing else: Load
// checks every snapshot against the hash of its event.

// snapshotQueue bounds the snapshots waiting to be written; beyond it
// one is skipped (logged at debug level).
const snapshotQueue = 256

// snapshotTimeout bounds the write of one snapshot.
const snapshotTimeout = 30 * time.Second

// snapshotJob is a snapshot to write: state st of game gameID, at
// st.Version, whose event has hash head. st is never changed (a clone, or
// the state cache's own).
type snapshotJob struct {
	gameID string
	head   []byte
	st     *domain.State
}

// snapshotter writes queued snapshots. The zero value is ready; close
// writes what is queued and stops it.
type snapshotter struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when pending drops to 0
	started bool
	closed  bool
	pending int // queued or being written
	queue   chan snapshotJob
	done    chan struct{}
}

// snapshotLater queues the snapshot of st (at st.Version, whose event has
// hash head) for game gameID. st must not change afterwards.
func (s *Store) snapshotLater(gameID string, head []byte, st *domain.State) {
	w := &s.snapshots
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if !w.started {
		w.started = true
		w.idle.L = &w.mu
		w.queue, w.done = make(chan snapshotJob, snapshotQueue), make(chan struct{})
		go s.writeSnapshots()
	}
	select {
	case w.queue <- snapshotJob{gameID: gameID, head: head, st: st}:
		w.pending++
	default:
		s.log.Debug("persistence: snapshot skipped: queue full", "game", gameID, "version", st.Version)
	}
}

// writeSnapshots is the snapshotter's goroutine.
func (s *Store) writeSnapshots() {
	w := &s.snapshots
	defer close(w.done)
	for job := range w.queue {
		ctx, cancel := context.WithTimeout(context.Background(), snapshotTimeout)
		if err := s.writeSnapshot(s.db.WithContext(ctx), job.gameID, job.head, job.st); err != nil {
			s.log.Warn("persistence: snapshot not written", "game", job.gameID, "version", job.st.Version, "err", err)
		}
		cancel()
		w.mu.Lock()
		if w.pending--; w.pending == 0 {
			w.idle.Broadcast()
		}
		w.mu.Unlock()
	}
}

// FlushSnapshots waits until no snapshot is queued or being written (each
// written, or its failure logged), for maintenance tools and tests that
// read the snapshots table; Close writes the queued ones too.
func (s *Store) FlushSnapshots() {
	w := &s.snapshots
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.started && w.pending > 0 {
		w.idle.Wait()
	}
}

// close writes what is queued and stops the goroutine. Idempotent.
func (w *snapshotter) close() {
	w.mu.Lock()
	started, closed := w.started, w.closed
	w.closed = true
	if started && !closed {
		close(w.queue)
	}
	w.mu.Unlock()
	if started && !closed {
		<-w.done
	}
}
