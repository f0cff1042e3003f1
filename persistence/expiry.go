package persistence

import (
	"context"
	"time"

	"github.com/openpatience/solitaire/domain/app"
)

var (
	_ app.DueFinder     = (*Store)(nil)
	_ app.ClosingFinder = (*Store)(nil)
)

// DueForExpiry returns the ids of up to limit games in progress whose time
// limit ran out at or before now (RULES R5.3), earliest deadline first: the
// games app.Games.ExpireDue expires. The deadline is the column
// games.deadline_at, written by Create (ruleColumns: created_at +
// time_limit_s, R5.2), indexed for games in progress. limit below 1
// means 100.
func (s *Store) DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit < 1 {
		limit = 100
	}
	ids, err := s.queryIDs(ctx, `SELECT id FROM games
		WHERE status = 'in_progress' AND deadline_at IS NOT NULL AND deadline_at <= ?
		ORDER BY deadline_at, id LIMIT ?`, millis(now), limit)
	if err != nil {
		return nil, wrap("due for expiry", err)
	}
	return ids, nil
}

// DueForClosing returns the ids of up to limit games still in progress
// whose competition closed at or before now: games of a duel whose
// deadline has passed, and daily games of a UTC day before now's. These
// are what app.Games.CloseDue resigns, so that the duel can end and the
// day's deal be revealed without showing a running game its own cards.
// limit below 1 means 100.
func (s *Store) DueForClosing(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit < 1 {
		limit = 100
	}
	ids, err := s.queryIDs(ctx, `SELECT g.id FROM games g JOIN duels d ON d.id = g.duel_id
			WHERE g.status = 'in_progress' AND d.ended_at IS NULL AND d.deadline_at <= ?
		UNION ALL
		SELECT id FROM games WHERE status = 'in_progress' AND daily_date <> '' AND daily_date < ?
		LIMIT ?`, millis(now), app.UTCDay(now), limit)
	if err != nil {
		return nil, wrap("due for closing", err)
	}
	return ids, nil
}

func (s *Store) queryIDs(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
