package api

import (
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-contrib/sse"
	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// EventFeed tells live streams that a game's log has grown. The
// persistence Store implements it: on PostgreSQL every server process
// hears every other's appends through LISTEN/NOTIFY; on SQLite appends
// notify in-process.
type EventFeed interface {
	// Subscribe returns a channel that receives a value after events are
	// appended to game gameID, and a function that ends the subscription.
	// Values are wake-ups, not events (a stream reads the log from the
	// last version it sent); several appends may give one value, and a
	// value may come with nothing new.
	Subscribe(gameID string) (<-chan struct{}, func())
}

// Defaults of the live stream (GET /v1/games/{id}/stream).
const (
	// DefaultHeartbeat is the default interval of heartbeat events.
	DefaultHeartbeat = 15 * time.Second
	// DefaultMaxStreamsPerPlayer is the default bound of the streams one
	// player may have open at once.
	DefaultMaxStreamsPerPlayer = 8
	// DefaultMaxStreamsPerAddress is the default bound of the streams one
	// client address (IPv4, or IPv6 /64) may have open at once, whatever
	// the players: new players are cheap, addresses are not.
	DefaultMaxStreamsPerAddress = 64
	// DefaultMaxStreams is the default bound of the streams the server
	// holds at once. Each holds a connection, so a file descriptor, for
	// as long as it lasts; cmd/solitaire-server lowers it to half the
	// process's open-file limit, so that refused streams leave room to
	// answer every other request.
	DefaultMaxStreams = 4096
)

// CodeTooManyStreams is the problem code of a stream refused because a
// bound of open streams is reached: the caller's (Config.MaxStreamsPerPlayer),
// its address's (Config.MaxStreamsPerAddress) or the server's
// (Config.MaxStreams). 429 with Retry-After.
const CodeTooManyStreams = "too_many_streams"

// TooManyStreamsError is the refusal of a stream at one of its bounds:
// Scope "player", "address" or "server", Max the bound. problemFor
// answers it 429 too_many_streams; RetryAfter is the heartbeat interval,
// about when a stream's end is noticed and its slot free again.
type TooManyStreamsError struct {
	Scope string
	Max   int
	Retry time.Duration
}

// Error says which bound was reached, for the client.
func (e *TooManyStreamsError) Error() string {
	switch e.Scope {
	case streamScopePlayer:
		return "you have " + strconv.Itoa(e.Max) + " streams open, the most allowed; close one, or retry after Retry-After seconds"
	case streamScopeAddress:
		return "your address has " + strconv.Itoa(e.Max) + " streams open, the most allowed; close one, or retry after Retry-After seconds"
	}
	return "the server holds as many streams as it can (" + strconv.Itoa(e.Max) + "); retry after Retry-After seconds"
}

// RetryAfter is when to try again (the Retry-After of the 429).
func (e *TooManyStreamsError) RetryAfter() time.Duration { return e.Retry }

// The scopes of TooManyStreamsError.
const (
	streamScopePlayer  = "player"
	streamScopeAddress = "address"
	streamScopeServer  = "server"
)

// LastEventIDHeader is the header a reconnecting SSE client sends: the id
// (version) of the last event it received (WHATWG HTML §9.2 Server-sent
// events).
const LastEventIDHeader = "Last-Event-ID"

// Stream tuning.
const (
	// streamPoll is how often a stream reads the log when there is no
	// EventFeed to wake it.
	streamPoll = time.Second
	// streamWriteGrace is how long, beyond a heartbeat, a client may keep
	// a write waiting (not reading) before the stream gives up on it.
	streamWriteGrace = 30 * time.Second
	// heartbeatEvent names the heartbeat events. Their data is empty, so
	// an EventSource never dispatches them; they keep proxies from closing
	// an idle connection and make a dead client show up as a failed write.
	heartbeatEvent = "heartbeat"
)

// streamSlots counts the open streams: each player's, each address's and
// the server's, against their bounds.
type streamSlots struct {
	mu                         sync.Mutex
	maxPlayer, maxAddr, maxAll int
	retry                      time.Duration
	player, addr               map[string]int
	all                        int
}

// acquire takes a slot of player's, of addr's and of the server's, or
// none and a *TooManyStreamsError if one is full. release gives them back
// (idempotent).
func (l *streamSlots) acquire(player, addr string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.all >= l.maxAll:
		return nil, &TooManyStreamsError{Scope: streamScopeServer, Max: l.maxAll, Retry: l.retry}
	case l.addr[addr] >= l.maxAddr:
		return nil, &TooManyStreamsError{Scope: streamScopeAddress, Max: l.maxAddr, Retry: l.retry}
	case l.player[player] >= l.maxPlayer:
		return nil, &TooManyStreamsError{Scope: streamScopePlayer, Max: l.maxPlayer, Retry: l.retry}
	}
	l.all++
	l.addr[addr]++
	l.player[player]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.all--
			decrement(l.addr, addr)
			decrement(l.player, player)
		})
	}, nil
}

// decrement lowers m[k], deleting it at zero.
func decrement(m map[string]int, k string) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// streamHandler is GET /v1/games/{id}/stream with the configured limits.
func (s *server) streamHandler() gin.HandlerFunc {
	heartbeat := s.cfg.Heartbeat
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	orDefault := func(n, def int) int {
		if n <= 0 {
			return def
		}
		return n
	}
	slots := &streamSlots{
		maxPlayer: orDefault(s.cfg.MaxStreamsPerPlayer, DefaultMaxStreamsPerPlayer),
		maxAddr:   orDefault(s.cfg.MaxStreamsPerAddress, DefaultMaxStreamsPerAddress),
		maxAll:    orDefault(s.cfg.MaxStreams, DefaultMaxStreams),
		retry:     heartbeat, player: map[string]int{}, addr: map[string]int{},
	}
	return func(c *gin.Context) { s.stream(c, slots, heartbeat) }
}

// stream serves a game's events live, as Server-Sent Events or, on
// request, as NDJSON (streamWriter).
//
//	@Summary		Stream a game's events live
//	@Description	Server-Sent Events (`text/event-stream`): the events of the game's log after `Last-Event-ID` (absent: from the deal), then each new event as it is appended, by this server or by any other on the same database. Each SSE event has `id:` the event's version and `data:` one Event as JSON (the shape of GET /v1/games/{id}/events, hash chain links included); on reconnecting, an EventSource sends `Last-Event-ID` and gets exactly the events it missed.
//	@Description	With `Accept: application/x-ndjson` the same events come as newline-delimited JSON instead (for bots and other non-browser clients, as Lichess streams games): one Event per line, exactly as GET /v1/games/{id}/events streams them, and an empty line at each heartbeat; resume with Last-Event-ID set to the version of the last line read.
//	@Description	A `heartbeat` SSE event with empty data (NDJSON: an empty line) is sent at a fixed interval (15 s by default), which an EventSource does not dispatch. The stream ends after the game's final event (game_won, game_resigned, game_expired). A game that has ended with nothing after `Last-Event-ID` answers 204, which tells an EventSource to stop reconnecting.
//	@Description	Like every read, only the owner may stream a game in progress, and its game_dealt event is redacted then (RULES R6.4), and after the end too for a game on a shared deal whose competition has not closed (R6.6). A player may have a bounded number of streams open at once (8 by default), a client address too (64 by default), and the server (4096 by default, at most half its open-file limit); one more gets 429 too_many_streams with Retry-After.
//	@Tags			games
//	@Produce		event-stream,application/x-ndjson
//	@Security		BearerAuth
//	@Param			id				path		string	true	"game id"
//	@Param			Last-Event-ID	header		int		false	"the version of the last event received; the stream starts after it"	minimum(0)
//	@Success		200				{object}	EventPage	"the event stream: SSE text, or one Event per line"
//	@Header			200				{string}	Cache-Control	"no-cache"
//	@Success		204				"the game has ended and no event follows Last-Event-ID"
//	@Failure		400				{object}	Problem	"bad Last-Event-ID"
//	@Failure		401				{object}	Problem	"no or unknown token"
//	@Failure		404				{object}	Problem	"no such game, or not yours"
//	@Failure		429				{object}	Problem	"too many streams open"
//	@Header			429				{string}	Retry-After	"seconds after which a stream may be free"
//	@Failure		500				{object}	Problem
//	@ID		streamGame
//	@Router			/v1/games/{id}/stream [get]
func (s *server) stream(c *gin.Context, slots *streamSlots, heartbeat time.Duration) {
	id, err := gameID(c)
	if err != nil {
		s.write(c, s.fail(c, err))
		return
	}
	last, err := lastEventID(c)
	if err != nil {
		s.write(c, s.fail(c, err))
		return
	}
	player := playerOf(c).ID
	release, err := slots.acquire(player, ClientKey(c.ClientIP()))
	if err != nil {
		s.write(c, s.fail(c, err))
		return
	}
	defer release()

	ctx := c.Request.Context()
	// Subscribe before the first read of the log, so that no append falls
	// between the read and the subscription.
	var wake <-chan struct{}
	if s.cfg.Feed != nil {
		ch, unsubscribe := s.cfg.Feed.Subscribe(id)
		defer unsubscribe()
		wake = ch
	}
	game, st, err := s.readable(ctx, player, id)
	if err != nil {
		s.write(c, s.fail(c, err))
		return
	}
	if game.Status.Ended() && last >= game.Version {
		s.write(c, reply{status: http.StatusNoContent})
		return
	}
	// Redaction follows the game read before the events (see events).
	reveal, _, err := s.cfg.Games.Reveal(ctx, game)
	if err != nil {
		s.write(c, s.fail(c, err))
		return
	}
	view := viewOf(reveal, st)

	out, rc, ok := openStream(c, heartbeat)
	if !ok {
		return // a HEAD gets the stream's headers, and no stream
	}

	ticker := time.NewTicker(heartbeat)
	defer ticker.Stop()
	poll, expiry, stop := s.streamTimers(wake, game, st, heartbeat)
	defer stop()
	var done <-chan struct{} = s.cfg.Done

	c.Stream(func(io.Writer) bool {
		ended, err := s.sendNew(c, out, rc, id, &last, view, heartbeat)
		if err != nil {
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "event stream ended", "request_id", requestIDOf(c), "game", id, "err", err)
			}
			return false
		}
		if ended {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return false
		case <-wake:
		case <-poll:
		case <-expiry:
			expiry = nil
			if _, _, err := s.cfg.Games.Get(ctx, player, id); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "expiring a streamed game", "request_id", requestIDOf(c), "game", id, "err", err)
			}
		case <-ticker.C:
			_ = rc.SetWriteDeadline(time.Now().Add(heartbeat + streamWriteGrace))
			if out.heartbeat() != nil || rc.Flush() != nil {
				return false // the client went away or stopped reading
			}
		}
		return true
	})
}

// openStream answers 200 with the stream's headers (the content type of
// the streamWriter the request asked for, no caching, no proxy buffering)
// and flushes them. A stream outlives the server's read and write
// timeouts, so the read deadline is cleared and each write gets its own
// deadline of heartbeat plus streamWriteGrace. ok is false when nothing
// more is to be written: the flush failed (the client went away) or the
// request is a HEAD.
func openStream(c *gin.Context, heartbeat time.Duration) (out streamWriter, rc *http.ResponseController, ok bool) {
	w := c.Writer
	rc = http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	out = newStreamWriter(c)
	h := w.Header()
	h.Set("Content-Type", out.contentType())
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	_ = rc.SetWriteDeadline(time.Now().Add(heartbeat + streamWriteGrace))
	if rc.Flush() != nil || c.Request.Method == http.MethodHead {
		return out, rc, false
	}
	return out, rc, true
}

// streamTimers gives a stream's two timed wake-ups besides the heartbeat.
// poll ticks every streamPoll (at most heartbeat) when there is no feed
// to wake the stream (wake is nil), and is nil otherwise. expiry fires
// just after the deadline of a game in progress with a time limit, and is
// nil for any other game: such a game expires when it is read past its
// deadline (R5.3), so the stream reads it then and its watchers see the
// expiry. stop releases both timers; the caller defers it.
func (s *server) streamTimers(wake <-chan struct{}, game *app.Game, st *domain.State,
	heartbeat time.Duration) (poll, expiry <-chan time.Time, stop func()) {
	var ticker *time.Ticker
	var timer *time.Timer
	if wake == nil {
		ticker = time.NewTicker(min(streamPoll, heartbeat))
		poll = ticker.C
	}
	if st != nil && !game.Status.Ended() {
		if dl, ok := st.Deadline(); ok {
			timer = time.NewTimer(max(dl.Sub(s.now()), 0) + 10*time.Millisecond)
			expiry = timer.C
		}
	}
	return poll, expiry, func() {
		if ticker != nil {
			ticker.Stop()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// sendNew writes every event after *last to out and advances *last. It
// reports whether one of them was the game's final event.
func (s *server) sendNew(c *gin.Context, out streamWriter, rc *http.ResponseController, id string, last *int, view logView,
	heartbeat time.Duration) (bool, error) {
	ctx := c.Request.Context()
	for {
		recs, err := s.cfg.Games.Log(ctx, id, *last, ndjsonBatch)
		if err != nil {
			return false, err
		}
		for _, r := range recs {
			data, err := newEvent(r, view).line()
			if err != nil {
				return false, err
			}
			_ = rc.SetWriteDeadline(time.Now().Add(heartbeat + streamWriteGrace))
			if err := out.event(r.Version, data); err != nil {
				return false, err
			}
			if err := rc.Flush(); err != nil { // the client went away or stopped reading
				return false, err
			}
			*last = r.Version
			if final(r.Type) {
				return true, nil
			}
		}
		if len(recs) < ndjsonBatch {
			return false, nil
		}
	}
}

// final reports whether an event of type t ends a game: nothing follows it
// in the log.
func final(t domain.EventType) bool {
	switch t {
	case domain.EventGameWon, domain.EventGameResigned, domain.EventGameExpired:
		return true
	}
	return false
}

// lastEventID reads Last-Event-ID: a version, 0 if absent.
func lastEventID(c *gin.Context) (int, error) {
	v := strings.TrimSpace(c.GetHeader(LastEventIDHeader))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, badParam(LastEventIDHeader, "Last-Event-ID must be the version of an event, a whole number from 0")
	}
	return n, nil
}

// streamWriter writes a live stream in one wire format: the events, one
// at a time, and the keep-alive sent at each heartbeat. The caller
// flushes.
type streamWriter interface {
	// contentType is the stream's media type.
	contentType() string
	// event writes the event of that version, data its JSON (one line).
	event(version int, data []byte) error
	// heartbeat writes the keep-alive, which a client skips.
	heartbeat() error
}

// newStreamWriter picks the format the request accepts: NDJSON if Accept
// prefers application/x-ndjson, else Server-Sent Events (the default, and
// what an EventSource sends: text/event-stream).
func newStreamWriter(c *gin.Context) streamWriter {
	if c.NegotiateFormat(sse.ContentType, mimeNDJSON) == mimeNDJSON {
		return ndjsonStream{c.Writer}
	}
	return sseStream{c}
}

// sseStream is the Server-Sent Events format (WHATWG HTML §9.2): each
// event with id: its version and data: its JSON; the keep-alive is a
// heartbeat event with empty data, which an EventSource does not dispatch.
type sseStream struct{ c *gin.Context }

func (sseStream) contentType() string { return sse.ContentType }

func (s sseStream) event(version int, data []byte) error {
	return sse.Encode(s.c.Writer, sse.Event{Id: strconv.Itoa(version), Data: data})
}

func (s sseStream) heartbeat() error {
	return sse.Encode(s.c.Writer, sse.Event{Event: heartbeatEvent, Data: ""})
}

// ndjsonStream is newline-delimited JSON, the form bots and other
// non-browser clients read (as Lichess streams games): one Event per line,
// the shape of GET /v1/games/{id}/events with Accept: application/x-ndjson,
// and an empty line as the keep-alive, which a reader skips.
type ndjsonStream struct{ w io.Writer }

func (ndjsonStream) contentType() string { return mimeNDJSON }

func (s ndjsonStream) event(_ int, data []byte) error {
	_, err := s.w.Write(append(data, '\n'))
	return err
}

func (s ndjsonStream) heartbeat() error {
	_, err := s.w.Write([]byte{'\n'})
	return err
}
