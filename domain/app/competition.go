package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// Duel is a same-deal duel (RULES R6.3): every game joined to it is dealt
// from Seed and Salt, so all participants get the same cards in the same
// order and the same Commitment. Times are UTC, in milliseconds.
//
// Joining closes at Deadline or once MaxPlayers seats are taken. The duel
// closes (R6.6) at Deadline, or earlier once every seat is taken and every
// joined game has ended; until then Seed, Salt and every hidden card of its
// games stay secret, even to the games' owners. EndedAt is set once it has
// closed and no game of it still runs (games running at the deadline are
// resigned by the server, R2.7).
type Duel struct {
	ID        string         // opaque id, 1..64 characters (32 hex digits when the service makes it)
	Variant   string         // variant id (R3)
	Rules     domain.Rules   // the variant's rules with Options applied
	Options   domain.Options // options as the creator gave them
	Ranked    bool           // default options (R3): its games count for statistics
	CreatedBy string         // player id
	// DealSecret: the deal (Deal(Rules, Seed)), its commitment, and for a
	// duel created winnable its proof, all secret until the duel closes
	// (R6.6).
	DealSecret
	CreatedAt  time.Time  // UTC, ms
	Deadline   time.Time  // UTC, ms: joining closes, running games are resigned, the duel closes
	MaxPlayers int        // seats, MinDuelPlayers..MaxDuelPlayers
	EndedAt    *time.Time // UTC, ms: when the duel closed; nil while it is open
}

// Bounds of a duel (POST /v1/duels).
const (
	MinDuelDuration     = time.Minute
	MaxDuelDuration     = 7 * 24 * time.Hour
	DefaultDuelDuration = 24 * time.Hour
	MinDuelPlayers      = 2
	MaxDuelPlayers      = 100
	DefaultDuelPlayers  = 2
	// DefaultDuelVariant is the variant of a duel that names none: seed
	// 002's 5-minute game with its time bonus (RULES R3, R4.2).
	DefaultDuelVariant = "klassik"
)

// DailyDeal is the deal of a variant on a UTC day: every player's daily
// game of that variant and day is dealt from Seed and Salt under the
// variant's default rules and shows Commitment. The deal closes (R6.6) at
// the end of its day, ClosesAt.
type DailyDeal struct {
	Variant string // variant id (R3)
	Day     string // "2006-01-02", UTC
	// DealSecret: the deal and its commitment, secret until the day is
	// over (R6.6); daily deals are always proven winnable (R7.2) when
	// the service has a Dealer.
	DealSecret
	CreatedAt time.Time // UTC, ms
}

// DailyDealID is the CompetitionID a daily game carries: it marks the game as one
// on a shared deal (R6.6), as a duel's id does a duel's game.
func DailyDealID(variant, day string) string { return "daily:" + variant + ":" + day }

// UTCDay is the UTC date of t as "2006-01-02".
func UTCDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// dayEnd is the instant a UTC day ("2006-01-02") ends: midnight after it.
// ok is false for a malformed day.
func dayEnd(day string) (time.Time, bool) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return time.Time{}, false
	}
	return t.Add(24 * time.Hour), true
}

// CompetitionStore keeps duels and daily deals; persistence implements it
// on PostgreSQL and on the embedded database alike.
type CompetitionStore interface {
	// CreateDuel stores d (EndedAt ignored); domain.ErrConflict if the id exists.
	CreateDuel(ctx context.Context, d *Duel) error
	// Duel returns a duel; domain.ErrNotFound if none.
	Duel(ctx context.Context, id string) (*Duel, error)
	// TakeDuelSeat seats player in the duel before the game is dealt,
	// under the duel's lock. false: joining has closed at now (the duel
	// has ended, its deadline is at or before now, or all MaxPlayers seats
	// are taken). domain.ErrNotFound: no such duel; domain.ErrConflict: the player
	// already has a seat.
	TakeDuelSeat(ctx context.Context, duelID, player string, now time.Time) (bool, error)
	// LeaveDuelSeat gives up a seat whose game could not be dealt.
	LeaveDuelSeat(ctx context.Context, duelID, player string) error
	// DuelGameOf is the id of player's game with that duel id (a duel's
	// or a daily deal's); domain.ErrNotFound if none.
	DuelGameOf(ctx context.Context, duelID, player string) (string, error)
	// DuelGames returns the games with that duel id, oldest first.
	DuelGames(ctx context.Context, duelID string) ([]Game, error)
	// EndDuel records the duel's end if it is due at now (closed, see
	// Duel, and no game of it running or waiting to be dealt) and reports
	// whether it has ended. An unknown id has not ended.
	EndDuel(ctx context.Context, duelID string, now time.Time) (bool, error)
	// EnsureDailyDeal returns the stored deal of d's variant and day,
	// storing d first if there is none (race-safe: one row wins).
	EnsureDailyDeal(ctx context.Context, d DailyDeal) (*DailyDeal, error)
	// FindDailyDeal returns a day's deal; domain.ErrNotFound if nobody has
	// played it.
	FindDailyDeal(ctx context.Context, variant, day string) (*DailyDeal, error)
	// DailyGameOf is the id of owner's daily game of variant on day;
	// domain.ErrNotFound if none.
	DailyGameOf(ctx context.Context, owner, variant, day string) (string, error)
	// DailyGames returns the daily games of variant on day, oldest first.
	DailyGames(ctx context.Context, variant, day string) ([]Game, error)
	// PlayerNames maps player ids to display names; unknown ids are left out.
	PlayerNames(ctx context.Context, ids []string) (map[string]string, error)
}

// Errors of duels and daily deals.
var (
	// ErrNoDuel: no duel with that id. It matches domain.ErrNotFound.
	ErrNoDuel = &NotFoundError{What: "duel"}
	// ErrDuelEnded: the duel takes no more players: it has ended or its
	// deadline has passed.
	ErrDuelEnded = errors.New("the duel has ended or its deadline has passed; nobody can join it any more")
	// ErrDuelFull: every seat of a duel still running is taken.
	ErrDuelFull = errors.New("every seat of the duel is taken; it ends once every game in it has ended, or at its deadline")
	// ErrBadCursor: a listing cursor the store did not make (or made for
	// another filter).
	ErrBadCursor = errors.New("cursor is not one this server made")
)

// NotFoundError is domain.ErrNotFound for a record other than a game: What names
// it ("duel"). errors.Is(err, domain.ErrNotFound) holds.
type NotFoundError struct{ What string }

// Error is "no such <What>".
func (e *NotFoundError) Error() string { return "no such " + e.What }

// Is makes a *NotFoundError match domain.ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == domain.ErrNotFound }

// AlreadyJoinedError: the player already has a game in the duel (one per
// player and duel); GameID names it ("" if it is still being dealt).
type AlreadyJoinedError struct{ GameID string }

// Error says so.
func (e *AlreadyJoinedError) Error() string {
	return "you already have a game in this duel; one game per player"
}

// DailyAlreadyPlayedError: the player already has the day's daily game of
// Variant (one per player, variant and UTC day); GameID names it.
type DailyAlreadyPlayedError struct{ Variant, GameID string }

// Error says so, naming the game.
func (e *DailyAlreadyPlayedError) Error() string {
	return "you already have today's " + e.Variant + " daily game: " + e.GameID + "; one per player and day"
}

// FieldError is a request field whose value the rules refuse: Field names
// it (as the API spells it), Detail says why, for people.
type FieldError struct{ Field, Detail string }

// Error is the detail.
func (e *FieldError) Error() string { return e.Detail }

// Seal says whether a game's hidden information is sealed (R6.6): the game
// is on a shared deal (a duel or a daily deal) whose competition has not
// closed. While sealed, no route shows its face-down cards, stock order,
// seed or salt, even once it has ended, and its audit does not check the
// commitment. ClosesAt is when the competition closes at the latest (a
// duel's deadline, the end of a daily deal's UTC day); zero when unknown.
type Seal struct {
	Sealed   bool
	ClosesAt time.Time
}

// SharedDeals tells Games which games are sealed (R6.6); Competitions
// implements it.
type SharedDeals interface {
	// Seal of game g at now. Errors: the store's.
	Seal(ctx context.Context, g *Game, now time.Time) (Seal, error)
}

// Competitions is the application service of duels and daily deals, as
// Games is of games: it creates and joins duels, deals daily games,
// settles and closes both, and says when their deal may be revealed.
type Competitions struct {
	Games *Games
	Store CompetitionStore
	// MinAccountAge is the operators' lever against accounts made to
	// explore a shared deal (README "Limits"): a player whose account is
	// younger than this when the competition opened (a duel's creation, the
	// start of a daily deal's UTC day) plays that competition unranked,
	// and a ranked competition's standings leave such games out. 0 (the
	// default) checks nothing.
	MinAccountAge time.Duration
}

// youngFor reports whether player's account is younger than
// MinAccountAge at opened, the opening of a competition.
func (c *Competitions) youngFor(player Player, opened time.Time) bool {
	return c.MinAccountAge > 0 && player.CreatedAt.After(opened.Add(-c.MinAccountAge))
}

// NewCompetitions returns the service on store, and makes it games's
// SharedDeals (Games.Shared), so that shared deals stay sealed until they
// close (R6.6).
func NewCompetitions(games *Games, store CompetitionStore) *Competitions {
	c := &Competitions{Games: games, Store: store}
	games.Shared = c
	return c
}

// Seal implements SharedDeals. A game with no duel id is not sealed. A
// daily game is sealed until the end of its UTC day. A duel's game is
// sealed until the duel's deadline, or until it has ended (every seat
// taken, every game ended). A duel id that names no duel stays sealed.
func (c *Competitions) Seal(ctx context.Context, g *Game, now time.Time) (Seal, error) {
	if g.CompetitionID == "" {
		return Seal{}, nil
	}
	if g.DailyDate != "" {
		end, ok := dayEnd(g.DailyDate)
		if !ok {
			return Seal{Sealed: true}, nil
		}
		return Seal{Sealed: now.Before(end), ClosesAt: end}, nil
	}
	d, err := c.Store.Duel(ctx, g.CompetitionID)
	if errors.Is(err, domain.ErrNotFound) {
		return Seal{Sealed: true}, nil
	}
	if err != nil {
		return Seal{}, err
	}
	if d.EndedAt != nil || !now.Before(d.Deadline) {
		return Seal{ClosesAt: d.Deadline}, nil
	}
	ended, err := c.Store.EndDuel(ctx, d.ID, now)
	if err != nil {
		return Seal{}, err
	}
	return Seal{Sealed: !ended, ClosesAt: d.Deadline}, nil
}

// NewDuel asks for a duel. Variant "" is DefaultDuelVariant; Options apply
// to every game of the duel (any but draw make them unranked, R3). At most
// one of Duration (MinDuelDuration..MaxDuelDuration) and Deadline (that
// far ahead) may be set; neither means DefaultDuelDuration. MaxPlayers 0
// means DefaultDuelPlayers, else MinDuelPlayers..MaxDuelPlayers.
type NewDuel struct {
	Creator    string
	Variant    string
	Options    domain.Options
	Duration   *time.Duration
	Deadline   *time.Time
	MaxPlayers int
	// Winnable nil or true deals a proven winnable deal (R7.2, the
	// default for duels) when the service has a Dealer; false deals a
	// random one. An explicit true without a Dealer is a
	// *domain.DealNotReadyError.
	Winnable *bool
}

// CreateDuel draws a secret deal and stores a new duel: a proven winnable
// one from Games.Dealer unless req.Winnable says otherwise (R7.2). Errors:
// *domain.UnknownVariantError, *domain.OptionError, *FieldError (fields duration_s,
// deadline, max_players), *domain.DealNotReadyError, or the store's.
func (c *Competitions) CreateDuel(ctx context.Context, req NewDuel) (*Duel, error) {
	if req.Variant == "" {
		req.Variant = DefaultDuelVariant
	}
	v, err := domain.LookupVariant(req.Variant)
	if err != nil {
		return nil, err
	}
	rules, ranked, err := v.Resolve(req.Options)
	if err != nil {
		return nil, err
	}
	now := domain.Millis(c.Games.Now())
	deadline, err := duelDeadline(req, now)
	if err != nil {
		return nil, err
	}
	players := req.MaxPlayers
	if players == 0 {
		players = DefaultDuelPlayers
	}
	if players < MinDuelPlayers || players > MaxDuelPlayers {
		return nil, &FieldError{Field: "max_players",
			Detail: fmt.Sprintf("max_players must be %d..%d", MinDuelPlayers, MaxDuelPlayers)}
	}
	seed, salt, proven, err := c.sharedDeal(ctx, rules, req.Winnable)
	if err != nil {
		return nil, err
	}
	var idb [16]byte
	if _, err := io.ReadFull(c.Games.Random, idb[:]); err != nil {
		return nil, fmt.Errorf("domain: random source: %w", err)
	}
	d := &Duel{ID: hex.EncodeToString(idb[:]), Variant: v.ID, Rules: rules, Options: req.Options, Ranked: ranked,
		CreatedBy: req.Creator, DealSecret: sharedSecret(rules, seed, salt, proven),
		CreatedAt: now, Deadline: deadline, MaxPlayers: players}
	if err := c.Store.CreateDuel(ctx, d); err != nil {
		return nil, err
	}
	return d, nil
}

// wantWinnable decides whether a shared deal is dealt from the Dealer
// (R7.2, every variant): asked (nil means yes) and a Dealer.
func (c *Competitions) wantWinnable(asked *bool) (bool, error) {
	explicit := asked != nil && *asked
	switch {
	case asked != nil && !*asked:
		return false, nil
	case c.Games.Dealer == nil:
		if explicit {
			return false, &domain.DealNotReadyError{Wait: 5 * time.Second}
		}
		return false, nil
	}
	return true, nil
}

// sharedDeal draws the secret deal of a duel or a daily deal under rules:
// a fresh salt, and the seed of a proven deal from the Dealer when
// wantWinnable says so (proven is then its proof, else nil), else a fresh
// secret seed.
func (c *Competitions) sharedDeal(ctx context.Context, rules domain.Rules, asked *bool) (uint64, []byte, *domain.ProvenDeal, error) {
	winnable, err := c.wantWinnable(asked)
	if err != nil {
		return 0, nil, nil, err
	}
	var proven *domain.ProvenDeal
	if winnable {
		p, err := c.Games.Dealer.ProvenDeal(ctx, rules)
		if err != nil {
			return 0, nil, nil, err
		}
		proven = &p
	}
	seed, salt, err := c.secretDeal()
	if err != nil {
		return 0, nil, nil, err
	}
	if proven != nil {
		seed = proven.Seed
	}
	return seed, salt, proven, nil
}

// lineOf is p's line, nil for no proof.
func lineOf(p *domain.ProvenDeal) []domain.Move {
	if p == nil {
		return nil
	}
	return p.Line
}

// bandOf is p's difficulty, "" for no proof.
func bandOf(p *domain.ProvenDeal) domain.Band {
	if p == nil {
		return ""
	}
	return p.Difficulty
}

// duelDeadline is when a requested duel closes.
func duelDeadline(req NewDuel, now time.Time) (time.Time, error) {
	switch {
	case req.Duration != nil && req.Deadline != nil:
		return time.Time{}, &FieldError{Field: "deadline", Detail: "give duration_s or deadline, not both"}
	case req.Deadline != nil:
		t := domain.Millis(*req.Deadline)
		if d := t.Sub(now); d < MinDuelDuration || d > MaxDuelDuration {
			return time.Time{}, &FieldError{Field: "deadline", Detail: fmt.Sprintf(
				"deadline must be %d seconds to %d days from now", int(MinDuelDuration.Seconds()), int(MaxDuelDuration.Hours()/24))}
		}
		return t, nil
	case req.Duration != nil:
		if d := *req.Duration; d < MinDuelDuration || d > MaxDuelDuration {
			return time.Time{}, &FieldError{Field: "duration_s", Detail: fmt.Sprintf(
				"duration_s must be %d..%d seconds", int(MinDuelDuration.Seconds()), int(MaxDuelDuration.Seconds()))}
		}
		return now.Add(*req.Duration), nil
	}
	return now.Add(DefaultDuelDuration), nil
}

// secretDeal draws a fresh secret deal from Games.Random: a 32-byte salt,
// then an 8-byte seed (domain.SecretSeed).
func (c *Competitions) secretDeal() (uint64, []byte, error) {
	salt := make([]byte, 32)
	if _, err := io.ReadFull(c.Games.Random, salt); err != nil {
		return 0, nil, fmt.Errorf("domain: random source: %w", err)
	}
	seed, err := domain.SecretSeed(c.Games.Random)
	if err != nil {
		return 0, nil, err
	}
	return seed, salt, nil
}

// Duel returns duel id. Errors: ErrNoDuel, or the store's.
func (c *Competitions) Duel(ctx context.Context, id string) (*Duel, error) {
	d, err := c.Store.Duel(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ErrNoDuel
	}
	return d, err
}

// JoinDuel deals joiner's game of duel id: a seat first, then the game on
// the duel's deal (R6.3); unranked for an account younger than
// MinAccountAge when the duel was created. Errors: ErrNoDuel,
// ErrDuelEnded, ErrDuelFull, *AlreadyJoinedError, or Games.Create's.
func (c *Competitions) JoinDuel(ctx context.Context, joiner Player, id string) (*Game, *domain.State, error) {
	player := joiner.ID
	d, err := c.Duel(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	taken, err := c.Store.TakeDuelSeat(ctx, id, player, c.Games.Now())
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, nil, ErrNoDuel
	case errors.Is(err, domain.ErrConflict):
		joined := &AlreadyJoinedError{}
		if gid, err := c.Store.DuelGameOf(ctx, id, player); err == nil {
			joined.GameID = gid
		}
		return nil, nil, joined
	case err != nil:
		return nil, nil, err
	case !taken && d.EndedAt == nil && c.Games.Now().Before(d.Deadline):
		return nil, nil, ErrDuelFull
	case !taken:
		return nil, nil, ErrDuelEnded
	}
	g, st, err := c.Games.Create(ctx, NewGame{Owner: player, Variant: d.Variant, Options: d.Options,
		ServerSeed: &d.Seed, Salt: d.Salt, CompetitionID: d.ID, Proof: d.proof(),
		Unranked: c.youngFor(joiner, d.CreatedAt)})
	if err != nil {
		if lerr := c.Store.LeaveDuelSeat(context.WithoutCancel(ctx), id, player); lerr != nil {
			err = errors.Join(err, fmt.Errorf("giving up the seat: %w", lerr))
		}
		return nil, nil, err
	}
	return g, st, nil
}

// Results are a competition's games ranked (RankStandings) with their
// owners' display names.
type Results struct {
	Standings []Standing
	Names     map[string]string // player id -> display name
	Joined    int               // games in the competition, those left out of Standings included
}

// dayStart is the start of a UTC day "2006-01-02" (zero for a malformed
// day, which the service never makes).
func dayStart(day string) time.Time {
	t, _ := time.Parse(time.DateOnly, day)
	return t
}

// results ranks games and names their owners. In a ranked competition
// (ranked) unranked games are left out: the only way a game of one is
// unranked is an account younger than MinAccountAge.
func (c *Competitions) results(ctx context.Context, games []Game, ranked bool) (Results, error) {
	joined := len(games)
	if ranked {
		games = slices.DeleteFunc(slices.Clone(games), func(g Game) bool { return !g.Ranked })
	}
	ids := make([]string, 0, len(games))
	seen := map[string]bool{}
	for _, g := range games {
		if !seen[g.Owner] {
			seen[g.Owner] = true
			ids = append(ids, g.Owner)
		}
	}
	names, err := c.Store.PlayerNames(ctx, ids)
	if err != nil {
		return Results{}, err
	}
	return Results{Standings: RankStandings(games), Names: names, Joined: joined}, nil
}

// DuelStandings settles duel id (SettleDuel) and returns it with its
// standings. Errors: ErrNoDuel, or the store's.
func (c *Competitions) DuelStandings(ctx context.Context, id string) (*Duel, Results, error) {
	d, err := c.Duel(ctx, id)
	if err != nil {
		return nil, Results{}, err
	}
	games, err := c.SettleDuel(ctx, d)
	if err != nil {
		return nil, Results{}, err
	}
	r, err := c.results(ctx, games, d.Ranked)
	return d, r, err
}

// SettleDuel brings duel d up to date and returns its games: games past
// their own time limit are expired (R5.3, as reading them would), games
// still running after the deadline are closed (resigned, R2.7), and the
// duel's end is recorded once due (d.EndedAt is updated).
func (c *Competitions) SettleDuel(ctx context.Context, d *Duel) ([]Game, error) {
	games, err := c.Store.DuelGames(ctx, d.ID)
	if err != nil || d.EndedAt != nil {
		return games, err
	}
	now := c.Games.Now()
	changed := false
	for _, g := range games {
		if g.Status != domain.StatusInProgress {
			continue
		}
		if now.Before(d.Deadline) {
			// Reading as the owner appends a due expiry (R5.3).
			_, st, err := c.Games.Get(ctx, g.Owner, g.ID)
			if err != nil {
				return nil, err
			}
			changed = changed || st.Status.Ended()
			continue
		}
		ended, err := c.Games.CloseGame(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		changed = changed || ended
	}
	if changed {
		if games, err = c.Store.DuelGames(ctx, d.ID); err != nil {
			return nil, err
		}
	}
	over, err := c.Store.EndDuel(ctx, d.ID, now)
	if err != nil || !over {
		return games, err
	}
	fresh, err := c.Store.Duel(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	*d = *fresh
	return games, nil
}

// PlayDaily deals player's game on today's (UTC, by Games.Now) daily deal
// of variant, with the variant's default rules: the same deal for every
// player that day, proven winnable (R7.2) when the service has a Dealer. Errors:
// *domain.UnknownVariantError, *DailyAlreadyPlayedError (one per player, variant
// and day), *domain.DealNotReadyError (the day's first game, and no proven deal
// ready yet), or the store's.
func (c *Competitions) PlayDaily(ctx context.Context, p Player, variant string) (*Game, *domain.State, error) {
	player := p.ID
	v, err := domain.LookupVariant(variant)
	if err != nil {
		return nil, nil, err
	}
	now := domain.Millis(c.Games.Now())
	day := UTCDay(now)
	if err := c.alreadyPlayed(ctx, player, v.ID, day); err != nil {
		return nil, nil, err
	}
	deal, err := c.Store.FindDailyDeal(ctx, v.ID, day)
	if errors.Is(err, domain.ErrNotFound) {
		deal, err = c.newDailyDeal(ctx, v, day, now)
	}
	if err != nil {
		return nil, nil, err
	}
	g, st, err := c.Games.Create(ctx, NewGame{Owner: player, Variant: v.ID, ServerSeed: &deal.Seed,
		Salt: deal.Salt, DailyDate: day, CompetitionID: DailyDealID(v.ID, day),
		Proof:    deal.proof(),
		Unranked: c.youngFor(p, dayStart(day))})
	if errors.Is(err, domain.ErrConflict) {
		if perr := c.alreadyPlayed(ctx, player, v.ID, day); perr != nil {
			return nil, nil, perr // a racing request of the same player dealt it
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return g, st, nil
}

// alreadyPlayed is a *DailyAlreadyPlayedError if player has a daily game of
// variant on day, nil if not.
func (c *Competitions) alreadyPlayed(ctx context.Context, player, variant, day string) error {
	id, err := c.Store.DailyGameOf(ctx, player, variant, day)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return &DailyAlreadyPlayedError{Variant: variant, GameID: id}
}

// newDailyDeal draws the deal of variant v on day and stores it, unless a
// racing first player stored one first (then that one is returned).
func (c *Competitions) newDailyDeal(ctx context.Context, v domain.Variant, day string, now time.Time) (*DailyDeal, error) {
	rules, _, err := v.Resolve(domain.Options{})
	if err != nil {
		return nil, err
	}
	seed, salt, proven, err := c.sharedDeal(ctx, rules, nil)
	if err != nil {
		return nil, err
	}
	return c.Store.EnsureDailyDeal(ctx, DailyDeal{Variant: v.ID, Day: day,
		DealSecret: sharedSecret(rules, seed, salt, proven), CreatedAt: now})
}

// sharedSecret is the DealSecret of a shared deal (a duel's, a daily
// deal's) dealt from seed under rules with salt, proven winnable when
// proven is not nil.
func sharedSecret(rules domain.Rules, seed uint64, salt []byte, proven *domain.ProvenDeal) DealSecret {
	return DealSecret{Seed: seed, Salt: salt, Commitment: domain.Commitment(domain.Deal(rules, seed), salt),
		Winnable: proven != nil, Solution: lineOf(proven), Difficulty: bandOf(proven)}
}

// DailyReport is a daily deal's state on its day: Deal is nil until someone
// has played it; Ended is true once the day is over and none of its games
// still runs (then Deal's seed and salt may be shown, R6.6).
type DailyReport struct {
	Variant domain.Variant
	Rules   domain.Rules // the variant's default rules, which daily games use
	Day     string       // the UTC day, "2006-01-02" (UTCDay)
	Deal    *DailyDeal
	Ended   bool
	Results Results
}

// Daily settles variant's daily deal of day ("2006-01-02", UTC, not after
// today by Games.Now) and reports it: once the day is over, games still
// running are closed (resigned, R2.7) first. Errors:
// *domain.UnknownVariantError, *FieldError (date: malformed, or after today), or
// the store's.
func (c *Competitions) Daily(ctx context.Context, variant, day string) (*DailyReport, error) {
	v, err := domain.LookupVariant(variant)
	if err != nil {
		return nil, err
	}
	today := UTCDay(c.Games.Now())
	if day == "" {
		day = today
	}
	if t, err := time.Parse(time.DateOnly, day); err != nil || UTCDay(t) != day {
		return nil, &FieldError{Field: "date", Detail: "date must be a UTC date as YYYY-MM-DD, e.g. 2026-11-29"}
	}
	if day > today {
		return nil, &FieldError{Field: "date", Detail: "date must not be after today (" + today + " UTC)"}
	}
	rules, _, err := v.Resolve(domain.Options{})
	if err != nil {
		return nil, err
	}
	over := day < today
	games, err := c.settleDaily(ctx, v.ID, day, over)
	if err != nil {
		return nil, err
	}
	out := &DailyReport{Variant: v, Rules: rules, Day: day, Ended: over}
	for _, g := range games {
		out.Ended = out.Ended && g.Status != domain.StatusInProgress
	}
	if out.Results, err = c.results(ctx, games, true); err != nil {
		return nil, err
	}
	out.Deal, err = c.Store.FindDailyDeal(ctx, v.ID, day)
	if errors.Is(err, domain.ErrNotFound) {
		out.Deal, err = nil, nil
	}
	return out, err
}

// settleDaily returns the daily games of variant on day; once the day is
// over it first closes (resigns) those still running, so the deal can be
// revealed (the sweeper does the same in the background, CloseDue).
func (c *Competitions) settleDaily(ctx context.Context, variant, day string, over bool) ([]Game, error) {
	games, err := c.Store.DailyGames(ctx, variant, day)
	if err != nil || !over {
		return games, err
	}
	changed := false
	for _, g := range games {
		if g.Status != domain.StatusInProgress {
			continue
		}
		ended, err := c.Games.CloseGame(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		changed = changed || ended
	}
	if !changed {
		return games, nil
	}
	return c.Store.DailyGames(ctx, variant, day)
}
