package persistence

import (
	"context"
	"strings"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// MaxLeaderboard is the longest leaderboard Leaderboard returns.
const MaxLeaderboard = 500

// PlayedGames returns owner's ranked games in which at least one move was
// made (what domain.ComputeStats counts), of variant unless it is "", with
// draw count draw unless it is 0, dealt from a winnable deal or from a
// random one as winnable says (R7.2 keeps the two apart), oldest first.
// Unranked games (a client's seed or layout, changed options) are never
// returned.
func (s *Store) PlayedGames(ctx context.Context, owner, variant string, draw int, winnable bool) ([]domain.Game, error) {
	where := []string{"owner = ?", "ranked", "moves >= 1", "winnable = ?"}
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
// moves, then game id, the order of domain.RankStandings. A win counts if
// it finished in [from, to); a zero from or to does not bound. At most
// limit games (1..MaxLeaderboard; out of range means MaxLeaderboard).
func (s *Store) Leaderboard(ctx context.Context, variant string, draw int, winnable bool, from, to time.Time, limit int) ([]domain.Game, error) {
	if limit < 1 || limit > MaxLeaderboard {
		limit = MaxLeaderboard
	}
	where := []string{"ranked", "status = 'won'", "variant = ?", "draw = ?", "winnable = ?"}
	args := []any{variant, draw, winnable}
	if !from.IsZero() {
		where, args = append(where, "finished_at >= ?"), append(args, millis(from))
	}
	if !to.IsZero() {
		where, args = append(where, "finished_at < ?"), append(args, millis(to))
	}
	const order = `COALESCE(score, 0) DESC, elapsed_ms, moves, id`
	q := `SELECT ` + gameColumns + ` FROM (
			SELECT games.*, ROW_NUMBER() OVER (PARTITION BY owner ORDER BY ` + order + `) AS best
			FROM games WHERE ` + strings.Join(where, " AND ") + `
		) ranked_wins WHERE best = 1 ORDER BY ` + order + ` LIMIT ?`
	out, err := s.queryGames(ctx, q, append(args, limit)...)
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
