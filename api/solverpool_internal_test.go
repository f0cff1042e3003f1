package api

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain/solver"
)

// granted reports whether w has been given a worker.
func granted(w *solverWaiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// queue admits a search of client that must wait, and fails unless it
// does.
func queue(t *testing.T, p *SolverPool, client string) *solverWaiter {
	t.Helper()
	w, err := p.admit(solverKey{player: client})
	if err != nil || w == nil {
		t.Fatalf("%s: %v, started %v; want a place in the queue", client, err, w == nil)
	}
	return w
}

// run admits a search of client that must start at once.
func run(t *testing.T, p *SolverPool, client string) {
	t.Helper()
	if w, err := p.admit(solverKey{player: client}); err != nil || w != nil {
		t.Fatalf("%s: %v, queued %v; want a worker at once", client, err, w != nil)
	}
}

// refuse admits a search of client that must be refused with want
// (ErrSolverBusy, or any *TooManySearchesError for nil).
func refuse(t *testing.T, p *SolverPool, client string, want error) {
	t.Helper()
	w, err := p.admit(solverKey{player: client})
	var share *TooManySearchesError
	if w != nil || (want == nil && !errors.As(err, &share)) || (want != nil && !errors.Is(err, want)) {
		t.Fatalf("%s: %v, queued %v; want a refusal (%v)", client, err, w != nil, want)
	}
}

// playerShare is the default share of a player, with no address share:
// the tests of the player's share, whose searches name no address.
var playerShare = SolverShare{Running: DefaultSolverRunningPerClient, Queued: DefaultSolverQueuePerClient}

// TestSolverPoolRoundRobin: with one worker, the queue is served by
// client in turn, the client served least recently first (in order of
// arrival between clients never served), not in order of arrival: a
// search waits behind at most one search of each other client.
func TestSolverPoolRoundRobin(t *testing.T) {
	p := NewSolverPool(1, 10, SolverShare{Running: 1, Queued: 2})
	run(t, p, "a")
	waiting := map[*solverWaiter]string{}
	for _, c := range []string{"a", "a", "b", "c", "b"} { // a FIFO queue would serve them in this order
		waiting[queue(t, p, c)] = c
	}
	refuse(t, p, "a", nil) // a holds 1 running and 2 waiting: its share
	var order []string
	for current := "a"; len(waiting) > 0; {
		p.release(solverKey{player: current})
		var next []string
		for w, c := range waiting {
			if granted(w) {
				next = append(next, c)
				delete(waiting, w)
			}
		}
		if len(next) != 1 {
			t.Fatalf("after %v, %d searches given the worker: %v", order, len(next), next)
		}
		current = next[0]
		order = append(order, current)
	}
	if got, want := fmt.Sprint(order), "[b c a b a]"; got != want {
		t.Errorf("served %s, want %s", got, want)
	}
	p.release(solverKey{player: order[len(order)-1]})
	if p.running != 0 || len(p.waiting) != 0 || len(p.clients) != 0 {
		t.Errorf("idle pool: %d running, %d waiting, %d clients", p.running, len(p.waiting), len(p.clients))
	}
}

// TestSolverPoolShares: a client never runs more than its running share,
// even with a worker free, nor queues more than its queue share (a
// *TooManySearchesError saying the share); other clients take the free
// workers; a full queue refuses with ErrSolverBusy, as does a client with
// nothing held and no queue share; a worker freed goes to the client whose
// turn it is among those below their running share.
func TestSolverPoolShares(t *testing.T) {
	p := NewSolverPool(2, 3, playerShare)
	run(t, p, "a")
	wa := queue(t, p, "a") // a worker is free, but a runs its share
	_, err := p.admit(solverKey{player: "a"})
	var share *TooManySearchesError
	if !errors.As(err, &share) || *share != (TooManySearchesError{Running: 1, Queued: 1, Per: "player"}) {
		t.Errorf("a's third search: %v", err)
	}
	run(t, p, "b")
	wc, wd := queue(t, p, "c"), queue(t, p, "d")
	refuse(t, p, "e", ErrSolverBusy) // the queue holds a, c and d
	p.release(solverKey{player: "b"})
	if !granted(wc) || granted(wa) || granted(wd) {
		t.Errorf("b's worker went to a %v, c %v, d %v; want c (a runs its share)", granted(wa), granted(wc), granted(wd))
	}
	p.release(solverKey{player: "a"})
	if !granted(wd) || granted(wa) {
		t.Errorf("a's worker went to a %v, d %v; want d (never served, a was)", granted(wa), granted(wd))
	}
	p.release(solverKey{player: "c"})
	if !granted(wa) {
		t.Error("c's worker did not go to a")
	}
	p.release(solverKey{player: "a"})
	p.release(solverKey{player: "d"})

	q := NewSolverPool(1, 4, SolverShare{}) // Running 1, Queued 0
	if q.share != (SolverShare{Running: 1}) {
		t.Errorf("share %+v, want 1 running and none waiting", q.share)
	}
	run(t, q, "x")
	refuse(t, q, "y", ErrSolverBusy) // no queue share, nothing held: the pool is busy
	refuse(t, q, "x", nil)
	q.release(solverKey{player: "x"})
	run(t, q, "y")
}

// TestSolverPoolAddressShare: the players of one address together hold at
// most the address's share (a *TooManySearchesError per address beyond
// it), even with a worker free; the queue is served by address first, so
// another address's search passes the waiting searches of an address
// already served; with no address share, the address is not counted.
func TestSolverPoolAddressShare(t *testing.T) {
	p := NewSolverPool(3, 10, DefaultSolverShare())
	at := func(player, address string) solverKey { return solverKey{address: address, player: player} }
	for _, k := range []solverKey{at("a1", "A"), at("a2", "A")} {
		if w, err := p.admit(k); err != nil || w != nil {
			t.Fatalf("%v: %v, queued %v; want a worker", k, err, w != nil)
		}
	}
	wa3, err := p.admit(at("a3", "A")) // a worker is free, but A runs its share
	if err != nil || wa3 == nil {
		t.Fatalf("a3: %v, started %v; want a place in the queue", err, wa3 == nil)
	}
	wa4, _ := p.admit(at("a4", "A"))
	_, err = p.admit(at("a5", "A"))
	var share *TooManySearchesError
	if !errors.As(err, &share) || *share != (TooManySearchesError{Running: 2, Queued: 2, Per: "address"}) {
		t.Errorf("a5, A's fifth search: %v", err)
	}
	if w, err := p.admit(at("b1", "B")); err != nil || w != nil {
		t.Fatalf("b1: %v, queued %v; want the free worker", err, w != nil)
	}
	wb2, _ := p.admit(at("b2", "B"))
	p.release(at("b1", "B"))
	if !granted(wb2) || granted(wa3) || granted(wa4) {
		t.Errorf("b1's worker went to b2 %v, a3 %v, a4 %v; want b2 (A runs its share)", granted(wb2), granted(wa3), granted(wa4))
	}
	wb3, _ := p.admit(at("b3", "B")) // no worker free: it waits
	p.release(at("a1", "A"))
	if !granted(wa3) || granted(wa4) || granted(wb3) {
		t.Errorf("a1's worker went to a3 %v, a4 %v, b3 %v; want a3 (A and B run one each, A was served less recently)",
			granted(wa3), granted(wa4), granted(wb3))
	}
	for _, k := range []solverKey{at("a2", "A"), at("a3", "A"), at("b2", "B")} {
		p.release(k)
	}
	for _, w := range []*solverWaiter{wa4, wb3} {
		if !granted(w) {
			t.Errorf("a waiting search never had a worker")
		}
	}
	p.release(at("a4", "A"))
	p.release(at("b3", "B"))
	if p.running != 0 || len(p.waiting) != 0 || len(p.clients) != 0 {
		t.Errorf("idle pool: %d running, %d waiting, %d clients", p.running, len(p.waiting), len(p.clients))
	}

	q := NewSolverPool(3, 10, SolverShare{Running: 1, Queued: 1}) // no address share
	for _, k := range []solverKey{at("a1", "A"), at("a2", "A"), at("a3", "A")} {
		if w, err := q.admit(k); err != nil || w != nil {
			t.Fatalf("no address share, %v: %v, queued %v; want a worker", k, err, w != nil)
		}
	}
}

// TestSolverPoolLeave: a waiting search that leaves gives its queue place
// back at once and is forgotten; one given a worker as it leaves must
// release it; Solve whose context ends while it waits returns ctx.Err()
// and leaves the queue.
func TestSolverPoolLeave(t *testing.T) {
	p := NewSolverPool(1, 1, playerShare)
	run(t, p, "a")
	wb := queue(t, p, "b")
	refuse(t, p, "c", ErrSolverBusy)
	if !p.leave(wb) {
		t.Fatal("a waiting search could not leave")
	}
	if _, ok := p.clients["player:b"]; ok || len(p.waiting) != 0 {
		t.Errorf("after leaving: b kept %v, %d waiting", ok, len(p.waiting))
	}
	wc := queue(t, p, "c")
	p.release(solverKey{player: "a"})
	if !granted(wc) || p.leave(wc) {
		t.Fatal("a search given a worker left the queue as if waiting")
	}
	p.release(solverKey{player: "c"})
	if p.running != 0 || len(p.clients) != 0 {
		t.Errorf("idle pool: %d running, %d clients", p.running, len(p.clients))
	}

	run(t, p, "a")
	ctx, cancel := context.WithCancel(WithSolverClient(context.Background(), "b"))
	done := make(chan error, 1)
	go func() {
		_, err := p.Solve(ctx, nil, solver.Budget{Time: time.Second}) // never searched: it waits until cancelled
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		n := len(p.waiting)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Solve never waited")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Solve cancelled while waiting: %v", err)
	}
	if _, ok := p.clients["player:b"]; ok || len(p.waiting) != 0 {
		t.Errorf("after Solve left: b kept %v, %d waiting", ok, len(p.waiting))
	}
	p.release(solverKey{player: "a"})
}

// TestSolverPoolConcurrent: many clients (8 players on 3 addresses)
// admitting, waiting, leaving and releasing at once never pass the
// workers, the queue or a share (a player's or an address's), and leave
// the pool idle.
func TestSolverPoolConcurrent(t *testing.T) {
	const workers, queued = 3, 5
	share := DefaultSolverShare()
	p := NewSolverPool(workers, queued, share)
	check := func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.running > workers || len(p.waiting) > queued {
			t.Errorf("%d running, %d waiting", p.running, len(p.waiting))
		}
		for k, c := range p.clients {
			running, queued, _ := p.shareOf(k)
			if c.running > running || c.waiting > queued {
				t.Errorf("client %s: %d running, %d waiting", k, c.running, c.waiting)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			client := solverKey{address: string(rune('A' + g%3)), player: string(rune('a' + g%8))}
			for range 300 {
				w, err := p.admit(client)
				if err != nil {
					continue
				}
				if w != nil {
					if rnd.IntN(3) == 0 && p.leave(w) {
						continue
					}
					<-w.ready
				}
				check()
				p.release(client)
			}
		}()
	}
	wg.Wait()
	if p.running != 0 || len(p.waiting) != 0 || len(p.clients) != 0 {
		t.Errorf("idle pool: %d running, %d waiting, %d clients", p.running, len(p.waiting), len(p.clients))
	}
}
