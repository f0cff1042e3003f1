// Package supply keeps proven winnable deals ready (RULES R7.2): Supply is
// the app.Dealer the services take deals from, filled in the background
// by proofs of the solver (solver.Prove), so no request waits for a search.
// It is a service beside the search engine, not part of it: standard
// library, domain and domain/solver only.
package supply

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// Defaults of a Supply (Config's zero fields).
const (
	// DefaultWorkers is how many goroutines prove deals: one, so the
	// supply never takes more than one of the server's cores.
	DefaultWorkers = 1
	// DefaultBuffer is how many proven deals a Supply keeps ready
	// per rule set: two, today's and tomorrow's daily deal.
	DefaultBuffer = 2
	// DefaultWait is the longest a request waits for a proven deal
	// when none is ready (Config.Wait).
	DefaultWait = 2 * time.Second
	// DefaultRetryAfter is the Retry-After a request that found no
	// deal in time is told.
	DefaultRetryAfter = 5 * time.Second
	// DefaultProofNodes is the node budget of one proof attempt of a
	// one-deck deal: a deal the search does not win within it is skipped
	// (never counted unwinnable) and the next seed tried. Far below
	// solver.DifficultyNodes, so an attempt costs well under a second on
	// the strict variants; the nodes to the first solution, and so the
	// band (R7.5), do not depend on the budget (the search order is
	// fixed), only which deals are kept: bands beyond this budget's reach
	// ("expert" above it) are not dealt. See README "Winnable deals" for
	// the distribution.
	DefaultProofNodes = 200_000
	// DefaultMultiDeckProofNodes is the node budget of one proof attempt
	// of a Harp or Tripleharp deal (two or three decks), whose won lines
	// are hundreds of moves long and whose searches take thousands of
	// positions even for the easiest deals: the whole of
	// solver.DifficultyNodes, so every band is dealt. On seeds 1-200 it
	// wins 95.5 % of Harp deals and 97 % of Tripleharp deals, so a proven
	// Harp deal costs about 0.43 M positions (0.14 s of one core) and a
	// Tripleharp deal about 0.53 M (0.15 s); BENCHMARKS.md "Harp and
	// Tripleharp".
	DefaultMultiDeckProofNodes = solver.DifficultyNodes
	// DefaultKeys bounds the rule sets a Supply keeps a buffer for;
	// beyond it the one asked for least recently (and not pinned by Want)
	// is dropped.
	DefaultKeys = 64
)

// Config configures a Supply; a zero field takes its default.
type Config struct {
	Workers    int           // goroutines proving deals, default DefaultWorkers
	Buffer     int           // proven deals kept ready per rule set, default DefaultBuffer
	Wait       time.Duration // longest wait of ProvenDeal for an empty buffer, default DefaultWait
	RetryAfter time.Duration // told to a request that waited in vain, default DefaultRetryAfter
	Nodes      int64         // node budget of one proof attempt of a one-deck deal, default DefaultProofNodes
	// MultiDeckNodes is the node budget of one proof attempt of a deal
	// of two or three decks, default DefaultMultiDeckProofNodes.
	MultiDeckNodes int64
	MaxKeys        int // rule sets kept, default DefaultKeys
	// Random is the source of the secret seeds (domain.SecretSeed),
	// default crypto/rand.Reader: the generator the competitions use.
	Random io.Reader
	// Nice lowers the priority of the proving threads below the
	// requests' where the system allows it (Linux: nice 10). Default
	// false; the server sets it.
	Nice bool
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.Buffer <= 0 {
		c.Buffer = DefaultBuffer
	}
	if c.Wait <= 0 {
		c.Wait = DefaultWait
	}
	if c.RetryAfter < time.Second {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.Nodes <= 0 {
		c.Nodes = DefaultProofNodes
	}
	if c.MultiDeckNodes <= 0 {
		c.MultiDeckNodes = DefaultMultiDeckProofNodes
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = DefaultKeys
	}
	if c.Random == nil {
		c.Random = rand.Reader
	}
	return c
}

// Supply is an app.Dealer: per rule set (a variant's resolved rules) a
// small buffer of secret seeds already proven winnable (R7.2), each with
// its winning line, the nodes its search took and its band (R7.5), filled
// in the background by a bounded number of goroutines. A request takes a
// deal from the buffer and waits only a short bound when it is empty, so
// no request waits long for a proof.
//
// Proofs use a node budget and no time limit, so which deals are kept and
// their bands are the same on any machine; only how fast the buffer fills
// depends on it. A rule set is proven for once something asks for it
// (ProvenDeal) or Want names it (the server names the daily deals' and the
// duels' default rules at start-up).
type Supply struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // a buffer wants filling

	mu      sync.Mutex
	shelves map[domain.Rules]*shelf
	turn    int // round-robin position over keys

	proven, tried atomic.Int64
}

// shelf is the buffer of one rule set.
type shelf struct {
	rules   domain.Rules
	deals   []domain.ProvenDeal
	ready   chan struct{} // closed (and replaced) when a deal is added
	waiting int           // requests waiting for a deal
	pinned  bool          // named by Want: never dropped
	asked   time.Time     // last ProvenDeal or Want
	busy    bool          // a worker is proving for it
}

// New starts a supply with cfg: its workers begin at once and
// prove for the rule sets asked for. Close stops them.
func New(cfg Config) *Supply {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Supply{cfg: cfg.withDefaults(), ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		shelves: map[domain.Rules]*shelf{}}
	for range s.cfg.Workers {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

// Close stops the workers (a proof under way is abandoned) and waits for
// them. Waiting requests get *domain.DealNotReadyError.
func (s *Supply) Close() {
	s.cancel()
	s.wg.Wait()
}

// Want makes the supply keep a buffer for rules from the call on (pinned:
// never dropped for others), and start filling it.
func (s *Supply) Want(rules domain.Rules) {
	s.mu.Lock()
	sh := s.shelf(key(rules))
	sh.pinned = true
	s.mu.Unlock()
	s.poke()
}

// Ready is how many proven deals of rules are ready at the call.
func (s *Supply) Ready(rules domain.Rules) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.shelves[key(rules)]; ok {
		return len(sh.deals)
	}
	return 0
}

// Wanted are the rule sets Want named (their time limits cleared, as the
// buffers key them), in no particular order.
func (s *Supply) Wanted() []domain.Rules {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Rules
	for k, sh := range s.shelves {
		if sh.pinned {
			out = append(out, k)
		}
	}
	return out
}

// Counts are how many deals the supply has proven and tried (proven ones
// included) since it started.
func (s *Supply) Counts() (proven, tried int64) { return s.proven.Load(), s.tried.Load() }

// ProvenDeal implements app.Dealer: it takes the oldest proven deal of
// rules, waiting at most Config.Wait for one (less if ctx ends
// first). Errors: *domain.DealNotReadyError when none came in time, ctx
// ended or the supply is closed.
func (s *Supply) ProvenDeal(ctx context.Context, rules domain.Rules) (domain.ProvenDeal, error) {
	k := key(rules)
	timer := time.NewTimer(s.cfg.Wait)
	defer timer.Stop()
	s.mu.Lock()
	sh := s.shelf(k)
	sh.waiting++
	defer func() {
		s.mu.Lock()
		sh.waiting--
		s.mu.Unlock()
	}()
	for {
		if len(sh.deals) > 0 {
			d := sh.deals[0]
			sh.deals = append(sh.deals[:0:0], sh.deals[1:]...)
			s.mu.Unlock()
			s.poke() // refill
			return d, nil
		}
		ready := sh.ready
		s.mu.Unlock()
		s.poke()
		select {
		case <-ready:
			s.mu.Lock()
		case <-ctx.Done():
			return domain.ProvenDeal{}, s.notReady()
		case <-timer.C:
			return domain.ProvenDeal{}, s.notReady()
		case <-s.ctx.Done():
			return domain.ProvenDeal{}, s.notReady()
		}
	}
}

func (s *Supply) notReady() error { return &domain.DealNotReadyError{Wait: s.cfg.RetryAfter} }

// key is the rule set a proof holds for: the time limit is cleared, since
// a line is checked at one instant (no clock runs out) and the deal does
// not depend on it.
func key(r domain.Rules) domain.Rules {
	r.TimeLimitS = 0
	return r
}

// shelf returns the shelf of k, making it (and dropping the least recently
// asked unpinned one beyond MaxKeys). s.mu is held.
func (s *Supply) shelf(k domain.Rules) *shelf {
	sh, ok := s.shelves[k]
	if !ok {
		if len(s.shelves) >= s.cfg.MaxKeys {
			var old *shelf
			for _, o := range s.shelves {
				if !o.pinned && o.waiting == 0 && !o.busy && (old == nil || o.asked.Before(old.asked)) {
					old = o
				}
			}
			if old != nil {
				delete(s.shelves, old.rules)
			}
		}
		sh = &shelf{rules: k, ready: make(chan struct{})}
		s.shelves[k] = sh
	}
	sh.asked = time.Now()
	return sh
}

// poke wakes a worker that found nothing to do.
func (s *Supply) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next picks the rule set to prove for: one a request waits for first,
// else the next buffer below its size in turn; ok false if all are full.
// It marks the shelf busy. s.mu is held.
func (s *Supply) next() (*shelf, bool) {
	var open []*shelf
	for _, sh := range s.shelves {
		if sh.busy {
			continue
		}
		if sh.waiting > len(sh.deals) {
			sh.busy = true
			return sh, true
		}
		if len(sh.deals) < s.cfg.Buffer {
			open = append(open, sh)
		}
	}
	if len(open) == 0 {
		return nil, false
	}
	// The buffers of the fewest decks first: a one-deck proof takes
	// milliseconds, a multi-deck one up to a second, so at start-up every
	// one-deck buffer is full before the first multi-deck proof begins,
	// and a request for a one-deck deal does not wait behind one.
	fewest := slices.MinFunc(open, func(a, b *shelf) int { return a.rules.Decks - b.rules.Decks }).rules.Decks
	open = slices.DeleteFunc(open, func(sh *shelf) bool { return sh.rules.Decks != fewest })
	// Map order is random; take turns over the open ones in a stable
	// order so every buffer gets its share.
	slices.SortFunc(open, func(a, b *shelf) int { return strings.Compare(fmt.Sprint(a.rules), fmt.Sprint(b.rules)) })
	s.turn++
	sh := open[s.turn%len(open)]
	sh.busy = true
	return sh, true
}

// work is one worker: it proves deals for the buffers that want them until
// the supply closes.
func (s *Supply) work() {
	defer s.wg.Done()
	if s.cfg.Nice {
		runtime.LockOSThread() // the lowered priority is the thread's
		lowerPriority()
	}
	for {
		s.mu.Lock()
		sh, ok := s.next()
		s.mu.Unlock()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		d, won := s.prove(sh.rules)
		s.mu.Lock()
		sh.busy = false
		if won {
			sh.deals = append(sh.deals, d)
			close(sh.ready)
			sh.ready = make(chan struct{})
		}
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			return
		}
	}
}

// prove tries one fresh secret seed under rules: the deal, proven
// winnable within the node budget, or false.
func (s *Supply) prove(rules domain.Rules) (domain.ProvenDeal, bool) {
	seed, err := domain.SecretSeed(s.cfg.Random)
	if err != nil {
		select { // a failing random source: try again after a second, not in a hot loop
		case <-time.After(time.Second):
		case <-s.ctx.Done():
		}
		return domain.ProvenDeal{}, false
	}
	s.tried.Add(1)
	nodes := s.cfg.Nodes
	if rules.Decks > 1 {
		nodes = s.cfg.MultiDeckNodes
	}
	d, ok := solver.Prove(s.ctx, rules, seed, nodes)
	if ok {
		s.proven.Add(1)
	}
	return d, ok
}
