package app

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// ErrStaleVersion: the client's If-Match version is not the stream's
// version (If-Match on POST /v1/games/{id}/moves). Nothing was written.
var ErrStaleVersion = errors.New("stale version")

// ErrBadVersion: a states/{version} request names no version of the game.
var ErrBadVersion = errors.New("no such version")

// Games is the application service: it loads a game from the Store, asks
// the rules, and appends what they decide. Now and Random are the only
// sources of time and randomness (R5.1, R6.1); both must be set.
type Games struct {
	Store  Store
	Now    func() time.Time // the server clock; event times are domain.Millis(Now())
	Random io.Reader        // secret seeds, salts and ids; crypto/rand.Reader in production
	// Retries is how often Play re-decides after losing a race when the
	// client sent no If-Match (default 3).
	Retries int
	// Shared says which games on a shared deal are sealed (R6.6): until
	// their competition closes they stay private to their owners even
	// after they end, and show them no more than they saw face up. nil:
	// every game on a shared deal stays sealed. NewCompetitions sets it.
	Shared SharedDeals
	// Dealer hands out proven winnable deals (R7.2) for games created
	// with NewGame.Winnable, and for duels and daily deals (Competitions).
	// nil: winnable games are refused with *domain.DealNotReadyError, and duels
	// and daily deals are dealt at random (with no solution or band).
	Dealer Dealer
}

// NewGames returns a service on store with the real clock and crypto/rand.
func NewGames(store Store) *Games {
	return &Games{Store: store, Now: time.Now, Random: rand.Reader, Retries: 3}
}

// Log is game id's log as stored, up to limit events with version > after
// (GameReader.Events), for exports, audits and live streams; the caller
// has checked that the reader may see the game (Get, CanRead).
func (g *Games) Log(ctx context.Context, id string, after, limit int) ([]domain.RecordedEvent, error) {
	return g.Store.Events(ctx, id, after, limit)
}

// List is the games matching f, newest first, and the next page's cursor
// (GameReader.List); f names the owner whose games are listed.
func (g *Games) List(ctx context.Context, f GameFilter) ([]Game, string, error) {
	return g.Store.List(ctx, f)
}

// Record is game id's record without its log (GameReader.Game): what the
// audit and the export show of a game whose log no longer replays. The
// caller checks that the reader may see it (CanRead).
func (g *Games) Record(ctx context.Context, id string) (*Game, error) {
	return g.Store.Game(ctx, id)
}

// NewGame asks for a game. At most one of Seed, Layout and Deal may be set;
// each makes the game unranked (R6.7). Without any the server
// picks a secret random seed.
type NewGame struct {
	Owner   string
	Variant string
	Options domain.Options
	Seed    *uint64          // a client's seed: unranked
	Layout  *domain.Position // tableau and stock only (R6.5); waste and foundations empty; unranked
	// Deal is a numbered deal, "pysolfc:<number>" (R6.7, domain.ParseDeal): one-deck
	// variants only, not with a seed, layout, duel or daily deal; unranked.
	Deal string
	// CompetitionID and DailyDate as on Game: the shared deal's duel or
	// daily deal (set by Competitions, with ServerSeed).
	CompetitionID string
	DailyDate     string
	// Receipt is the request's idempotency receipt, stored with the game
	// (Store.Create); nil for none.
	Receipt *Receipt
	// ServerSeed and Salt deal a game from a secret the server keeps (a
	// duel's or a day's deal, R6.3): the game stays ranked, and every game
	// dealt from the same seed and salt shows the same commitment.
	ServerSeed *uint64
	Salt       []byte // 32 bytes with ServerSeed; nil draws a fresh salt
	// Winnable deals a proven deal from Games.Dealer (R7.2): any
	// variant, not with Seed, Layout, Deal or ServerSeed. The game
	// stays ranked (a server seed) and publishes a solution commitment.
	Winnable bool
	// Proof, with ServerSeed, is the proof of a shared deal dealt from
	// the supply (a duel's or a day's, R7.2): Proof.Seed is *ServerSeed;
	// the game is winnable with Proof's line and band.
	Proof *domain.ProvenDeal
	// Unranked makes the game unranked whatever its options (R3): a
	// young account's game on a shared deal (Competitions.MinAccountAge).
	Unranked bool
}

// Create deals a new game and stores it. Errors: *domain.UnknownVariantError,
// *domain.OptionError, *domain.LayoutError, *domain.DealError, *FieldError (field winnable),
// *domain.DealNotReadyError (Winnable and no proven deal ready), or the store's.
func (g *Games) Create(ctx context.Context, req NewGame) (*Game, *domain.State, error) {
	v, err := domain.LookupVariant(req.Variant)
	if err != nil {
		return nil, nil, err
	}
	rules, ranked, err := v.Resolve(req.Options)
	if err != nil {
		return nil, nil, err
	}
	if (req.Seed != nil || req.ServerSeed != nil) && req.Layout != nil || req.Seed != nil && req.ServerSeed != nil {
		return nil, nil, &domain.LayoutError{Where: "layout", Reason: "seed_and_layout", Detail: "give seed or layout, not both"}
	}
	var numbered domain.Position
	if req.Deal != "" {
		if req.Seed != nil || req.ServerSeed != nil || req.Layout != nil || req.CompetitionID != "" || req.DailyDate != "" {
			return nil, nil, &domain.DealError{Detail: "a numbered deal is given alone: not with a seed, a layout, a duel or a daily deal"}
		}
		canon, n, err := domain.ParseDeal(req.Deal)
		if err != nil {
			return nil, nil, err
		}
		if len(domain.NumberedDeals(rules)) == 0 {
			return nil, nil, &domain.DealError{Detail: fmt.Sprintf("numbered deals are one-deck Klondike deals; %s deals %d decks "+
				"into %d piles (GET /v1/variants lists numbered_deals per variant)", v.ID, rules.Decks, rules.Piles)}
		}
		req.Deal, numbered = canon, n.KlondikeDeal()
	}
	proof := req.Proof
	if req.Winnable {
		if proof, err = g.provenDeal(ctx, rules, req); err != nil {
			return nil, nil, err
		}
		seed := proof.Seed
		req.ServerSeed = &seed
	} else if proof != nil && (req.ServerSeed == nil || *req.ServerSeed != proof.Seed) {
		return nil, nil, fmt.Errorf("domain: a proof without its server seed")
	}
	salt := make([]byte, 32)
	idb := make([]byte, 16)
	var seedb [8]byte
	for _, b := range [][]byte{salt, idb, seedb[:]} {
		if _, err := io.ReadFull(g.Random, b); err != nil {
			return nil, nil, fmt.Errorf("domain: random source: %w", err)
		}
	}
	game := &Game{ID: hex.EncodeToString(idb), Variant: v.ID, Rules: rules, Options: req.Options,
		Owner: req.Owner, DealSecret: DealSecret{Salt: salt}, CompetitionID: req.CompetitionID, DailyDate: req.DailyDate, Deal: req.Deal,
		CreatedAt: domain.Millis(g.Now())}
	var deal domain.Position
	switch {
	case req.Deal != "":
		deal = numbered // the number is public (R6.7)
		ranked = false
	case req.Layout != nil:
		if deal, err = domain.LayoutDeal(rules, req.Layout); err != nil {
			return nil, nil, err
		}
		ranked = false
	case req.Seed != nil:
		game.Seed, game.HasSeed = *req.Seed, true
		deal = domain.Deal(rules, game.Seed)
		ranked = false
	case req.ServerSeed != nil:
		game.Seed, game.HasSeed = *req.ServerSeed, true
		deal = domain.Deal(rules, game.Seed)
		if req.Salt != nil {
			if len(req.Salt) != 32 {
				return nil, nil, fmt.Errorf("domain: salt must be 32 bytes, got %d", len(req.Salt))
			}
			game.Salt = append([]byte(nil), req.Salt...)
		}
	default:
		game.Seed, game.HasSeed = binary.BigEndian.Uint64(seedb[:]), true
		deal = domain.Deal(rules, game.Seed)
	}
	game.Ranked = ranked && !req.Unranked
	game.Commitment = domain.Commitment(deal, game.Salt)
	first := domain.DealtEvent(rules, deal, game.Commitment, game.CreatedAt)
	// R6.8: the salt in the deal keys the chain, so no hash a client reads
	// before the reveal tests a guess at the hidden cards.
	first.Data.V, first.Data.Salt = domain.DealPayloadVersion, hex.EncodeToString(game.Salt)
	if proof != nil {
		game.Winnable, game.Difficulty = true, proof.Difficulty
		game.Solution = append([]domain.Move{}, proof.Line...)
		game.SolutionCommitment = domain.SolutionCommitment(game.Solution, game.Salt)
		first.Data.Winnable, first.Data.Difficulty = true, game.Difficulty
		first.Data.SolutionCommitment = game.SolutionCommitment
	}
	s, err := domain.DealtState(first)
	if err != nil {
		return nil, nil, err
	}
	game.Project(s)
	if err := g.Store.Create(ctx, game, first, s, req.Receipt); err != nil {
		return nil, nil, err
	}
	return game, s, nil
}

// provenDeal takes a proven deal of rules from the Dealer for req, a
// request with Winnable and no other way of dealing (every variant, R7.2).
func (g *Games) provenDeal(ctx context.Context, rules domain.Rules, req NewGame) (*domain.ProvenDeal, error) {
	switch {
	case req.Seed != nil || req.Layout != nil || req.Deal != "" || req.ServerSeed != nil:
		return nil, &FieldError{Field: "winnable", Detail: "winnable: true deals a proven deal; not with seed, layout or deal"}
	case g.Dealer == nil:
		return nil, &domain.DealNotReadyError{Wait: 5 * time.Second}
	}
	p, err := g.Dealer.ProvenDeal(ctx, rules)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Visible reports whether caller may read game g now, by R6.4 alone: its
// owner always; anyone once it has ended. Games.Get adds R6.6: a game on a
// shared deal stays private to its owner until its competition closes.
func Visible(g *Game, caller string) bool {
	return g.Owner == caller || g.Status.Ended()
}

// Seal says whether game's hidden information is sealed now (R6.6, see
// Seal): a game with no duel id never is; one on a shared deal is until
// Shared says its competition has closed (always, without Shared).
// Errors: Shared's.
func (g *Games) Seal(ctx context.Context, game *Game) (Seal, error) {
	if game.CompetitionID == "" {
		return Seal{}, nil
	}
	if g.Shared == nil {
		return Seal{Sealed: true}, nil
	}
	return g.Shared.Seal(ctx, game, g.Now())
}

// Reveal reports whether game's hidden information (face-down cards, stock
// order, seed, salt) may be shown: it has ended (R6.4) and is not sealed
// (R6.6). The Seal is returned too, for the audit to say when the
// commitment will be checked. Errors: Shared's.
func (g *Games) Reveal(ctx context.Context, game *Game) (bool, Seal, error) {
	if !game.Status.Ended() {
		return false, Seal{}, nil
	}
	seal, err := g.Seal(ctx, game)
	if err != nil {
		return false, Seal{}, err
	}
	return !seal.Sealed, seal, nil
}

// visible is Visible plus R6.6: a sealed game is its owner's alone.
func (g *Games) visible(ctx context.Context, game *Game, caller string) (bool, error) {
	if !Visible(game, caller) {
		return false, nil
	}
	if game.Owner == caller || game.CompetitionID == "" {
		return true, nil
	}
	seal, err := g.Seal(ctx, game)
	return !seal.Sealed, err
}

// CanRead is the visibility rule of Get for a game record alone (a game
// whose log no longer loads): Visible plus R6.6. Errors: Shared's.
func (g *Games) CanRead(ctx context.Context, game *Game, caller string) (bool, error) {
	return g.visible(ctx, game, caller)
}

// Get loads a game for caller. A game past its deadline is expired on read
// (R5.3): the expiry is appended before the state is returned. domain.ErrNotFound
// if it does not exist or caller may not see it.
func (g *Games) Get(ctx context.Context, caller, id string) (*Game, *domain.State, error) {
	game, s, err := g.Store.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if ok, err := g.visible(ctx, game, caller); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, domain.ErrNotFound
	}
	if ev := domain.Expire(s, g.Now()); ev != nil {
		v := s.Version
		if _, err := g.Store.Append(ctx, id, v, ev, applied(s, ev), nil); err != nil && !errors.Is(err, domain.ErrConflict) {
			return nil, nil, err
		}
		return g.Get(ctx, caller, id) // reread: ours or a racing writer's expiry
	}
	return game, s, nil
}

func applied(s *domain.State, evs []domain.Event) After {
	for _, e := range evs {
		s.Apply(e)
	}
	return AfterOf(s)
}

// Play decides move m in game id for caller and appends its events. expected
// is the client's If-Match version, or -1 for none. It returns the game, the
// new state and the records of the events appended, as Store.Append
// returned them (hashes included); the state may be the store's (read it,
// do not change it). Errors: domain.ErrNotFound (no such game, or
// not the caller's), ErrStaleVersion, *domain.MoveError (matching domain.ErrGameOver or
// domain.ErrTimeExpired where so), domain.ErrConflict after repeated lost races,
// ErrReceiptTaken when receipt (the request's idempotency receipt, nil for
// none; stored with the move's events, never with an expiry appended
// first) names a key another request used first, or the store's.
//
// Play runs in two phases. When the Store is a CommandLoader, the first is
// one optimistic try on its cached state, which may be older than the log:
// the append's version condition accepts it only if it was the newest, so
// a committed append (or a store failure) is the answer, and anything else
// (a refusal, an If-Match mismatch, a lost race) is decided again in the
// second phase, on Load's checked state, before it is answered. So callers
// see exactly what a Load-only Play would answer. The second phase retries
// lost races up to Retries times when the client sent no If-Match.
func (g *Games) Play(ctx context.Context, caller, id string, m domain.Move, expected int, receipt *Receipt) (*Game, *domain.State, []domain.RecordedEvent, error) {
	retries := g.Retries
	if retries <= 0 {
		retries = 3
	}
	var (
		game     *Game
		s        *domain.State
		err      error
		verified = true
	)
	if cl, ok := g.Store.(CommandLoader); ok {
		game, s, verified, err = cl.LoadForCommand(ctx, id)
	} else {
		game, s, err = g.Store.Load(ctx, id)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if !verified {
		if a := g.try(ctx, caller, id, m, expected, receipt, game, s); a.settled {
			return a.result()
		}
		if game, s, err = g.Store.Load(ctx, id); err != nil {
			return nil, nil, nil, err
		}
	}
	for n := 0; ; n++ {
		a := g.try(ctx, caller, id, m, expected, receipt, game, s)
		if !a.retry || n >= retries {
			return a.result()
		}
		if game, s, err = g.Store.Load(ctx, id); err != nil {
			return nil, nil, nil, err
		}
	}
}

// attempt is the outcome of one decide-and-append (Games.try).
type attempt struct {
	game *Game
	s    *domain.State
	recs []domain.RecordedEvent
	err  error
	// settled: the answer holds whatever state it was decided on: an
	// append committed (so the state was the log's newest), the game is
	// not the caller's (its owner never changes), or the store failed.
	settled bool
	// retry: a lost race that may be decided again on a newer state.
	retry bool
}

func (a attempt) result() (*Game, *domain.State, []domain.RecordedEvent, error) {
	return a.game, a.s, a.recs, a.err
}

// try decides m on state s of game and appends what it decides: the
// expiry first if the game's time has run out (R5.3), else the move's
// events, with the version s had as the expected one.
func (g *Games) try(ctx context.Context, caller, id string, m domain.Move, expected int, receipt *Receipt, game *Game, s *domain.State) attempt {
	if game.Owner != caller {
		return attempt{err: domain.ErrNotFound, settled: true}
	}
	if expected >= 0 && s.Version != expected {
		return attempt{game: game, s: s, err: ErrStaleVersion}
	}
	now := g.Now()
	if ev := domain.Expire(s, now); ev != nil {
		// The expiry is not the move the receipt stands for: appended
		// without it. It is applied to a copy: s may be the store's
		// (CommandLoader).
		after := applied(s.Clone(), ev)
		_, err := g.Store.Append(ctx, id, s.Version, ev, after, nil)
		if err != nil {
			return attempt{err: err, settled: !errors.Is(err, domain.ErrConflict), retry: errors.Is(err, domain.ErrConflict)}
		}
		game.project(after)
		return attempt{game: game, s: after.State, settled: true,
			err: &domain.MoveError{Move: m, Reason: domain.ReasonTimeExpired, Detail: "the time limit has run out (R5.3)"}}
	}
	evs, after, err := domain.Decide(s, m, now)
	if err != nil {
		return attempt{game: game, s: s, err: err}
	}
	next := AfterOf(after)
	recs, err := g.Store.Append(ctx, id, s.Version, evs, next, receipt)
	switch {
	case err == nil:
		game.project(next)
		return attempt{game: game, s: after, recs: recs, settled: true}
	case errors.Is(err, domain.ErrConflict):
		return attempt{err: err, retry: expected < 0}
	}
	return attempt{err: err, settled: true}
}

// StateAt replays game id up to version (1 = the deal) for caller. Errors:
// domain.ErrNotFound, ErrBadVersion for a version outside 1..current.
func (g *Games) StateAt(ctx context.Context, caller, id string, version int) (*Game, *domain.State, error) {
	game, s, err := g.Get(ctx, caller, id)
	if err != nil {
		return nil, nil, err
	}
	if version < 1 || version > s.Version {
		return nil, nil, ErrBadVersion
	}
	recs, err := g.Store.Events(ctx, id, 0, version)
	if err != nil {
		return nil, nil, err
	}
	at := &domain.State{}
	for _, r := range recs {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			return nil, nil, err
		}
		at.Apply(e)
	}
	if at.Fault != "" || at.Version != version {
		return nil, nil, fmt.Errorf("domain: replay of %s to version %d failed: %s", id, version, at.Fault)
	}
	return game, at, nil
}
