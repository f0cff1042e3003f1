package persistence

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// insertBatch bounds the rows of one INSERT (7 parameters each), well
// under both dialects' parameter limits.
const insertBatch = 500

// Append adds events, versions expected+1, expected+2, ..., to stream
// gameID in one transaction: the conditional update of games.version and
// of the projection (after.Projection, computed by the caller) decides;
// then the events are inserted, chained from the stream head's hash
// (domain.Record), which the state cache knows or the append reads. Each
// database has one write path: on PostgreSQL one statement, written with
// the appends of other games that wait at the same moment (appendMany,
// batch.go); on SQLite one database/sql transaction (appendSQLite). If the
// new version crosses a multiple of Config.SnapshotEvery, a snapshot of
// after.State is written once the append has committed, off the append's
// path (snapshots.go). After the commit the cache takes after, and live
// streams hear of it (Subscribe): on PostgreSQL through a pg_notify on
// NotifyChannel sent after the commit (notifier), so only a commit
// notifies; on SQLite in-process.
//
// Errors: domain.ErrNotFound for an unknown game; domain.ErrConflict if
// the stream's version is not expected (another writer appended first),
// with nothing written; "persistence: append: ..." for events or a state
// that do not fit expected (empty, versions out of sequence,
// after.State.Version not the last event's, a time not UTC in whole
// milliseconds, an event of an unknown type) and for database failures.
// Either every event is stored or none is. The payloads are not decoded
// again: they are the caller's events encoded (domain.EncodePayload), and
// every event the rules emit decodes to itself
// (TestPropertyRandomPlayAllVariants), so a caller that appends events
// of its own making must hold them to that.
//
// It returns the records stored, Position included, as copies the caller
// may keep. after.State is the store's from the call on (on PostgreSQL the
// cache keeps it without a copy): the caller may read it and must not
// change it. A receipt (nil: none) is written in the same statement or
// transaction as an idempotency record naming gameID and versions
// expected+1..after.State.Version; when its key is taken by a record that
// has not expired, nothing is written and the error matches
// app.ErrReceiptTaken.
func (s *Store) Append(ctx context.Context, gameID string, expected int, events []domain.Event, after app.After, receipt *app.Receipt) ([]domain.RecordedEvent, error) {
	if len(events) == 0 {
		return nil, errors.New("persistence: append: no events")
	}
	for i, e := range events {
		if want := expected + 1 + i; e.Version != want {
			return nil, fmt.Errorf("persistence: append: event %d has version %d, want %d", i, e.Version, want)
		}
		if err := checkEvent(e); err != nil {
			return nil, fmt.Errorf("persistence: append: %w", err)
		}
	}
	last := expected + len(events)
	if after.State == nil || after.State.Version != last || after.Projection.Version != last {
		return nil, fmt.Errorf("persistence: append: state after is not at version %d", last)
	}
	// A hint makes the game unranked from then on (R7.3): the one change
	// of the record's ranked column, made by the same statement.
	unrank := false
	for _, e := range events {
		unrank = unrank || e.Type == domain.EventHintGiven
	}
	a := appendArgs{gameID: gameID, expected: expected, events: events, after: after, unrank: unrank, receipt: receipt}
	var (
		recs []domain.RecordedEvent
		err  error
	)
	if s.dialect == DialectPostgres {
		recs, err = s.appendPostgres(ctx, a)
	} else {
		recs, err = s.appendSQLite(ctx, a)
	}
	if err != nil {
		return nil, wrap("append", err)
	}
	return recs, nil
}

// appendArgs are the arguments of one Append, checked.
type appendArgs struct {
	gameID   string
	expected int
	events   []domain.Event
	after    app.After
	unrank   bool // a hint_given among events: the record's ranked becomes false
	receipt  *app.Receipt
}

// appendPostgres is Append on PostgreSQL: one statement through the
// appender (batch.go). A receipt whose key meets a record refuses the
// whole statement; if that record has expired it is deleted and the
// append is submitted once more, else the key is taken.
func (s *Store) appendPostgres(ctx context.Context, a appendArgs) ([]domain.RecordedEvent, error) {
	head, err := s.headAt(ctx, s.sqlDB, a.gameID, a.expected)
	if err != nil {
		return nil, err
	}
	recs, err := domain.Record(a.gameID, head, a.events)
	if err != nil {
		return nil, err
	}
	for retried := false; ; retried = true {
		r := &appendReq{ctx: ctx, gameID: a.gameID, expected: a.expected, recs: recs, p: cloneProjection(a.after.Projection),
			after: a.after.State, unrank: a.unrank, receipt: a.receipt, out: errUntold}
		if err := s.appender.submit(s, r); err != nil {
			return nil, err
		}
		if r.done == nil { // written by this goroutine (writeIdle)
			err = r.out
		} else {
			select {
			case err = <-r.done:
			case <-ctx.Done():
				select {
				case err = <-r.done: // the outcome came at the same moment
				default:
					return nil, ctx.Err() // the batch goes on: the append may be written
				}
			}
		}
		if err == nil {
			// r.recs are the cache's now (finish): the caller gets copies.
			out := make([]domain.RecordedEvent, len(r.recs))
			for i, rec := range r.recs {
				out[i] = cloneRecord(rec)
			}
			return out, nil
		}
		if !receiptRefused(err) {
			return nil, err
		}
		// The receipt's key is in the table: taken, or held by a record
		// that has expired, which the statement cannot tell apart. Nothing
		// was written. An expired record is deleted and the append tried
		// once more (also when the record went meanwhile: the key may be
		// free); a second clash is a live record's.
		if retried || a.receipt == nil {
			return nil, app.ErrReceiptTaken
		}
		if err := s.dropExpiredReceipt(ctx, a.receipt); err != nil {
			return nil, err
		}
	}
}

// dropExpiredReceipt deletes the idempotency record of r's key if it has
// expired by r's time.
func (s *Store) dropExpiredReceipt(ctx context.Context, r *app.Receipt) error {
	created, _ := receiptTimes(r)
	_, err := s.sqlDB.ExecContext(ctx, s.Rebind(`DELETE FROM idempotency_keys WHERE owner = ? AND "key" = ? AND expires_at <= ?`),
		r.Owner, r.Key, created)
	return err
}

// queryer is what headAt reads with: the pool or a transaction.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// headAt is the hash of event number version of game id, the stream's
// head an append at expected version chains from: from the state cache
// when it holds the game at that version, else read with q. Errors:
// domain.ErrNotFound for an unknown game, domain.ErrConflict when the log
// has no such event because the game is behind version, a plain error
// when the game's row is at version and its event is missing (a corrupt
// log, never a lost race), or the database's.
func (s *Store) headAt(ctx context.Context, q queryer, id string, version int) ([]byte, error) {
	if head, ok := s.cache.head(id, version); ok {
		return head, nil
	}
	var head []byte
	err := q.QueryRowContext(ctx, s.Rebind(`SELECT hash FROM events WHERE game_id = ? AND version = ?`), id, version).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		var at int
		err := q.QueryRowContext(ctx, s.Rebind(`SELECT version FROM games WHERE id = ?`), id).Scan(&at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, domain.ErrNotFound
		case err != nil:
			return nil, err
		case at == version:
			return nil, fmt.Errorf("game %s has no event %d, its head", id, version)
		}
		return nil, domain.ErrConflict
	}
	return head, err
}

// took is what follows a committed append: the cache takes the state
// and the records (as they are when owned, else copies: the SQLite path
// hands over the records it also returns to its caller), the snapshot is
// queued if due, a hint's unranking reaches the cached record, and
// subscribers hear of it.
func (s *Store) took(gameID string, expected int, st *domain.State, p app.Projection, recs []domain.RecordedEvent,
	owned, unrank bool) {
	head := recs[len(recs)-1].Hash
	s.cache.store(gameID, st, p, head, recs, owned)
	if unrank {
		s.cache.unrank(gameID)
	}
	if s.snapshotDue(expected, st.Version) {
		if !owned {
			st = st.Clone() // the snapshot's own, as the cache has its own
		}
		s.snapshotLater(gameID, head, st)
	}
	s.appended(gameID, st.Version)
}

// appendSQLite is Append on SQLite: one database/sql transaction, without
// gorm's statement building (a good part of a move's CPU on SQLite), with
// the conditional update, the events' insert and the receipt.
func (s *Store) appendSQLite(ctx context.Context, a appendArgs) ([]domain.RecordedEvent, error) {
	// The wait for the connection ends with ctx; the transaction does not.
	// The driver watches a cancellable context with a goroutine per
	// statement (to interrupt SQLite), which cost a move more than its
	// statements' own work; the transaction takes microseconds once it
	// has the connection, so it runs to its end, as a submitted batch
	// does on PostgreSQL.
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx = context.WithoutCancel(ctx)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // a no-op after Commit
	p := a.after.Projection
	res, err := tx.ExecContext(ctx, `UPDATE games SET version = ?, status = ?, moves = ?, score = ?, elapsed_ms = ?,
			finished_at = ?, updated_at = ?, ranked = (ranked AND NOT ?) WHERE id = ? AND version = ?`,
		p.Version, string(p.Status), p.Moves, nullInt(p.Score), p.ElapsedMS,
		nullTime(p.FinishedAt), millis(p.UpdatedAt), a.unrank, a.gameID, a.expected)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		if _, err := s.headAt(ctx, tx, a.gameID, a.expected); err != nil {
			return nil, err // not found, or behind
		}
		return nil, domain.ErrConflict // ahead
	}
	// The update's version condition proved that event number expected
	// is the log's head (events never change): its hash is the cache's,
	// or read in this transaction.
	head, err := s.headAt(ctx, tx, a.gameID, a.expected)
	if errors.Is(err, domain.ErrConflict) { // the row was at expected: its event must be there
		return nil, fmt.Errorf("game %s has no event %d, its head", a.gameID, a.expected)
	}
	if err != nil {
		return nil, err
	}
	recs, err := domain.Record(a.gameID, head, a.events)
	if err != nil {
		return nil, err
	}
	if err := sqliteInsertEvents(ctx, tx, recs); err != nil {
		return nil, err
	}
	if r := a.receipt; r != nil {
		created, expires := receiptTimes(r)
		res, err := tx.ExecContext(ctx, receiptSQL, r.Owner, r.Key, nonNil(r.Fingerprint), []byte{},
			created, expires, a.gameID, a.expected+1, p.Version)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			return nil, app.ErrReceiptTaken
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	s.took(a.gameID, a.expected, a.after.State, p, recs, false, a.unrank)
	return recs, nil
}

// insertEventSQL inserts one event; its position is the new row's id.
const insertEventSQL = `INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)`

// sqliteInsertEvents inserts recs in tx, insertBatch at a time, and
// fills in their positions: one event (a move's usual append) by the row
// id the insert reports, with no result rows to read; more from the
// statement's RETURNING rows.
func sqliteInsertEvents(ctx context.Context, tx *sql.Tx, recs []domain.RecordedEvent) error {
	if len(recs) == 1 {
		r := &recs[0]
		res, err := tx.ExecContext(ctx, insertEventSQL, r.GameID, r.Version, string(r.Type), nonNil(r.Payload),
			millis(r.OccurredAt), r.PrevHash, r.Hash)
		if err != nil {
			return err
		}
		r.Position, err = res.LastInsertId()
		return err
	}
	for len(recs) > 0 {
		n := min(len(recs), insertBatch)
		q, args := insertEventsSQL(recs[:n])
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if err := allPositions(rows, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// insertEventsSQL is the insert of recs (at most insertBatch) with
// RETURNING version, position, and its arguments.
func insertEventsSQL(recs []domain.RecordedEvent) (string, []any) {
	var q strings.Builder
	q.WriteString(`INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash) VALUES `)
	args := make([]any, 0, 7*len(recs))
	for i, r := range recs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?)")
		args = append(args, r.GameID, r.Version, string(r.Type), nonNil(r.Payload), millis(r.OccurredAt),
			r.PrevHash, r.Hash)
	}
	q.WriteString(` RETURNING version, position`)
	return q.String(), args
}

// appended does what follows a committed append once the cache has taken
// the new state: subscribers hear of it (notify.go).
func (s *Store) appended(gameID string, version int) {
	s.notifyCommitted(gameID, version)
	s.published(gameID)
}

// checkEvent refuses an event whose time is not in the one form the log
// keeps (UTC, whole milliseconds, R5.1): the stored event would differ
// from the one the caller applied, and so would a replay from the state
// the caller hands over for a snapshot. It refuses an event of a type
// DecodeEvent does not know too: Load could not read it back.
func checkEvent(e domain.Event) error {
	if !e.Type.Known() {
		return fmt.Errorf("event %d: unknown event type %q", e.Version, e.Type)
	}
	if e.OccurredAt != domain.Millis(e.OccurredAt) {
		return fmt.Errorf("event %d: time %s is not UTC in whole milliseconds", e.Version, e.OccurredAt)
	}
	return nil
}

// insertEvents inserts recs and fills in their positions.
func insertEvents(tx *gorm.DB, recs []domain.RecordedEvent) error {
	for len(recs) > 0 {
		n := min(len(recs), insertBatch)
		q, args := insertEventsSQL(recs[:n])
		if err := scanPositions(tx, q, args, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// scanPositions runs the insert q and sets the Position of each of recs
// (one game's, by version) from what it returns.
func scanPositions(tx *gorm.DB, q string, args []any, recs []domain.RecordedEvent) error {
	rows, err := tx.Raw(q, args...).Rows()
	if err != nil {
		return err
	}
	return allPositions(rows, recs)
}

// positionRows are the rows of an insert's RETURNING version, position,
// as database/sql (*sql.Rows) and pgx (pgx.Rows) give them.
type positionRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// setPositions sets the Position of each of recs from rows of (version,
// position), the RETURNING rows of their insert. It returns how many of
// recs it set; the caller closes rows.
func setPositions(rows positionRows, recs []domain.RecordedEvent) (int, error) {
	n := 0
	for rows.Next() {
		var (
			version  int
			position int64
		)
		if err := rows.Scan(&version, &position); err != nil {
			return n, err
		}
		if i := version - recs[0].Version; i >= 0 && i < len(recs) {
			recs[i].Position = position
			n++
		}
	}
	return n, rows.Err()
}

// readPositions is setPositions on database/sql's rows, which it closes.
func readPositions(rows *sql.Rows, recs []domain.RecordedEvent) (int, error) {
	n, err := setPositions(rows, recs)
	return n, errors.Join(err, rows.Close())
}

// allPositions is readPositions for an insert that must have inserted
// every one of recs.
func allPositions(rows *sql.Rows, recs []domain.RecordedEvent) error {
	n, err := readPositions(rows, recs)
	if err == nil && n != len(recs) {
		err = fmt.Errorf("inserted %d of %d events", n, len(recs))
	}
	return err
}

// snapshotFormat identifies the encoding of snapshots.state: the JSON of
// domain.State with its undo record packed (snapshotcodec.go). Bump it
// when a change to domain.State, to Apply or to the codec makes old
// snapshots differ from a fresh replay or from what the codec reads; Load
// then ignores the old ones and replays, and new snapshots replace them as
// games go on.
const snapshotFormat = 4 // 2: undo operations packed (domain.Op); 3: the redo record (domain.RedoTurn); 4: the undo record in binary

// snapshotStretch bounds how far apart snapshots get: around version v
// the newest one is at most v/snapshotStretch events behind (snapshotStep).
// 4 rather than 8 halves the snapshot bytes a long game writes per move
// (255–260 against 265–279 µs of the server's CPU per move at one client
// in a game of thousands of moves, BENCHMARKS.md "Reading a game against
// log length") for a longer replay when such a game is read without the
// cache.
const snapshotStretch = 4

// snapshotStep is the distance between snapshots around version v, for
// the configured interval every > 0: every while v < 2×snapshotStretch×every
// (800 events by default), then every×2^k for v in
// [snapshotStretch×every×2^k, 2×snapshotStretch×every×2^k), k ≥ 1, so
// between v/(2×snapshotStretch) and v/snapshotStretch events. Why: a snapshot holds the undo record, which
// grows with the game (one turn per undoable move, unlimited in some
// variants), so at a fixed interval a long game's snapshots cost more and
// more per move (on one player's 10,000-move game, the write of a
// ~0.5 MB snapshot every 100 moves was the move latency's p99 on
// PostgreSQL). With the step growing with the version, the snapshot bytes
// written per move stay bounded (about 2×snapshotStretch turns' worth),
// and a load without the cache replays at most v/snapshotStretch events
// after the newest snapshot. Every step is a multiple of every, so games
// shorter than 2×snapshotStretch×every get the snapshots they always had.
func snapshotStep(every, v int) int {
	step := every
	for v >= 2*snapshotStretch*step {
		step *= 2
	}
	return step
}

// snapshotDue reports whether a stream going from version old to version
// new crosses a multiple of the snapshot step at new (snapshotStep).
func (s *Store) snapshotDue(old, new int) bool {
	if s.snapshotEvery <= 0 {
		return false
	}
	step := snapshotStep(s.snapshotEvery, new)
	return new/step > old/step
}

// writeSnapshot stores st (at st.Version, whose event has hash head). A
// state that does not encode is logged and skipped: snapshots only save
// time, and Load replays without one.
func (s *Store) writeSnapshot(tx *gorm.DB, gameID string, head []byte, st *domain.State) error {
	data, err := encodeSnapshot(st)
	if err != nil {
		s.log.Warn("persistence: snapshot skipped", "game", gameID, "version", st.Version, "err", err)
		return nil
	}
	return tx.Exec(`INSERT INTO snapshots (game_id, version, format, event_hash, state, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (game_id, version) DO NOTHING`,
		gameID, st.Version, snapshotFormat, head, data, millis(st.LastAt)).Error
}

// Load returns game id's record and its current state: the newest usable
// snapshot at or below the record's version, with the events after it
// applied (State.Apply), or a replay of the whole log when there is no
// usable snapshot (none, another format, undecodable, or taken from an
// event whose hash is no longer the stored one). The result equals
// domain.Replay of the stored events. A state whose replay found a fault
// (State.Fault) is returned as is. Errors: domain.ErrNotFound;
// "persistence: load: ..." for a log that does not decode or ends before
// the record's version, and for database failures.
func (s *Store) Load(ctx context.Context, id string) (*app.Game, *domain.State, error) {
	db := s.db.WithContext(ctx)
	g, err := s.loadRecord(db, id)
	if err != nil {
		return nil, nil, wrap("load", err)
	}
	// The cache holds the state at a version only if the log has it: the
	// row's version says the log has nothing newer (cache.go).
	if st, _, ok := s.cache.get(id, g.Version); ok {
		s.cache.keepRecord(id, g)
		if st.Hinted {
			g.Ranked = false // R7.3, whatever a cached record says
		}
		return g, st, nil
	}
	// Events are immutable and committed with the record that counts them,
	// so versions up to g.Version are all there, whatever commits meanwhile.
	st, head, err := s.fromSnapshot(db, id, g.Version)
	if err != nil {
		return nil, nil, wrap("load", err)
	}
	if st == nil {
		recs, err := readEvents(db, id, 0, g.Version, 0)
		if err != nil {
			return nil, nil, wrap("load", err)
		}
		st = &domain.State{}
		if err := applyRecorded(st, recs); err != nil {
			return nil, nil, wrap("load", err)
		}
		if len(recs) > 0 {
			head = recs[len(recs)-1].Hash
		}
	}
	if st.Version != g.Version && st.Fault == "" {
		return nil, nil, fmt.Errorf("persistence: load: game %s: log ends at version %d, record says %d",
			id, st.Version, g.Version)
	}
	if st.Version == g.Version {
		s.cache.put(id, st, app.ProjectionOf(st), head, nil)
		s.cache.keepRecord(id, g)
	}
	if st.Hinted {
		g.Ranked = false // R7.3, whatever a cached record says
	}
	return g, st, nil
}

// LoadForCommand is app.CommandLoader: the game and state from the
// state cache without any query when the cache holds both the game's
// record and a state, else Load's (verified true). A cached state is one
// the log had (the cache takes only committed and loaded states), though
// another store may have appended since; app.Games.Play decides on it
// and appends with its version as the expected one, so a stale state only
// costs a refused append (domain.ErrConflict) and a Load. This saves the
// games-row read a checked Load makes on every move. A cached state is the
// cache's own, not a copy: the caller only reads it (app.CommandLoader).
// Errors: those of Load.
func (s *Store) LoadForCommand(ctx context.Context, id string) (*app.Game, *domain.State, bool, error) {
	if g, st, ok := s.cache.command(id); ok {
		return g, st, false, nil
	}
	g, st, err := s.Load(ctx, id)
	return g, st, err == nil, err
}

// fromSnapshot rebuilds the state at version upTo from the newest usable
// snapshot and the events after it, and returns it with the hash of its
// last event; nil (and no error) if there is no usable snapshot.
func (s *Store) fromSnapshot(db *gorm.DB, id string, upTo int) (*domain.State, []byte, error) {
	var (
		version       int
		format        int
		head, encoded []byte
	)
	err := db.Raw(`SELECT version, format, event_hash, state FROM snapshots
		WHERE game_id = ? AND version <= ? ORDER BY version DESC LIMIT 1`, id, upTo).Row().
		Scan(&version, &format, &head, &encoded)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if format != snapshotFormat {
		return nil, nil, nil
	}
	st, err := decodeSnapshot(encoded)
	if err != nil || st.Version != version || st.Fault != "" {
		s.log.Warn("persistence: snapshot unusable, replaying", "game", id, "version", version, "err", err)
		return nil, nil, nil
	}
	// The snapshot's own event comes first, to check it is the one the
	// snapshot was taken after.
	recs, err := readEvents(db, id, version-1, upTo, 0)
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 || recs[0].Version != version || !bytes.Equal(recs[0].Hash, head) {
		s.log.Warn("persistence: snapshot does not match the log, replaying", "game", id, "version", version)
		return nil, nil, nil
	}
	if err := applyRecorded(st, recs[1:]); err != nil {
		return nil, nil, err
	}
	return st, recs[len(recs)-1].Hash, nil
}

// applyRecorded decodes recs and applies them to st in order.
func applyRecorded(st *domain.State, recs []domain.RecordedEvent) error {
	for _, r := range recs {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			return err
		}
		st.Apply(e)
	}
	return nil
}

// Events returns up to limit recorded events of game gameID with version >
// after, in version order (limit < 1: all of them). Errors:
// domain.ErrNotFound for an unknown game.
func (s *Store) Events(ctx context.Context, gameID string, after, limit int) ([]domain.RecordedEvent, error) {
	if recs, ok := s.cache.events(gameID, max(after, 0), limit); ok {
		return recs, nil // all limit of them: the log has them, and they never change
	}
	if recs, _, ok := s.replicaEvents(ctx, gameID, max(after, 0), limit); ok {
		return recs, nil
	}
	db := s.db.WithContext(ctx)
	recs, err := readEvents(db, gameID, max(after, 0), 0, limit)
	if err != nil {
		return nil, wrap("events", err)
	}
	if len(recs) == 0 {
		if _, err := s.gameVersion(db, gameID); err != nil {
			return nil, wrap("events", err)
		}
	}
	return recs, nil
}

// VerifyChain checks game gameID's stored log with domain.VerifyChain
// (versions 1..n in order, each linked to the previous hash, each hash
// recomputed from the stored bytes) and against the record's version (a
// missing or extra tail event counts as broken). It returns 0 if all is
// well, else the first broken version. Errors: domain.ErrNotFound.
func (s *Store) VerifyChain(ctx context.Context, gameID string) (int, error) {
	recs, version, ok := s.replicaEvents(ctx, gameID, 0, 0)
	if !ok {
		db := s.db.WithContext(ctx)
		var err error
		if version, err = s.gameVersion(db, gameID); err != nil {
			return 0, wrap("verify chain", err)
		}
		if recs, err = readEvents(db, gameID, 0, 0, 0); err != nil {
			return 0, wrap("verify chain", err)
		}
	}
	if bad := domain.VerifyChain(gameID, recs); bad != 0 {
		return bad, nil
	}
	if len(recs) != version {
		return min(len(recs), version) + 1, nil
	}
	return 0, nil
}

func (s *Store) gameVersion(db *gorm.DB, id string) (int, error) {
	var v int
	err := db.Raw(`SELECT version FROM games WHERE id = ?`, id).Row().Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, domain.ErrNotFound
	}
	return v, err
}

// readEvents reads the events of a game with after < version <= upTo (no
// upper bound for upTo 0), at most limit of them (no bound for limit 0),
// in version order.
func readEvents(db *gorm.DB, id string, after, upTo, limit int) ([]domain.RecordedEvent, error) {
	q := `SELECT position, version, type, payload, occurred_at, prev_hash, hash FROM events
		WHERE game_id = ? AND version > ?`
	args := []any{id, after}
	if upTo > 0 {
		q += ` AND version <= ?`
		args = append(args, upTo)
	}
	q += ` ORDER BY version`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := db.Raw(q, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.RecordedEvent
	for rows.Next() {
		r := domain.RecordedEvent{GameID: id}
		var typ string
		var at int64
		if err := rows.Scan(&r.Position, &r.Version, &typ, &r.Payload, &at, &r.PrevHash, &r.Hash); err != nil {
			return nil, err
		}
		r.Type = domain.EventType(typ)
		r.OccurredAt = fromMillis(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
