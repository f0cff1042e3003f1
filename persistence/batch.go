package persistence

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Group commit of appends. On PostgreSQL a move's append is one
// statement (appendMany), and the commit's cost (a transaction, a WAL
// record and its flush, a round trip) is most of it. When several games'
// appends wait at the same moment, the appender writes them as one
// statement in one transaction: the conditional updates of every games
// row and the inserts of every event. Each append keeps its own outcome
// (done or ErrConflict), exactly as if it had run alone, and
// a caller hears of its append only after the batch has committed.
//
// No append waits for company: a batch is what queued while the previous
// batch of its shard was being written, so a lone append goes out at once
// (a batch of one, written by its caller's goroutine: writeIdle) and
// batches grow only under load.
//
// Appends are sharded by game: one game's appends go to one shard, and a
// shard writes one batch at a time holding at most one append per game, so
// in this process one game is never in two batches at once and a batch
// never updates one row twice. The statement locks its games rows in id
// order before it updates them, so two processes' batches cannot deadlock
// on each other (TestBatchLockOrder). When PostgreSQL refuses a batch
// statement (an error of severity ERROR: the statement's transaction
// rolled back, nothing was written), the appender writes that batch's
// appends one at a time, so one bad append cannot fail the others. Any
// other failure (an outage, a failure after the statement may have run)
// fails the whole batch, each caller getting ErrUnavailable: the outcome
// is unknown, as with any commit when the connection dies on its way.

// batchShards is how many batches may be in flight at once, each on its
// own connection. Fewer shards make larger batches, which cost the
// database and this process less per append; more let a batch start while
// another commits, and a batch held up on a row lock (another process's
// append to one of its games) then stalls only its shard's games. One
// shard: at 16 clients it halves the commits per move (0.15 against 0.30)
// and costs less CPU per move here and in PostgreSQL; at 64 the two are
// within the noise of solitaire-load compare (BENCHMARKS.md, "Group
// commit"). A row lock is held only for another append's own short
// transaction.
const batchShards = 1

// batchMaxGames bounds the appends of one batch, batchMaxEvents its
// events (an autocomplete appends dozens), so that one statement stays
// short.
const (
	batchMaxGames  = 64
	batchMaxEvents = 2048
)

// batchTimeout bounds one append statement (a batch's or a lone
// append's), so that a database that stops answering without closing the
// connection (a network partition, a frozen primary) holds up a shard for
// at most that long once the statement has its connection. A shard's
// batch waits for its connection under a context of that bound too; a
// lone append waits under its caller's context, and a new connection's
// dial is bounded by the URL's connect_timeout (DefaultConnectTimeout if
// none). A batch of the shard's goroutine does not run under
// any caller's context (it serves many): a caller that gives up stops
// waiting, and the batch goes on. A lone append its caller writes
// (writeIdle) runs under the caller's context too, so a caller that gives
// up stops it.
//
// The bound is kept by the appender's watch, not by a context with a
// timer per statement: such a context (a timer, and its registration with
// the caller's context) cost about 1 % of a move's CPU at one client and
// seven allocations. The watch looks every batchTimeout/8 and cuts the
// connection of a statement past the bound (watch), so a statement ends
// between batchTimeout and 9/8 of it; its callers hear ErrUnavailable (the
// outcome is unknown, as with any failure mid-commit).
const batchTimeout = 30 * time.Second

// appendReq is one append handed to the appender.
type appendReq struct {
	ctx      context.Context // the caller's: checked before the append is written
	gameID   string
	expected int
	recs     []domain.RecordedEvent // chained from the head at expected
	p        app.Projection         // the games row after the append
	after    *domain.State          // the caller's, unchanged from Append on (app.Store): the cache takes it
	unrank   bool                   // a hint_given among recs: ranked becomes false (R7.3)
	receipt  *app.Receipt           // written with the events (receipt rows of appendManySQL); nil if none
	// done (buffered 1) carries the outcome, after the commit, to a
	// caller whose append went through a shard's queue; an append its
	// caller wrote itself (writeIdle) keeps it in out instead, sparing a
	// channel and a select per move below a few hundred moves a second.
	done chan error
	out  error // errUntold until told
}

// errUntold is the outcome of a lone append nobody told: a bug, never
// taken for success.
var errUntold = errors.New("persistence: append: no outcome")

// tell gives r's caller its outcome (tell is called once per append).
func (r *appendReq) tell(err error) {
	if r.done != nil {
		r.done <- err
		return
	}
	r.out = err
}

// appender queues appends per shard and writes them in batches. The zero
// value is ready; close stops it.
type appender struct {
	mu      sync.RWMutex // held for reading while sending to a shard
	started bool
	closed  bool
	shards  [batchShards]chan *appendReq
	// writing[i] is held while a batch of shard i is written, by the
	// shard's goroutine or by a caller writing its own append (submit).
	writing [batchShards]sync.Mutex
	seed    maphash.Seed
	wg      sync.WaitGroup

	// running holds the connections writing an append statement, each
	// with when its statement began (begin, end), for watch; timeout is
	// the bound it keeps (batchTimeout; shorter in tests), stop ends it
	// once the shards have ended (watching, its own wait group).
	runMu    sync.Mutex
	running  map[*pgconn.PgConn]time.Time
	timeout  time.Duration
	stop     chan struct{}
	watching sync.WaitGroup

	// counters for AppendStats
	batches, batched, fallbacks atomic.Int64
}

// AppendStats is what the appender did so far (Store.AppendStats).
type AppendStats struct {
	Batches   int64 // statements that wrote more than one game's append
	Batched   int64 // appends written by those statements
	Fallbacks int64 // batch statements that failed and were written one append at a time
}

// AppendStats reports the appender's counters (PostgreSQL; zero on SQLite,
// whose appends are transactions).
func (s *Store) AppendStats() AppendStats {
	a := &s.appender
	return AppendStats{Batches: a.batches.Load(), Batched: a.batched.Load(), Fallbacks: a.fallbacks.Load()}
}

// errStoreClosed is the outcome of an append after Close: the database is
// out of reach for this store (503 with Retry-After at the API).
var errStoreClosed = fmt.Errorf("persistence: store closed: %w", ErrUnavailable)

// submit queues r in its game's shard, starting the shards on first use.
// It fails after close, or with r.ctx's error if the caller gives up while
// the shard's queue is full.
func (a *appender) submit(s *Store, r *appendReq) error {
	a.mu.RLock()
	if !a.started && !a.closed {
		a.mu.RUnlock()
		a.start(s)
		a.mu.RLock()
	}
	defer a.mu.RUnlock()
	if a.closed {
		return errStoreClosed
	}
	i := maphash.String(a.seed, r.gameID) % batchShards
	if a.writeIdle(s, i, r) {
		return nil
	}
	r.done = make(chan error, 1)
	select {
	case a.shards[i] <- r:
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// writeIdle writes r at once, in the caller's goroutine and under its
// context, as a batch of one, if shard i looks idle: nothing in its queue
// and no batch being written. It reports whether it did (r.out then
// holds the outcome). Below a few hundred moves per second most appends
// find the shard idle; writing it here spares the two goroutine hand-offs
// of the queue (the shard's goroutine woken, then the caller), each of
// which wakes a second thread on an idle machine (BENCHMARKS.md, "Design
// choices on the move path"). An append the shard's goroutine has taken
// from the queue but not yet written may be overtaken: harmless, since
// the writing mutex keeps one statement per shard at a time (no batch
// updates a game twice) and appends of one game in flight together start
// from the same version, so at most one of them is written.
func (a *appender) writeIdle(s *Store, i uint64, r *appendReq) bool {
	if len(a.shards[i]) > 0 || !a.writing[i].TryLock() {
		return false
	}
	defer a.writing[i].Unlock()
	if len(a.shards[i]) > 0 { // queued meanwhile: they go first
		return false
	}
	s.writeBatch(r.ctx, []*appendReq{r})
	return true
}

// start makes the shards and their goroutines, once.
func (a *appender) start(s *Store) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.closed {
		return
	}
	a.started = true
	a.seed = maphash.MakeSeed()
	if a.timeout <= 0 {
		a.timeout = batchTimeout
	}
	a.stop = make(chan struct{})
	a.watching.Add(1)
	go func() {
		defer a.watching.Done()
		a.watch(s)
	}()
	for i := range a.shards {
		a.shards[i] = make(chan *appendReq, 256)
		a.wg.Add(1)
		go func(in chan *appendReq, writing *sync.Mutex) {
			defer a.wg.Done()
			a.run(s, in, writing)
		}(a.shards[i], &a.writing[i])
	}
}

// close stops taking appends, writes those queued (each statement still
// bounded by the watch), waits for the shards to end, then stops the
// watch. Idempotent.
func (a *appender) close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	if a.started {
		for _, c := range a.shards {
			close(c)
		}
	}
	a.mu.Unlock()
	a.wg.Wait()
	if a.stop != nil {
		close(a.stop)
		a.watching.Wait()
	}
}

// begin records that c starts an append statement now (watch).
func (a *appender) begin(c *pgconn.PgConn) {
	now := time.Now()
	a.runMu.Lock()
	if a.running == nil {
		a.running = map[*pgconn.PgConn]time.Time{}
	}
	a.running[c] = now
	a.runMu.Unlock()
}

// end records that c's append statement is over. If watch cut it just as
// it ended on its own, c is open and healthy: its deadline is lifted, so
// that the pool's next statement on it is not cut too.
func (a *appender) end(c *pgconn.PgConn) {
	a.runMu.Lock()
	if since, ok := a.running[c]; ok && since.IsZero() && !c.IsClosed() {
		_ = c.Conn().SetDeadline(time.Time{})
	}
	delete(a.running, c)
	a.runMu.Unlock()
}

// watch keeps batchTimeout (a.timeout) until close: every eighth of it,
// each connection whose statement has run longer gets a deadline of now,
// as a cancelled context would (pgx's deadline handler): its wait for an
// answer fails at once, and pgx then sends PostgreSQL the cancel request
// and closes the connection. Cut statements are marked with a zero time,
// under the same lock as end, so that a deadline is never left on a
// connection whose statement has ended.
func (a *appender) watch(s *Store) {
	tick := time.NewTicker(a.timeout / 8)
	defer tick.Stop()
	for {
		select {
		case <-a.stop:
			return
		case now := <-tick.C:
			a.runMu.Lock()
			for c, since := range a.running {
				if !since.IsZero() && now.Sub(since) >= a.timeout {
					_ = c.Conn().SetDeadline(now)
					a.running[c] = time.Time{}
					s.log.Warn("persistence: append statement past its time limit; its connection is cut", "limit", a.timeout)
				}
			}
			a.runMu.Unlock()
		}
	}
}

// run is one shard: it writes what queued while it was busy as one batch,
// holding back to the next batch a second append of a game already in it.
func (a *appender) run(s *Store, in chan *appendReq, writing *sync.Mutex) {
	var held []*appendReq // appends of games already in the batch
	for {
		var batch []*appendReq
		games := map[string]bool{}
		events := 0
		add := func(r *appendReq) bool {
			if len(batch) > 0 && (len(batch) == batchMaxGames || events+len(r.recs) > batchMaxEvents) {
				return false
			}
			if games[r.gameID] {
				return false
			}
			batch, games[r.gameID], events = append(batch, r), true, events+len(r.recs)
			return true
		}
		rest := held[:0:0]
		for _, r := range held {
			if !add(r) {
				rest = append(rest, r)
			}
		}
		held = rest
		if len(batch) == 0 { // nothing held (a held append fits an empty batch)
			if in == nil {
				return // closed and drained
			}
			r, ok := <-in
			if !ok {
				return
			}
			add(r)
		}
		writing.Lock()
	drain:
		for len(batch) < batchMaxGames && in != nil {
			select {
			case r, ok := <-in:
				if !ok {
					in = nil // closed: what is held is written, then run ends
					break drain
				}
				if err := r.ctx.Err(); err != nil { // its caller has gone
					r.tell(err)
					continue
				}
				if !add(r) {
					// Held to the next batch; stop here, so that what
					// is queued stays in the queue (whose bound makes
					// submitters wait) rather than in held.
					held = append(held, r)
					break drain
				}
			default:
				break drain
			}
		}
		// The batch serves many callers, so it runs under none of their
		// contexts; this one bounds its wait for a connection too.
		ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
		s.writeBatch(ctx, batch)
		cancel()
		writing.Unlock()
	}
}

// writeBatch writes the appends of batch (at most one per game) under
// parent (the shard's: Background; a lone caller's: its own context) and
// tells each caller its outcome. Appends whose caller has gone are dropped
// unwritten. If the database refuses the statement of several appends,
// they are written one at a time, so one bad append fails only itself.
func (s *Store) writeBatch(parent context.Context, batch []*appendReq) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.tell(err)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	// In id order, as the statement locks the rows (only tidier logs).
	slices.SortFunc(live, func(x, y *appendReq) int { return strings.Compare(x.gameID, y.gameID) })
	err := s.write(parent, live)
	if len(live) == 1 || !refusedWhole(err) {
		return // every caller has been told
	}
	s.appender.fallbacks.Add(1)
	s.log.Debug("persistence: batch append refused; appending one at a time", "appends", len(live), "err", err)
	var down error // once the outcome is unknown (an outage), the rest fail alike
	for _, r := range live {
		switch {
		case r.ctx.Err() != nil:
			r.tell(r.ctx.Err())
		case down != nil:
			r.tell(down)
		default:
			if err := s.write(parent, []*appendReq{r}); err != nil && !refusedWhole(err) {
				down = unknownOutcome(err)
			}
		}
	}
}

// write writes reqs in one statement (appendMany) and tells each caller
// its outcome: done, ErrConflict, the database's refusal of a lone
// append, or ErrUnavailable when the outcome is unknown. Only when the
// database refused a statement of several appends (nothing was written)
// is nobody told: writeBatch then writes them one at a time. The
// statement runs under parent, for at most batchTimeout (watch). It
// returns the statement's error.
func (s *Store) write(parent context.Context, reqs []*appendReq) error {
	var (
		inserted []int
		err      error
	)
	if len(reqs) == 1 {
		inserted, err = s.appendOne(parent, reqs[0])
	} else {
		inserted, err = s.appendMany(parent, reqs)
	}
	switch {
	case err != nil && refusedWhole(err):
		if len(reqs) == 1 {
			reqs[0].tell(err) // its own refusal (a unique version taken: a conflict)
		}
	case err != nil:
		// An outage, or a failure after the statement may have run: the
		// outcome is unknown, so nothing is tried again (the caller
		// re-reads, as after any outage during a commit). A caller that
		// gave up while writing its own append (writeIdle) hears its
		// context's error, as when it stops waiting for a batch: the
		// append may have been written.
		for _, r := range reqs {
			if perr := parent.Err(); perr != nil {
				r.tell(perr)
				continue
			}
			r.tell(unknownOutcome(err))
		}
	default:
		if len(reqs) > 1 {
			s.appender.batches.Add(1)
			s.appender.batched.Add(int64(len(reqs)))
		}
		for i, r := range reqs {
			switch n := inserted[i]; {
			case n == len(r.recs):
				s.finish(r, nil)
			case n == 0:
				// The version condition did not match: a conflict. (The
				// game exists: an append reaches the appender only once
				// its head was found, in the cache or the log, and games
				// are never deleted.)
				s.finish(r, domain.ErrConflict)
			default: // cannot happen: the row matched, so every event went in
				s.finish(r, unknownOutcome(fmt.Errorf("game %s: %d of %d events inserted", r.gameID, n, len(r.recs))))
			}
		}
	}
	return err
}

// unknownOutcome marks err as ErrUnavailable (503: the client re-reads)
// unless it already is one.
func unknownOutcome(err error) error {
	if isUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w: batch append, outcome unknown: %w", ErrUnavailable, err)
}

// refusedWhole reports whether err is PostgreSQL refusing a statement
// (severity ERROR, not a connection or shutdown condition): the implicit
// transaction of that one statement rolled back, so nothing of it was
// written. FATAL and PANIC errors can follow a commit, so they do not
// count.
func refusedWhole(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || isUnavailable(err) {
		return false
	}
	severity := pe.SeverityUnlocalized
	if severity == "" {
		severity = pe.Severity
	}
	return severity == "ERROR"
}

// receiptRefused reports whether err is a unique violation of the
// idempotency records' key: an append's receipt met a record of its key
// (alive, or expired and not yet deleted). Nothing of the statement was
// written.
func receiptRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgUniqueViolation && pe.ConstraintName == "idempotency_keys_pkey"
}

// finish tells r's caller err, after the cache and the live streams have
// taken a successful append (took; r's state is the store's from Append
// on, and its records the appender's own: the cache keeps both as they
// are).
func (s *Store) finish(r *appendReq, err error) {
	if err == nil {
		s.took(r.gameID, r.expected, r.after, r.p, r.recs, true, r.unrank)
	}
	r.tell(err)
}

// appendManySQL is the statement of appendMany. It has the same text
// whatever the batch's size (PostgreSQL and pgx prepare it once per
// connection): one array per column. It locks the batch's games rows in id
// order first (l: ORDER BY then FOR NO KEY UPDATE locks rows in sort
// order), and the update touches only rows l has locked, so every batch in
// every process takes its row locks in one order and batches cannot
// deadlock. The events are inserted in array order, so each game's events
// take rising positions.
const appendManySQL = `WITH i AS (
		SELECT * FROM unnest($1::text[], $2::integer[], $3::integer[], $4::text[], $5::integer[], $6::integer[],
			$7::bigint[], $8::bigint[], $9::bigint[], $25::boolean[])
			AS i (id, expected, version, status, moves, score, elapsed_ms, finished_at, updated_at, unrank)
	), l AS MATERIALIZED (
		SELECT id FROM games WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE
	), g AS (
		UPDATE games SET version = i.version, status = i.status, moves = i.moves, score = i.score,
			elapsed_ms = i.elapsed_ms, finished_at = i.finished_at, updated_at = i.updated_at,
			ranked = games.ranked AND NOT i.unrank
		FROM i JOIN l ON l.id = i.id WHERE games.id = i.id AND games.version = i.expected RETURNING games.id
	)
	, k AS (
		INSERT INTO idempotency_keys (owner, "key", fingerprint, status, body, created_at, expires_at,
			game_id, first_version, last_version)
		SELECT r.owner, r.akey, r.fingerprint, 0, ''::bytea, r.created_at, r.expires_at, r.game_id, r.first, r.last
		FROM unnest($17::text[], $18::text[], $19::bytea[], $20::bigint[], $21::bigint[], $22::text[],
			$23::integer[], $24::integer[])
			AS r (owner, akey, fingerprint, created_at, expires_at, game_id, first, last)
		WHERE r.game_id IN (SELECT id FROM g)
	)
	INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
	SELECT e.game_id, e.version, e.type, e.payload, e.occurred_at, e.prev_hash, e.hash
	FROM unnest($10::text[], $11::integer[], $12::text[], $13::bytea[], $14::bigint[], $15::bytea[], $16::bytea[])
		WITH ORDINALITY AS e (game_id, version, type, payload, occurred_at, prev_hash, hash, k)
	WHERE e.game_id IN (SELECT id FROM g)
	ORDER BY e.k
	RETURNING game_id, version, position`

// appendMany is Append in one statement on PostgreSQL, for one or several
// games (one append each) chained from their stream heads' hashes
// (appendManySQL): every conditional update of a games row, then
// the events of the rows that matched. It fills in the positions of the
// inserted records and returns how many events of each append went in:
// all of them or, when its version condition did not match, none.
func (s *Store) appendMany(ctx context.Context, reqs []*appendReq) ([]int, error) {
	var (
		ids, statuses              []string
		expected, versions, moves  []int32
		scores                     []*int32
		elapsed, updated           []int64
		finished                   []*int64
		eGames, eTypes             []string
		eVersions                  []int32
		eTimes                     []int64
		ePayloads, ePrevs, eHashes [][]byte
		kOwners, kKeys, kGames     []string
		kPrints                    [][]byte
		kCreated, kExpires         []int64
		kFirst, kLast              []int32
		unranks                    []bool
	)
	for _, r := range reqs {
		p := r.p
		ids, statuses = append(ids, r.gameID), append(statuses, string(p.Status))
		expected, versions, moves = append(expected, int32(r.expected)), append(versions, int32(p.Version)), append(moves, int32(p.Moves))
		var score *int32
		if p.Score != nil {
			v := int32(*p.Score)
			score = &v
		}
		scores = append(scores, score)
		var at *int64
		if p.FinishedAt != nil {
			v := millis(*p.FinishedAt)
			at = &v
		}
		finished = append(finished, at)
		elapsed, updated = append(elapsed, p.ElapsedMS), append(updated, millis(p.UpdatedAt))
		unranks = append(unranks, r.unrank)
		if k := r.receipt; k != nil {
			created, expires := receiptTimes(k)
			kOwners, kKeys, kGames = append(kOwners, k.Owner), append(kKeys, k.Key), append(kGames, r.gameID)
			kPrints, kCreated, kExpires = append(kPrints, nonNil(k.Fingerprint)), append(kCreated, created), append(kExpires, expires)
			kFirst, kLast = append(kFirst, int32(r.expected+1)), append(kLast, int32(p.Version))
		}
		for _, e := range r.recs {
			eGames, eTypes = append(eGames, r.gameID), append(eTypes, string(e.Type))
			eVersions, eTimes = append(eVersions, int32(e.Version)), append(eTimes, millis(e.OccurredAt))
			ePayloads, ePrevs, eHashes = append(ePayloads, nonNil(e.Payload)), append(ePrevs, e.PrevHash), append(eHashes, e.Hash)
		}
	}
	index := make(map[string]int, len(reqs))
	for i, r := range reqs {
		index[r.gameID] = i
	}
	inserted := make([]int, len(reqs))
	err := s.withPgx(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, appendManySQL, ids, expected, versions, statuses, moves, pgtype.FlatArray[*int32](scores),
			elapsed, pgtype.FlatArray[*int64](finished), updated, eGames, eVersions, eTypes, byteas(ePayloads), eTimes,
			byteas(ePrevs), byteas(eHashes), kOwners, kKeys, byteas(kPrints), kCreated, kExpires, kGames, kFirst, kLast, unranks)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id       string
				version  int32
				position int64
			)
			if err := rows.Scan(&id, &version, &position); err != nil {
				return err
			}
			i, ok := index[id]
			if !ok {
				return fmt.Errorf("batch append: inserted an event of game %s, not in the batch", id)
			}
			r := reqs[i]
			if j := int(version) - r.expected - 1; j >= 0 && j < len(r.recs) {
				r.recs[j].Position = position
				inserted[i]++
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return inserted, nil
}

// appendOneSQL is appendManySQL for a batch of one append (the usual case
// below a few hundred moves per second) with a receipt or several events;
// one event without a receipt goes to appendEventSQL. The games row's
// values are scalars, not arrays, and there is no lock-ordering step (one
// row lock cannot take part in a deadlock of row locks), so the client
// encodes a third of the parameters and the server plans a simpler
// statement. The receipt, if
// any ($16 not null), is a row of idempotency_keys written only if the
// update matched; a key already taken fails the statement (a unique
// violation, as in appendManySQL).
const appendOneSQL = `WITH g AS (
		UPDATE games SET version = $3, status = $4, moves = $5, score = $6, elapsed_ms = $7,
			finished_at = $8, updated_at = $9, ranked = ranked AND NOT $21::boolean
		WHERE id = $1 AND version = $2 RETURNING id
	), k AS (
		INSERT INTO idempotency_keys (owner, "key", fingerprint, status, body, created_at, expires_at,
			game_id, first_version, last_version)
		SELECT $16::text, $17::text, $18::bytea, 0, ''::bytea, $19::bigint, $20::bigint, g.id, $2 + 1, $3
		FROM g WHERE $16::text IS NOT NULL
	)
	INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
	SELECT $1, e.version, e.type, e.payload, e.occurred_at, e.prev_hash, e.hash
	FROM unnest($10::integer[], $11::text[], $12::bytea[], $13::bigint[], $14::bytea[], $15::bytea[])
		WITH ORDINALITY AS e (version, type, payload, occurred_at, prev_hash, hash, k)
	WHERE EXISTS (SELECT 1 FROM g)
	ORDER BY e.k
	RETURNING version, position`

// appendEventSQL is appendOneSQL for the commonest move of all: one event
// and no receipt. Every value is a scalar and there is no receipt's
// insert, so the client encodes 16 parameters instead of 21 (six of them
// arrays) and PostgreSQL runs no unnest, ordering or second insert: the
// statement whose shape `solitaire-load floor` measures as "append".
const appendEventSQL = `WITH g AS (
		UPDATE games SET version = $3, status = $4, moves = $5, score = $6, elapsed_ms = $7,
			finished_at = $8, updated_at = $9, ranked = ranked AND NOT $10::boolean
		WHERE id = $1 AND version = $2 RETURNING id
	)
	INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
	SELECT g.id, $11::integer, $12::text, $13::bytea, $14::bigint, $15::bytea, $16::bytea FROM g
	RETURNING version, position`

// appendOne is appendMany for one append (appendOneSQL, or appendEventSQL
// for one event without a receipt): it fills in the positions of r's
// records and returns how many went in, all or none.
func (s *Store) appendOne(ctx context.Context, r *appendReq) ([]int, error) {
	p := r.p
	var score *int32
	if p.Score != nil {
		v := int32(*p.Score)
		score = &v
	}
	var finished *int64
	if p.FinishedAt != nil {
		v := millis(*p.FinishedAt)
		finished = &v
	}
	if len(r.recs) == 1 && r.receipt == nil {
		e := r.recs[0]
		return s.appendRows(ctx, r, appendEventSQL, r.gameID, int32(r.expected), int32(p.Version),
			string(p.Status), int32(p.Moves), score, p.ElapsedMS, finished, millis(p.UpdatedAt), r.unrank,
			int32(e.Version), string(e.Type), nonNil(e.Payload), millis(e.OccurredAt), e.PrevHash, e.Hash)
	}
	n := len(r.recs)
	versions, times := make([]int32, n), make([]int64, n)
	types := make([]string, n)
	payloads, prevs, hashes := make([][]byte, n), make([][]byte, n), make([][]byte, n)
	for i, e := range r.recs {
		versions[i], times[i], types[i] = int32(e.Version), millis(e.OccurredAt), string(e.Type)
		payloads[i], prevs[i], hashes[i] = nonNil(e.Payload), e.PrevHash, e.Hash
	}
	var (
		owner, key       *string
		print            []byte
		created, expires *int64
	)
	if k := r.receipt; k != nil {
		c, e := receiptTimes(k)
		owner, key, print, created, expires = &k.Owner, &k.Key, nonNil(k.Fingerprint), &c, &e
	}
	return s.appendRows(ctx, r, appendOneSQL, r.gameID, int32(r.expected), int32(p.Version),
		string(p.Status), int32(p.Moves), score, p.ElapsedMS, finished, millis(p.UpdatedAt),
		versions, types, byteas(payloads), times, byteas(prevs), byteas(hashes), owner, key, print, created, expires, r.unrank)
}

// appendRows runs q with args: a statement that writes append r and
// returns the (version, position) of each event it inserted. It fills in
// the positions of r's records and returns how many went in.
func (s *Store) appendRows(ctx context.Context, r *appendReq, q string, args ...any) ([]int, error) {
	var inserted int
	err := s.withPgx(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		inserted, err = setPositions(rows, r.recs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return []int{inserted}, nil
}

// byteas is a bytea[] parameter as pgx's generic array type: pgx wraps a
// plain [][]byte in a reflection-based array for each statement, an
// allocation that pgtype.FlatArray does not need (the same bytes on the
// wire).
func byteas(b [][]byte) pgtype.FlatArray[[]byte] { return pgtype.FlatArray[[]byte](b) }

// withPgx runs fn on a connection of the pool, as pgx's own connection:
// an append's statement goes straight to pgx, without database/sql's
// statement path (which starts a goroutine per query to watch its
// context, a thread woken per move on an idle machine). A connection
// found closed before fn runs is dropped from the pool and another one
// tried, as database/sql does for its own statements, and so is a
// failure pgx reports as safe to retry (nothing was sent); fn's other
// errors are returned as they are.
func (s *Store) withPgx(ctx context.Context, fn func(*pgx.Conn) error) error {
	for range 3 {
		err := s.onPgx(ctx, fn)
		// SafeToRetry: the statement was never sent (pgx's database/sql
		// driver turns such a failure into driver.ErrBadConn too, so that
		// database/sql tries another connection).
		if !errors.Is(err, driver.ErrBadConn) && !pgconn.SafeToRetry(err) {
			return err
		}
	}
	return s.onPgx(ctx, fn)
}

// onPgx is one try of withPgx: driver.ErrBadConn if the connection it got
// is closed (database/sql then closes it too).
func (s *Store) onPgx(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx", dc)
		}
		if c.Conn().IsClosed() {
			return driver.ErrBadConn
		}
		pc := c.Conn().PgConn()
		s.appender.begin(pc) // its statement is bounded by batchTimeout (watch)
		defer s.appender.end(pc)
		return fn(c.Conn())
	})
}
