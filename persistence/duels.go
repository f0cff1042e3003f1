package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// SeatTTL is how long a duel seat may wait for its game: a seat taken
// longer ago whose game was never dealt (the server stopped between the two
// steps) no longer holds the duel open, and its player may join again.
const SeatTTL = time.Minute

var _ app.CompetitionStore = (*Store)(nil)

const duelColumns = `id, variant, rules, options, ranked, created_by, seed, salt, commitment,
	created_at, deadline_at, max_players, ended_at, winnable, solution, difficulty`

// CreateDuel stores d (EndedAt is ignored: a new duel has not ended).
// Errors: domain.ErrConflict if the id exists; "persistence: create duel:
// ..." for an id of 0 or more than 64 bytes, a salt that is not 32 bytes,
// MaxPlayers outside app.MinDuelPlayers..MaxDuelPlayers, and database
// failures.
func (s *Store) CreateDuel(ctx context.Context, d *app.Duel) error {
	switch {
	case d == nil || d.ID == "" || len(d.ID) > 64:
		return errors.New("persistence: create duel: id of 1..64 bytes required")
	case len(d.Salt) != 32:
		return fmt.Errorf("persistence: create duel: salt of %d bytes, want 32", len(d.Salt))
	case d.MaxPlayers < app.MinDuelPlayers || d.MaxPlayers > app.MaxDuelPlayers:
		return fmt.Errorf("persistence: create duel: max players %d, want %d..%d", d.MaxPlayers,
			app.MinDuelPlayers, app.MaxDuelPlayers)
	}
	rules, options, err := encodeDeal(d.Rules, d.Options)
	if err != nil {
		return fmt.Errorf("persistence: create duel: %w", err)
	}
	err = s.db.WithContext(ctx).Exec(`INSERT INTO duels (`+duelColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
		d.ID, d.Variant, string(rules), string(options), d.Ranked, d.CreatedBy,
		strconv.FormatUint(d.Seed, 10), d.Salt, d.Commitment, millis(d.CreatedAt), millis(d.Deadline),
		d.MaxPlayers, d.Winnable, solutionText(d.Winnable, d.Solution), d.Difficulty).Error
	return wrap("create duel", err)
}

// Duel returns the duel with that id. Errors: domain.ErrNotFound.
func (s *Store) Duel(ctx context.Context, id string) (*app.Duel, error) {
	return byID(s, ctx, "duel", `SELECT `+duelColumns+` FROM duels WHERE id = ?`, id, scanDuel)
}

func scanDuel(r scanner) (*app.Duel, error) {
	var (
		d                 app.Duel
		cols              dealColumns
		created, deadline int64
		ended             sql.NullInt64
	)
	if err := scanRow(r, &d.ID, &d.Variant, &cols.rules, &cols.options, &d.Ranked, &d.CreatedBy, &cols.seed, &d.Salt,
		&d.Commitment, &created, &deadline, &d.MaxPlayers, &ended, &d.Winnable, &cols.solution, &d.Difficulty); err != nil {
		return nil, err
	}
	if err := cols.decode("duel "+d.ID, &d.Rules, &d.Options, &d.DealSecret); err != nil {
		return nil, err
	}
	d.CreatedAt, d.Deadline = fromMillis(created), fromMillis(deadline)
	if ended.Valid {
		t := fromMillis(ended.Int64)
		d.EndedAt = &t
	}
	return &d, nil
}

// TakeDuelSeat gives player a seat in duel duelID at instant now, the step
// before the player's game is dealt: under the duel's row lock it refuses a
// duel that has ended (the end is recorded when due, see EndDuel), whose
// deadline is at or before now, or whose MaxPlayers seats are all taken
// (by a dealt game, or by a seat younger than SeatTTL), and otherwise
// stores the seat. A seat of the player's older than SeatTTL whose game
// was never dealt is given up first. It reports whether the seat was taken
// (false: joining has closed). Errors: domain.ErrNotFound for an unknown
// duel; domain.ErrConflict if the player already has a seat (DuelGameOf
// names its game).
func (s *Store) TakeDuelSeat(ctx context.Context, duelID, player string, now time.Time) (bool, error) {
	taken := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		over, err := s.endDuelLocked(tx, duelID, now)
		if err != nil || over {
			return err
		}
		var deadline, players int64
		if err := tx.Raw(`SELECT deadline_at, max_players FROM duels WHERE id = ?`, duelID).Row().
			Scan(&deadline, &players); err != nil {
			return err
		}
		if deadline <= millis(now) {
			return nil
		}
		if err := tx.Exec(`DELETE FROM duel_seats WHERE duel_id = ? AND player = ? AND taken_at <= ?
			AND NOT EXISTS (SELECT 1 FROM games g WHERE g.duel_id = duel_seats.duel_id AND g.owner = duel_seats.player)`,
			duelID, player, millis(now.Add(-SeatTTL))).Error; err != nil {
			return err
		}
		var mine, seated int64
		if err := tx.Raw(`SELECT COUNT(*) FROM duel_seats WHERE duel_id = ? AND player = ?`, duelID, player).Row().
			Scan(&mine); err != nil {
			return err
		}
		if mine > 0 {
			return domain.ErrConflict
		}
		if err := tx.Raw(`SELECT COUNT(*) FROM duel_seats st WHERE st.duel_id = ? AND (st.taken_at > ?
			OR EXISTS (SELECT 1 FROM games g WHERE g.duel_id = st.duel_id AND g.owner = st.player))`,
			duelID, millis(now.Add(-SeatTTL))).Row().Scan(&seated); err != nil {
			return err
		}
		if seated >= players {
			return nil
		}
		if err := tx.Exec(`INSERT INTO duel_seats (duel_id, player, taken_at) VALUES (?, ?, ?)`,
			duelID, player, millis(now)).Error; err != nil {
			return err
		}
		taken = true
		return tx.Exec(`UPDATE duels SET seats = seats + 1 WHERE id = ?`, duelID).Error
	})
	if err != nil {
		return false, wrap("take duel seat", err)
	}
	return taken, nil
}

// LeaveDuelSeat gives up player's seat in duel duelID if no game was dealt
// for it (dealing failed). No error if there is no such seat.
func (s *Store) LeaveDuelSeat(ctx context.Context, duelID, player string) error {
	err := s.db.WithContext(ctx).Exec(`DELETE FROM duel_seats WHERE duel_id = ? AND player = ?
		AND NOT EXISTS (SELECT 1 FROM games g WHERE g.duel_id = duel_seats.duel_id AND g.owner = duel_seats.player)`,
		duelID, player).Error
	return wrap("leave duel seat", err)
}

// DuelGameOf returns the id of player's game in the duel (or daily deal,
// whose games carry a duel id too) duelID. Errors: domain.ErrNotFound if
// the player has none.
func (s *Store) DuelGameOf(ctx context.Context, duelID, player string) (string, error) {
	var id string
	err := s.db.WithContext(ctx).Raw(`SELECT id FROM games WHERE duel_id = ? AND owner = ?
		ORDER BY created_at, id LIMIT 1`, duelID, player).Row().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", domain.ErrNotFound
	}
	if err != nil {
		return "", wrap("duel game", err)
	}
	return id, nil
}

// DuelGames returns the games whose duel id is duelID (a duel's, or a daily
// deal's), oldest first, with their projections (for standings,
// app.RankStandings).
func (s *Store) DuelGames(ctx context.Context, duelID string) ([]app.Game, error) {
	out, err := s.queryGames(ctx, `SELECT `+gameColumns+` FROM games WHERE duel_id = ? ORDER BY created_at, id`, duelID)
	if err != nil {
		return nil, wrap("duel games", err)
	}
	return out, nil
}

// EndDuel reports whether the duel duelID has ended at instant now,
// recording its end the first time it finds it due (app.CompetitionStore).
//
// A duel closes at its deadline, or earlier once all its MaxPlayers seats
// hold a game and every one of them has ended (RULES R6.6); it has ended
// once it has closed and none of its games is still running (the sweeper,
// app.Games.CloseDue, resigns those after the deadline) and no seat is
// waiting for its game. EndedAt is when the last game finished for a full
// duel, else the deadline. An unknown id has not ended. Errors: database
// failures only.
func (s *Store) EndDuel(ctx context.Context, duelID string, now time.Time) (bool, error) {
	db := s.db.WithContext(ctx)
	var ended sql.NullInt64
	err := db.Raw(`SELECT ended_at FROM duels WHERE id = ?`, duelID).Row().Scan(&ended)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, wrap("end duel", err)
	case ended.Valid:
		return true, nil
	}
	over := false
	err = db.Transaction(func(tx *gorm.DB) error {
		var err error
		over, err = s.endDuelLocked(tx, duelID, now)
		return err
	})
	if err != nil {
		return false, wrap("end duel", err)
	}
	return over, nil
}

// endDuelLocked locks duel duelID's row (inside tx), records its end if it
// is due (see EndDuel) and reports whether it has ended. ErrNotFound if
// there is no such duel.
func (s *Store) endDuelLocked(tx *gorm.DB, duelID string, now time.Time) (bool, error) {
	q := `SELECT deadline_at, max_players, ended_at FROM duels WHERE id = ?`
	if s.dialect == DialectPostgres {
		q += ` FOR UPDATE` // SQLite's immediate transactions already hold the write lock
	}
	var (
		deadline, players int64
		ended             sql.NullInt64
	)
	err := tx.Raw(q, duelID).Row().Scan(&deadline, &players, &ended)
	if errors.Is(err, sql.ErrNoRows) {
		return false, domain.ErrNotFound
	}
	if err != nil {
		return false, err
	}
	if ended.Valid {
		return true, nil
	}
	var (
		games, running, pending int64
		last                    sql.NullInt64
	)
	err = tx.Raw(`SELECT
			(SELECT COUNT(*) FROM games WHERE duel_id = ?),
			(SELECT COUNT(*) FROM games WHERE duel_id = ? AND status = 'in_progress'),
			(SELECT COUNT(*) FROM duel_seats st WHERE st.duel_id = ? AND st.taken_at > ?
				AND NOT EXISTS (SELECT 1 FROM games g WHERE g.duel_id = st.duel_id AND g.owner = st.player)),
			(SELECT MAX(finished_at) FROM games WHERE duel_id = ?)`,
		duelID, duelID, duelID, millis(now.Add(-SeatTTL)), duelID).Row().Scan(&games, &running, &pending, &last)
	if err != nil {
		return false, err
	}
	full := games >= players
	if running > 0 || pending > 0 || (!full && deadline > millis(now)) {
		return false, nil
	}
	at := deadline
	if full && last.Valid {
		at = last.Int64
	}
	if err := tx.Exec(`UPDATE duels SET ended_at = ? WHERE id = ?`, at, duelID).Error; err != nil {
		return false, err
	}
	return true, nil
}

// queryGames runs a query that selects gameColumns and scans every row.
func (s *Store) queryGames(ctx context.Context, q string, args ...any) ([]app.Game, error) {
	return queryGamesOn(s.db.WithContext(ctx), q, args...)
}

// queryGamesOn is queryGames on db (the primary's or the replica's).
func queryGamesOn(db *gorm.DB, q string, args ...any) ([]app.Game, error) {
	rows, err := db.Raw(q, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.Game{}
	for rows.Next() {
		g, err := scanGame(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *g)
	}
	return out, rows.Err()
}

// EnsureDailyDeal returns the stored deal of d.Variant and d.Day, storing
// d first if there is none: racing first players of a day all get the one
// row that was stored first. Errors: "persistence: daily deal: ..." for a
// salt that is not 32 bytes and for database failures.
func (s *Store) EnsureDailyDeal(ctx context.Context, d app.DailyDeal) (*app.DailyDeal, error) {
	if len(d.Salt) != 32 {
		return nil, fmt.Errorf("persistence: daily deal: salt of %d bytes, want 32", len(d.Salt))
	}
	err := s.db.WithContext(ctx).Exec(`INSERT INTO daily_deals (variant, day, seed, salt, commitment, created_at,
			winnable, solution, difficulty)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (variant, day) DO NOTHING`,
		d.Variant, d.Day, strconv.FormatUint(d.Seed, 10), d.Salt, d.Commitment, millis(d.CreatedAt),
		d.Winnable, solutionText(d.Winnable, d.Solution), d.Difficulty).Error
	if err != nil {
		return nil, wrap("daily deal", err)
	}
	return s.FindDailyDeal(ctx, d.Variant, d.Day)
}

// FindDailyDeal returns the deal of variant on day ("2006-01-02"). Errors:
// domain.ErrNotFound if nobody has played that day's deal.
func (s *Store) FindDailyDeal(ctx context.Context, variant, day string) (*app.DailyDeal, error) {
	d := app.DailyDeal{Variant: variant, Day: day}
	var (
		seed, solution string
		created        int64
	)
	err := s.db.WithContext(ctx).Raw(`SELECT seed, salt, commitment, created_at, winnable, solution, difficulty
		FROM daily_deals WHERE variant = ? AND day = ?`, variant, day).Row().
		Scan(&seed, &d.Salt, &d.Commitment, &created, &d.Winnable, &solution, &d.Difficulty)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, wrap("daily deal", err)
	}
	if d.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return nil, fmt.Errorf("persistence: daily deal %s %s: seed: %w", variant, day, err)
	}
	if d.Solution, err = solutionOf(d.Winnable, solution); err != nil {
		return nil, fmt.Errorf("persistence: daily deal %s %s: solution: %w", variant, day, err)
	}
	d.CreatedAt = fromMillis(created)
	return &d, nil
}

// DailyGameOf returns the id of owner's daily game of variant on day.
// Errors: domain.ErrNotFound if there is none.
func (s *Store) DailyGameOf(ctx context.Context, owner, variant, day string) (string, error) {
	var id string
	err := s.db.WithContext(ctx).Raw(`SELECT id FROM games WHERE owner = ? AND variant = ? AND daily_date = ?`,
		owner, variant, day).Row().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", domain.ErrNotFound
	}
	if err != nil {
		return "", wrap("daily game", err)
	}
	return id, nil
}

// DailyGames returns the daily games of variant on day, oldest first.
func (s *Store) DailyGames(ctx context.Context, variant, day string) ([]app.Game, error) {
	out, err := s.queryGames(ctx, `SELECT `+gameColumns+` FROM games WHERE variant = ? AND daily_date = ?
		ORDER BY created_at, id`, variant, day)
	if err != nil {
		return nil, wrap("daily games", err)
	}
	return out, nil
}
