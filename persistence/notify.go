package persistence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// NotifyChannel is the PostgreSQL channel of append notifications (LISTEN
// solitaire_events). Each Append sends one after its transaction commits
// (batched with other appends' by the store's notifier), so it is sent
// only for events that committed, after they are readable; a game's
// notices come in version order. The payload is the JSON of AppendNotice;
// it never carries event data: a listener reads the rows from the log.
const NotifyChannel = "solitaire_events"

// ListenerApplicationName is the application_name of the dedicated LISTEN
// connection, so operators (and tests) can find it in pg_stat_activity.
const ListenerApplicationName = "solitaire-listen"

// AppendNotice is the payload of one notification on NotifyChannel: the
// game whose log grew and its version after the append.
type AppendNotice struct {
	GameID  string `json:"game_id"`
	Version int    `json:"version"`
}

// Reconnect backoff and health check of the LISTEN connection.
const (
	listenBackoffMin = 100 * time.Millisecond
	// listenBackoffMax is short: after a failover, which leaves no
	// primary for a few seconds (RELIABILITY.md "Failover"), live streams
	// in other processes hear of appends again within a second of the
	// new primary taking writes; meanwhile an attempt a second costs the
	// database next to nothing.
	listenBackoffMax = time.Second
	// listenIdle is how long the listener waits for a notification before
	// it pings the server: a connection that died silently (a dropped
	// route, a failover) is noticed within this time, not at the next
	// append.
	listenIdle = 30 * time.Second
	listenPing = 5 * time.Second
)

// Subscribe returns a channel that receives a value after events are
// appended to game gameID, and a function that ends the subscription
// (idempotent; the channel is not closed). Values are wake-ups, not
// events: the channel holds at most one pending value, so several appends
// between two reads wake the subscriber once, and a subscriber reads the
// log from the last version it has. A value may also come without a new
// event (after the LISTEN connection reconnects, every subscriber is woken
// because notifications sent meanwhile are lost).
//
// Appends through this Store wake its subscribers on both dialects. On
// PostgreSQL, appends by any process wake them once Listen runs; on SQLite
// only this Store's own appends do (another process writing the same file
// goes unnoticed until the subscriber reads the log anyway).
func (s *Store) Subscribe(gameID string) (<-chan struct{}, func()) {
	return s.hub.subscribe(gameID)
}

// notifyCommitted tells subscribers in every process that gameID reached
// version, once the append has committed: on PostgreSQL it hands the
// notice to the store's notifier, which sends it with pg_notify soon after
// (to every LISTEN connection, this process's too); on SQLite it does
// nothing here: Append wakes this process's subscribers (published).
func (s *Store) notifyCommitted(gameID string, version int) {
	if s.dialect != DialectPostgres {
		return
	}
	if s.notifier.peers.solo() {
		// No other process listens: this process's subscribers are all
		// there is to wake, and a notification would cost a commit.
		s.hub.publish(gameID)
		return
	}
	s.notifier.add(s, gameID, version)
}

// peers tells whether another process listens on NotifyChannel, so that
// a process alone on its database sends no notifications at all (each
// send is a transaction: under a steady stream of moves they would be a
// fifth of all commits at one player). A process is alone (solo)
// only while its own LISTEN connection is up, helloGrace after it came
// up, as long as no other listener has shown itself: none was connected
// then or at a later check (pg_stat_activity, application_name
// ListenerApplicationName, as every version of the server names it), and
// no other store announced itself since (a hello notification, which
// each store sends when its LISTEN connection comes up and answers once
// per store it hears of). Once another listener has been seen, the
// process notifies until it restarts. A store that starts and finds peers
// wakes all its subscribers helloGrace after its LISTEN, so appends its
// peers made before they heard its hello are read.
type peers struct {
	id        string      // this store's, in its hellos
	listening atomic.Bool // LISTEN up for helloGrace
	seen      atomic.Bool // another listener exists or existed
	mu        sync.Mutex
	known     map[string]bool // ids of stores heard of
}

// helloGrace is how long a store waits after its LISTEN came up before it
// may count itself alone: its peers' answers to its hello arrive within it.
const helloGrace = 250 * time.Millisecond

// peerCheckEvery is how often the listener looks for other listeners in
// pg_stat_activity (one cheap query), for processes that do not announce
// themselves.
const peerCheckEvery = 30 * time.Second

func (p *peers) solo() bool { return p.listening.Load() && !p.seen.Load() }

// hello is the payload of a store's announcement on NotifyChannel.
type hello struct {
	Hello string `json:"hello"`
}

// heard records a hello from store id and reports whether it is another
// store heard of for the first time (which is answered).
func (p *peers) heard(id string) bool {
	if id == p.id {
		return false
	}
	p.seen.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil {
		p.known = map[string]bool{}
	}
	if p.known[id] {
		return false
	}
	p.known[id] = true
	return true
}

// announce sends this store's hello on the LISTEN connection.
func (s *Store) announce(ctx context.Context, conn *pgx.Conn) error {
	p := &s.notifier.peers
	if p.id == "" { // set once, by the listener's goroutine, which alone reads it
		var b [8]byte
		rand.Read(b[:])
		p.id = hex.EncodeToString(b[:])
	}
	b, _ := json.Marshal(hello{Hello: p.id}) // a string
	_, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", NotifyChannel, string(b))
	return err
}

// checkPeers marks peers seen if another listener is connected to the
// database.
func (s *Store) checkPeers(ctx context.Context, conn *pgx.Conn) error {
	var n int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`,
		ListenerApplicationName).Scan(&n)
	if err == nil && n > 0 {
		s.notifier.peers.seen.Store(true)
	}
	return err
}

// notifier sends the notifications of committed appends on PostgreSQL
// from one goroutine, in batches, outside the appends' transactions. A
// NOTIFY inside an append's transaction holds PostgreSQL's lock on the
// notification queue from pre-commit through the commit's WAL flush, so
// appends would commit one at a time instead of as a group: pgbench
// measured 311 single-INSERT transactions/s with a pg_notify in each
// against 3,900 without, at 64 clients (BENCHMARKS.md). Here one notify
// statement, committed without waiting for its WAL flush (it carries no
// data), serves every append that committed meanwhile. If the process
// stops between an append's commit and the send, subscribers in other
// processes miss that wake-up until the game's next append; this
// process's own are woken when a send fails. The zero value is ready;
// close stops it.
type notifier struct {
	peers   peers
	mu      sync.Mutex
	pending map[string]int // game id -> highest committed version not yet sent
	started bool
	closed  bool
	wake    chan struct{} // one pending value: pending has notices
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when the goroutine has ended
}

// notifyTimeout bounds one send of the notifier.
const notifyTimeout = 2 * time.Second

// add queues gameID's notice and starts the goroutine on first use. After
// close it does nothing.
func (n *notifier) add(s *Store, gameID string, version int) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	if !n.started {
		n.started = true
		n.pending = map[string]int{}
		n.wake, n.stop, n.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go n.run(s)
	}
	if v, ok := n.pending[gameID]; !ok || version > v {
		n.pending[gameID] = version
	}
	n.mu.Unlock()
	wake(n.wake)
}

// notifyEvery is the shortest time between two sends of the notifier: the
// notices of every append that commits meanwhile go out together. Each
// send is a transaction of its own, so under a steady stream of moves this
// keeps them to a few per second instead of one per move (one commit per
// move, BENCHMARKS.md), at the price of up to this much more lag on live
// streams in other processes.
const notifyEvery = 200 * time.Millisecond

// run sends what is pending whenever woken, at most once per notifyEvery,
// and once more on close.
func (n *notifier) run(s *Store) {
	defer close(n.done)
	for {
		select {
		case <-n.wake:
			n.send(s)
		case <-n.stop:
			n.send(s)
			return
		}
		select {
		case <-time.After(notifyEvery):
		case <-n.stop:
			n.send(s)
			return
		}
	}
}

// send takes every pending notice and sends them in one statement.
func (n *notifier) send(s *Store) {
	n.mu.Lock()
	pending := n.pending
	n.pending = map[string]int{}
	n.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	payloads := make([]string, 0, len(pending))
	for id, v := range pending {
		b, _ := json.Marshal(AppendNotice{GameID: id, Version: v}) // a string and an int
		payloads = append(payloads, string(b))
	}
	// Short: a wake-up is worth little late, and Close waits for this.
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	_, err := s.sqlDB.ExecContext(ctx, `SELECT pg_notify($1, p)
		FROM set_config('synchronous_commit', 'off', true), unnest($2::text[]) AS p`, NotifyChannel, payloads)
	if err != nil {
		s.log.Warn("persistence: append notifications not sent; waking this process's subscribers only",
			"count", len(payloads), "err", err)
		for id := range pending {
			s.hub.publish(id)
		}
	}
}

// close sends what is pending and stops the goroutine. Idempotent.
func (n *notifier) close() {
	n.mu.Lock()
	started, closed := n.started, n.closed
	n.closed = true
	n.mu.Unlock()
	if started && !closed {
		close(n.stop)
		<-n.done
	}
}

// published wakes this process's subscribers of gameID after an append
// committed, where no LISTEN connection does it (SQLite).
func (s *Store) published(gameID string) {
	if s.dialect != DialectPostgres || s.polling() {
		s.hub.publish(gameID)
	}
}

// polling reports whether Listen polls instead of listening (a pooler and
// no ListenURL): then this process's own appends wake its subscribers at
// once, as on SQLite, and other processes' within listenPoll.
func (s *Store) polling() bool { return s.pooled && s.listenURL == "" }

// Listen relays the append notifications of every process on the
// PostgreSQL database (LISTEN NotifyChannel) to this Store's subscribers
// until ctx is done, then returns nil. It holds one dedicated connection,
// made with the settings of the store's pool, outside the pool; when the
// connection fails it reconnects with exponential backoff (100 ms doubling
// up to 1 s), logging a warning, and wakes every subscriber after each
// (re)connect, since notifications sent while it was away are lost. An
// idle connection is pinged every 30 s. The connection is made to
// Config.ListenURL if set. Behind a transaction pooler without ListenURL
// (a LISTEN there hears nothing once its transaction ends) it does not
// listen: this process's appends wake their subscribers at once, and
// every subscriber is woken each 0.5 s for other processes' appends
// (pollSubscribers).
// On SQLite it returns nil at once: appends notify in-process.
func (s *Store) Listen(ctx context.Context) error {
	if s.dialect != DialectPostgres {
		return nil
	}
	if s.polling() {
		s.log.Warn("persistence: DATABASE_URL is a connection pooler and no listen URL is set: " +
			"live streams hear of other servers' appends within 0.5 s by polling, not at once; " +
			"set SOLITAIRE_LISTEN_DATABASE_URL to a direct URL of the database")
		s.pollSubscribers(ctx, listenPoll)
		return nil
	}
	backoff := listenBackoffMin
	var cfg *pgx.ConnConfig
	for {
		var err error
		if cfg == nil {
			cfg, err = s.listenConfig(ctx)
		}
		if err == nil {
			err = s.listenOnce(ctx, cfg, func() { backoff = listenBackoffMin })
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("persistence: LISTEN connection lost, reconnecting", "channel", NotifyChannel,
			"retry_in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenPoll is the interval of pollSubscribers: each wakes every stream,
// which reads its game's log once.
const listenPoll = 500 * time.Millisecond

// pollSubscribers wakes every subscriber each interval until ctx is done.
func (s *Store) pollSubscribers(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.hub.publishAll()
		}
	}
}

// listenConfig is the LISTEN connection's configuration: Config.ListenURL
// if set, else a copy of the connection settings of the store's pool (the
// URL it was opened with, as pgx parsed it).
func (s *Store) listenConfig(ctx context.Context) (*pgx.ConnConfig, error) {
	if s.listenURL != "" {
		cfg, err := pgx.ParseConfig(s.listenURL)
		if err != nil {
			return nil, fmt.Errorf("listen URL: %w", err)
		}
		cfg.RuntimeParams["application_name"] = ListenerApplicationName
		return cfg, nil
	}
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var cfg *pgx.ConnConfig
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx", dc)
		}
		cfg = c.Conn().Config()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	// The copy still carries the pool connection's notification handler;
	// without one, pgx buffers this connection's own for
	// WaitForNotification.
	cfg.OnNotification = nil
	return cfg, nil
}

// listenOnce connects, listens and relays notifications until the
// connection fails (an error) or ctx is done (nil). connected is called
// once the LISTEN is in place.
func (s *Store) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return err
	}
	peers := &s.notifier.peers
	if err := s.announce(ctx, conn); err != nil {
		return err
	}
	if err := s.checkPeers(ctx, conn); err != nil {
		return err
	}
	connected()
	s.log.Debug("persistence: listening", "channel", NotifyChannel)
	s.hub.publishAll()
	grace := time.AfterFunc(helloGrace, func() {
		peers.listening.Store(true)
		if peers.seen.Load() {
			s.hub.publishAll() // appends of peers that had not yet heard the hello
		}
	})
	defer func() {
		grace.Stop()
		peers.listening.Store(false) // notices are lost meanwhile: notify through PostgreSQL
	}()
	checked := time.Now()
	for {
		if time.Since(checked) >= peerCheckEvery {
			if err := s.checkPeers(ctx, conn); err != nil && ctx.Err() == nil {
				return fmt.Errorf("peers: %w", err)
			}
			checked = time.Now()
		}
		wctx, cancel := context.WithTimeout(ctx, min(listenIdle, peerCheckEvery))
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			if n == nil {
				continue
			}
			var notice struct {
				AppendNotice
				hello
			}
			if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil || (notice.GameID == "" && notice.Hello == "") {
				s.log.Warn("persistence: malformed notification ignored", "channel", n.Channel, "payload", n.Payload)
				continue
			}
			if notice.Hello != "" {
				if peers.heard(notice.Hello) {
					if err := s.announce(ctx, conn); err != nil && ctx.Err() == nil {
						return fmt.Errorf("hello: %w", err)
					}
				}
				continue
			}
			s.cache.behind(notice.GameID, notice.Version)
			s.hub.publish(notice.GameID)
		case (pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)) && !conn.IsClosed():
			// Idle: make sure the connection is still there.
			pctx, cancel := context.WithTimeout(ctx, listenPing)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return err
		}
	}
}

// hub fans wake-ups out to the subscribers of each game in this process.
// The zero value is ready to use.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// subscribe registers a subscriber of gameID (see Store.Subscribe).
func (h *hub) subscribe(gameID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[chan struct{}]struct{}{}
	}
	set := h.subs[gameID]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		h.subs[gameID] = set
	}
	set[ch] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.subs[gameID], ch)
			if len(h.subs[gameID]) == 0 {
				delete(h.subs, gameID)
			}
		})
	}
}

// publish wakes the subscribers of gameID without blocking: one already
// pending wake-up covers this one.
func (h *hub) publish(gameID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[gameID] {
		wake(ch)
	}
}

// publishAll wakes every subscriber.
func (h *hub) publishAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.subs {
		for ch := range set {
			wake(ch)
		}
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
