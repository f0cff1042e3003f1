package persistence

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// List limits: app's (app.GameFilter.PageSize; default 50).
const (
	DefaultListLimit = app.DefaultListLimit
	MaxListLimit     = app.MaxListLimit
)

const gameColumns = `id, variant, rules, options, owner, ranked, seed, has_seed, salt, commitment,
	duel_id, daily_date, created_at, status, version, moves, score, elapsed_ms, finished_at, updated_at, deal,
	winnable, solution, solution_commitment, difficulty`

// Create stores a new stream: the game record g, whose projection must be
// that of st (app.Game.Project), the state after first, and first, its game_dealt event
// at version 1, chained from domain.GenesisHash. g is not modified.
// Errors: domain.ErrConflict if the id exists, or if g is a daily game
// (DailyDate set) and its owner already has one for that variant and day;
// "persistence: create: ..." for arguments that do not fit (first not a
// version-1 game_dealt or its time not UTC in whole milliseconds, s not at
// version 1, an id of 0 or more than 64 bytes) and for database failures.
// A receipt (nil: none) is written in the same transaction, naming g.ID
// and version 1 (receiptSQL); app.ErrReceiptTaken if its key is taken.
func (s *Store) Create(ctx context.Context, g *app.Game, first domain.Event, st *domain.State, receipt *app.Receipt) error {
	switch {
	case g == nil || st == nil:
		return errors.New("persistence: create: nil game or state")
	case g.ID == "" || len(g.ID) > 64:
		return fmt.Errorf("persistence: create: id of %d bytes, want 1..64", len(g.ID))
	case first.Version != 1 || first.Type != domain.EventGameDealt:
		return fmt.Errorf("persistence: create: first event is %s at version %d, want game_dealt at 1",
			first.Type, first.Version)
	case st.Version != 1:
		return fmt.Errorf("persistence: create: state at version %d, want 1", st.Version)
	case g.Version != 1:
		return fmt.Errorf("persistence: create: the game's projection is at version %d, want 1 (app.Game.Project)", g.Version)
	}
	if err := checkEvent(first); err != nil {
		return fmt.Errorf("persistence: create: %w", err)
	}
	rec := *g
	recs, err := domain.Record(g.ID, domain.GenesisHash, []domain.Event{first})
	if err != nil {
		return fmt.Errorf("persistence: create: %w", err)
	}
	rules, options, err := encodeDeal(rec.Rules, rec.Options)
	if err != nil {
		return fmt.Errorf("persistence: create: %w", err)
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		draw, deadline := ruleColumns(rec.Rules, rec.CreatedAt)
		err := tx.Exec(`INSERT INTO games (`+gameColumns+`, draw, deadline_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, rec.Variant, string(rules), string(options), rec.Owner, rec.Ranked,
			strconv.FormatUint(rec.Seed, 10), rec.HasSeed, nonNil(rec.Salt), rec.Commitment,
			rec.CompetitionID, rec.DailyDate, millis(rec.CreatedAt),
			string(rec.Status), rec.Version, rec.Moves, nullInt(rec.Score), rec.ElapsedMS,
			nullTime(rec.FinishedAt), millis(rec.UpdatedAt), rec.Deal,
			rec.Winnable, solutionText(rec.Winnable, rec.Solution), rec.SolutionCommitment, rec.Difficulty,
			draw, deadline).Error
		if err != nil {
			return err
		}
		if err := insertEvents(tx, recs); err != nil {
			return err
		}
		if receipt != nil {
			if err := writeReceipt(tx, receipt, g.ID, 1, 1); err != nil {
				return err
			}
		}
		if s.snapshotDue(0, 1) {
			return s.writeSnapshot(tx, g.ID, recs[0].Hash, st)
		}
		return nil
	})
	if err == nil {
		s.cache.put(g.ID, st, rec.Projection, recs[0].Hash, recs)
		s.cache.keepRecord(g.ID, g)
	}
	return wrap("create", err)
}

// Game returns the record of game id with the projection of its latest
// state, without loading events. Errors: domain.ErrNotFound.
func (s *Store) Game(ctx context.Context, id string) (*app.Game, error) {
	return byID(s, ctx, "game", `SELECT `+gameColumns+` FROM games WHERE id = ?`, id, scanGame)
}

// byID reads the one row query (with one parameter, id) gives, with
// scan. Errors: domain.ErrNotFound for none, or the database's, wrapped
// as "persistence: what: ...".
func byID[T any](s *Store, ctx context.Context, what, query, id string, scan func(scanner) (*T, error)) (*T, error) {
	v, err := scan(s.db.WithContext(ctx).Raw(query, id).Row())
	if err != nil {
		return nil, wrap(what, err)
	}
	return v, nil
}

// List returns the games matching f, newest first (created_at, then id,
// descending), at most f.Limit of them (below 1 means DefaultListLimit,
// above MaxListLimit means MaxListLimit), and the cursor of the next page,
// "" when there is none. Zero fields of f do not filter. Pages are keyset
// pages: a game created between two calls never shifts a later page.
// Errors: app.ErrBadCursor for a cursor List did not make.
func (s *Store) List(ctx context.Context, f app.GameFilter) ([]app.Game, string, error) {
	limit := f.PageSize()
	var where []string
	var args []any
	if f.Owner != "" {
		where, args = append(where, "owner = ?"), append(args, f.Owner)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.Variant != "" {
		where, args = append(where, "variant = ?"), append(args, f.Variant)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		// A row-value comparison: both databases scan the (owner,)
		// created_at DESC, id DESC index from the cursor on.
		where, args = append(where, "(created_at, id) < (?, ?)"), append(args, c.CreatedAt, c.ID)
	}
	q := `SELECT ` + gameColumns + ` FROM games`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := s.db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, "", wrap("list", err)
	}
	defer rows.Close()
	var out []app.Game
	for rows.Next() {
		g, err := scanGame(rows)
		if err != nil {
			return nil, "", wrap("list", err)
		}
		out = append(out, *g)
	}
	if err := rows.Err(); err != nil {
		return nil, "", wrap("list", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = encodeCursor(cursor{CreatedAt: millis(last.CreatedAt), ID: last.ID})
	}
	return out, next, nil
}

// cursor is the position after the last game of a page. Encoded as
// base64url JSON; opaque to clients.
type cursor struct {
	CreatedAt int64  `json:"t"`
	ID        string `json:"i"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // cannot fail: an int and a string
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	// A NUL in the id could not be sent to PostgreSQL as text.
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" || strings.ContainsRune(c.ID, 0) {
		return cursor{}, app.ErrBadCursor
	}
	return c, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanRow scans r into dest; sql.ErrNoRows becomes domain.ErrNotFound.
func scanRow(r scanner, dest ...any) error {
	err := r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ErrNotFound
	}
	return err
}

// scanGame reads one row of gameColumns; sql.ErrNoRows becomes
// domain.ErrNotFound.
func scanGame(r scanner) (*app.Game, error) {
	var (
		g       app.Game
		d       dealColumns
		proj    projectionColumns
		created int64
	)
	if err := scanRow(r, &g.ID, &g.Variant, &d.rules, &d.options, &g.Owner, &g.Ranked, &d.seed, &g.HasSeed,
		&g.Salt, &g.Commitment, &g.CompetitionID, &g.DailyDate, &created, &proj.status, &g.Version, &g.Moves,
		&proj.score, &g.ElapsedMS, &proj.finished, &proj.updated, &g.Deal,
		&g.Winnable, &d.solution, &g.SolutionCommitment, &g.Difficulty); err != nil {
		return nil, err
	}
	if err := d.decode("game "+g.ID, &g.Rules, &g.Options, &g.DealSecret); err != nil {
		return nil, err
	}
	g.CreatedAt = fromMillis(created)
	proj.set(&g.Projection)
	return &g, nil
}

// dealColumns are the columns of a games or duels row that describe its
// deal, as scanned: the rules and options as JSON, the seed in decimal
// (a uint64 does not fit a signed column) and the winning line's text.
type dealColumns struct{ rules, options, seed, solution string }

// ruleColumns are the games row's draw and deadline_at columns of a game
// with rules r created at created, written once by its INSERT (rules and
// created_at never change after it; the migration
// 00009_plain_rule_columns.sql says why they are not generated columns):
// the draw count, 1 or 3, by which statistics and rankings are kept
// (docs/rules.md R3), and, for a game with a time limit (R5.3), when it
// runs out in ms since the epoch: created plus the limit, the clock
// starting at creation (R5.2); nil without a limit.
func ruleColumns(r domain.Rules, created time.Time) (draw int, deadline *int64) {
	if r.TimeLimitS > 0 {
		d := millis(created) + int64(r.TimeLimitS)*1000
		deadline = &d
	}
	return r.Draw, deadline
}

// encodeDeal is the rules and options columns of a deal: their JSON.
func encodeDeal(r domain.Rules, o domain.Options) (rules, options []byte, err error) {
	if rules, err = json.Marshal(r); err != nil {
		return nil, nil, fmt.Errorf("rules: %w", err)
	}
	if options, err = json.Marshal(o); err != nil {
		return nil, nil, fmt.Errorf("options: %w", err)
	}
	return rules, options, nil
}

// decode sets rules, options and secret's seed and solution (secret's
// Winnable already scanned) from c. what names the row in errors.
func (c dealColumns) decode(what string, rules *domain.Rules, options *domain.Options, secret *app.DealSecret) error {
	if err := json.Unmarshal([]byte(c.rules), rules); err != nil {
		return fmt.Errorf("%s: rules: %w", what, err)
	}
	if err := json.Unmarshal([]byte(c.options), options); err != nil {
		return fmt.Errorf("%s: options: %w", what, err)
	}
	var err error
	if secret.Seed, err = strconv.ParseUint(c.seed, 10, 64); err != nil {
		return fmt.Errorf("%s: seed: %w", what, err)
	}
	if secret.Solution, err = solutionOf(secret.Winnable, c.solution); err != nil {
		return fmt.Errorf("%s: solution: %w", what, err)
	}
	return nil
}

// projectionColumns are the projection columns of a games row that need
// converting, as scanned (version, moves and elapsed_ms scan directly).
type projectionColumns struct {
	status          string
	updated         int64
	score, finished sql.NullInt64
}

// set writes c into p.
func (c projectionColumns) set(p *app.Projection) {
	p.Status, p.UpdatedAt = domain.Status(c.status), fromMillis(c.updated)
	p.Score, p.FinishedAt = nil, nil
	if c.score.Valid {
		v := int(c.score.Int64)
		p.Score = &v
	}
	if c.finished.Valid {
		t := fromMillis(c.finished.Int64)
		p.FinishedAt = &t
	}
}

// solutionText is the stored form of a winnable deal's line: its
// canonical encoding (domain.EncodeLine), ” for a random deal.
func solutionText(winnable bool, line []domain.Move) string {
	if !winnable {
		return ""
	}
	return domain.EncodeLine(line)
}

// solutionOf reverses solutionText.
func solutionOf(winnable bool, s string) ([]domain.Move, error) {
	if !winnable {
		return nil, nil
	}
	return domain.DecodeLine(s)
}

// millis is the stored form of a time: milliseconds since the Unix epoch
// (sub-millisecond parts dropped). Exact for every time the server makes,
// the zero time included.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis reverses millis, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func nullTime(p *time.Time) any {
	if p == nil {
		return nil
	}
	return millis(*p)
}

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CountInProgress counts owner's games in progress, stopping at limit
// (the answer is min(count, limit); limit < 1 counts them all). It bounds
// the games a player may have open (api.Config.MaxGamesInProgress).
func (s *Store) CountInProgress(ctx context.Context, owner string, limit int) (int, error) {
	q := `SELECT count(*) FROM (SELECT 1 FROM games WHERE owner = ? AND status = ?`
	args := []any{owner, string(domain.StatusInProgress)}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	var n int
	err := s.db.WithContext(ctx).Raw(q+`) AS open_games`, args...).Row().Scan(&n)
	return n, wrap("count games in progress", err)
}
