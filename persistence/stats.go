package persistence

import (
	"context"
	"strings"
	"time"

	"github.com/openpatience/solitaire/domain/app"
)

// MaxLeaderboard is the longest leaderboard Leaderboard returns.
const MaxLeaderboard = 500

// PlayedGames returns owner's ranked games in which at least one move was
// made (what app.ComputeStats counts), of variant unless it is "", with
// draw count draw unless it is 0, dealt from a winnable deal or from a
// random one as winnable says (R7.2 keeps the two apart), oldest first.
// Unranked games (a client's seed or layout, changed options) are never
// returned, nor a flagged game or one whose row records another result
// than its leaf (see Leaderboard).
func (s *Store) PlayedGames(ctx context.Context, owner, variant string, draw int, winnable bool) ([]app.Game, error) {
	where := []string{"owner = ?", "ranked", "moves >= 1", "winnable = ?", "flagged_at IS NULL",
		"NOT EXISTS (SELECT 1 FROM tlog_leaves l WHERE l.game_id = games.id AND " + resultDiffers + ")"}
	args := []any{owner, winnable}
	if variant != "" {
		where, args = append(where, "variant = ?"), append(args, variant)
	}
	if draw != 0 {
		where, args = append(where, "draw = ?"), append(args, draw)
	}
	out, err := s.queryGames(ctx, `SELECT `+gameColumns+` FROM games WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, wrap("played games", err)
	}
	return out, nil
}

// Leaderboard returns the best ranked win of each player in variant with
// draw count draw, on winnable deals or on random ones as winnable says
// (R7.2), best first: higher score first (a variant without
// scoring has none, so it does not order), then shorter time, then fewer
// moves, then game id, the order of app.RankStandings. A win counts if
// it finished in [from, to); a zero from or to does not bound. At most
// limit games (1..MaxLeaderboard; out of range means MaxLeaderboard).
//
// Only verified facts count (docs/transparency.md "Boards"): a win counts
// once its game has a leaf in the transparency log, its games row records
// the result the leaf's replayed log gave (Log.Sequence writes it beside
// the leaf), and it is not flagged; so a client can check every entry
// against the log (`solitaire verify-leaderboard`), and a row changed in
// the database drops off the board at once.
func (s *Store) Leaderboard(ctx context.Context, variant string, draw int, winnable bool, from, to time.Time, limit int) ([]app.Game, error) {
	if limit < 1 || limit > MaxLeaderboard {
		limit = MaxLeaderboard
	}
	where := []string{"games.ranked", "games.status = 'won'", "games.variant = ?", "games.draw = ?", "games.winnable = ?",
		"games.flagged_at IS NULL", "NOT " + resultDiffers}
	args := []any{variant, draw, winnable}
	if !from.IsZero() {
		where, args = append(where, "games.finished_at >= ?"), append(args, millis(from))
	}
	if !to.IsZero() {
		where, args = append(where, "games.finished_at < ?"), append(args, millis(to))
	}
	const order = `COALESCE(score, 0) DESC, elapsed_ms, moves, id`
	const inner = `COALESCE(games.score, 0) DESC, games.elapsed_ms, games.moves, games.id`
	q := `SELECT ` + gameColumns + ` FROM (
			SELECT games.*, ROW_NUMBER() OVER (PARTITION BY games.owner ORDER BY ` + inner + `) AS best
			FROM games JOIN tlog_leaves l ON l.game_id = games.id WHERE ` + strings.Join(where, " AND ") + `
		) ranked_wins WHERE best = 1 ORDER BY ` + order + ` LIMIT ?`
	out, err := queryGamesOn(s.boardDB(ctx), q, append(args, limit)...)
	if err != nil {
		return nil, wrap("leaderboard", err)
	}
	return out, nil
}

// PlayerNames returns the display names of the players with the given ids;
// unknown ids are left out.
func (s *Store) PlayerNames(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.WithContext(ctx).Raw(`SELECT id, name FROM players WHERE id IN ?`, ids).Rows()
	if err != nil {
		return nil, wrap("player names", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, wrap("player names", err)
		}
		out[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("player names", err)
	}
	return out, nil
}
