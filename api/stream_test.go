package api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
)

func init() {
	// The validating transport reads a finished stream whole; its body is
	// text, described as a string.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}

// streamOptions tune the server of a stream test.
type streamOptions struct {
	heartbeat  time.Duration
	maxStreams int
	// maxPerAddress and maxAll are Config.MaxStreamsPerAddress and
	// Config.MaxStreams.
	maxPerAddress, maxAll int
	noFeed                bool
	done                  <-chan struct{}
	// server, if set, configures the HTTP server before it starts.
	server func(*http.Server)
}

// newStreamEnv is newEnv with the store as the stream's feed and the
// stream settings of o.
func newStreamEnv(t *testing.T, backend string, o streamOptions) *env {
	store := openStore(t, backend)
	// On PostgreSQL wake-ups come through LISTEN/NOTIFY, as in production.
	ctx, stop := context.WithCancel(context.Background())
	listening := make(chan error, 1)
	go func() { listening <- store.Listen(ctx) }()
	t.Cleanup(func() { stop(); <-listening })
	clk := &clock{t: start}
	games := &app.Games{Store: store, Now: clk.Now, Random: rand.Reader, Retries: 3}
	cfg := api.Config{Games: games, Players: store, Idempotency: store,
		Ready: store.Ping, Spec: solitaire.OpenAPIYAML, Feed: store,
		Heartbeat: o.heartbeat, MaxStreamsPerPlayer: o.maxStreams, Done: o.done,
		MaxStreamsPerAddress: o.maxPerAddress, MaxStreams: o.maxAll,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if o.noFeed {
		cfg.Feed = nil
	}
	h, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	if o.server != nil {
		o.server(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &validating{t: t, base: http.DefaultTransport}
	e := &env{t: t, store: store, games: games, clock: clk, srv: srv, tr: tr, client: &http.Client{Transport: tr}}
	e.player, e.token = e.newPlayer("Ada")
	return e
}

// sseEvent is one Server-Sent Event as a client parses it.
type sseEvent struct {
	id, event, data string
}

// liveStream is an open stream read by a goroutine.
type liveStream struct {
	resp   *http.Response
	events chan sseEvent // closed at the end of the stream
	cancel context.CancelFunc
	mu     sync.Mutex
	raw    bytes.Buffer // every byte received
}

// openStream opens GET /v1/games/{id}/stream without the validating
// transport (it would wait for the end of the body); the status and the
// headers are checked here, each event's data by the caller (eventOf).
func (e *env) openStream(id, token string, lastID int) *liveStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/games/"+id+"/stream", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if token == "" {
		token = e.token
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Accept", "text/event-stream")
	if lastID >= 0 {
		hr.Header.Set("Last-Event-ID", strconv.Itoa(lastID))
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		e.t.Fatalf("stream %s: status %d: %s", id, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get(api.RequestIDHeader) == "" {
		e.t.Errorf("stream headers: %v", resp.Header)
	}
	s := &liveStream{resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	go s.read()
	e.t.Cleanup(s.close)
	return s
}

func (s *liveStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// read parses the stream (WHATWG HTML §9.2.6, the parts the server uses).
func (s *liveStream) read() {
	defer close(s.events)
	r := bufio.NewReader(s.resp.Body)
	var ev sseEvent
	var data []string
	for {
		line, err := r.ReadString('\n')
		s.mu.Lock()
		s.raw.WriteString(line)
		s.mu.Unlock()
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			ev.data = strings.Join(data, "\n")
			s.events <- ev
			ev, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			data = append(data, value)
		}
	}
}

// bytes is everything received so far.
func (s *liveStream) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.raw.Bytes()...)
}

// next returns the next event that is not a heartbeat, failing the test
// if none comes within d. ok is false at the end of the stream.
func (s *liveStream) next(t testing.TB, d time.Duration) (ev sseEvent, ok bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok || ev.event != "heartbeat" {
				return ev, ok
			}
			if ev.data != "" || ev.id != "" {
				t.Errorf("heartbeat with id %q data %q", ev.id, ev.data)
			}
		case <-timeout:
			t.Fatalf("no event within %v", d)
		}
	}
}

// ended waits for the end of the stream, failing on any event.
func (s *liveStream) ended(t testing.TB, d time.Duration) {
	t.Helper()
	if ev, ok := s.next(t, d); ok {
		t.Fatalf("event after the end: %+v", ev)
	}
}

var (
	eventSchemaOnce sync.Once
	eventSchema     *openapi3.Schema
)

// eventOf decodes an SSE event's data as an Event, checks it against the
// Event schema of openapi.yaml (strict, as the transport does) and its id
// against its version.
func eventOf(t testing.TB, ev sseEvent) api.Event {
	t.Helper()
	loadEventSchema(t)
	out := checkEventJSON(t, []byte(ev.data))
	if ev.id != strconv.Itoa(out.Version) || ev.event != "" {
		t.Errorf("SSE id %q event %q for version %d", ev.id, ev.event, out.Version)
	}
	return out
}

// loadEventSchema loads, once, the strict Event schema checkEventJSON uses.
func loadEventSchema(t testing.TB) {
	t.Helper()
	eventSchemaOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range doc.Components.Schemas {
			if s.Value != nil && len(s.Value.Properties) > 0 {
				no := false
				s.Value.AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
			}
		}
		eventSchema = doc.Components.Schemas["Event"].Value
	})
}

// checkEventJSON decodes one Event's JSON, checking it against the Event
// schema of openapi.yaml made strict.
func checkEventJSON(t testing.TB, data []byte) api.Event {
	t.Helper()
	loadEventSchema(t)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("event data is not JSON: %v: %q", err, data)
	}
	if err := eventSchema.VisitJSON(v); err != nil {
		t.Errorf("event data breaks the Event schema: %v\n%s", err, data)
	}
	var out api.Event
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// pageJSON is the JSON of each event of a game's log as GET …/events
// sends it, by version.
func (e *env) pageJSON(id string) map[int]string {
	e.t.Helper()
	var page struct {
		Events []json.RawMessage `json:"events"`
	}
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events?limit=500"}).decode(e.t, &page)
	out := map[int]string{}
	for _, raw := range page.Events {
		var ev api.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			e.t.Fatal(err)
		}
		out[ev.Version] = string(raw)
	}
	return out
}

// TestStream: a stream sends the log so far, then each event as it is
// appended, within a second and in order, each exactly as GET …/events
// shows it, with heartbeats in between; it ends after the final event. A
// client that resumes with Last-Event-ID gets exactly the events after it;
// one that has everything of an ended game gets 204.
func TestStream(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newStreamEnv(t, backend, streamOptions{heartbeat: 50 * time.Millisecond})
			g := e.createGame(map[string]any{"variant": "klondike", "seed": 42, "options": map[string]any{"undo": true}})
			s := e.openStream(g.ID, "", -1)
			ev, ok := s.next(t, time.Second)
			if !ok {
				t.Fatal("stream ended at once")
			}
			dealt := eventOf(t, ev)
			if dealt.Version != 1 || dealt.Type != "game_dealt" || dealt.Data.Hidden == nil || len(dealt.Data.Deal.Stock) != 0 {
				t.Fatalf("first event %+v, want the redacted deal", dealt)
			}
			// Heartbeats while nothing happens.
			time.Sleep(150 * time.Millisecond)
			if !strings.Contains(string(s.bytes()), "event:heartbeat\ndata:\n\n") {
				t.Errorf("no heartbeat in %q", s.bytes())
			}

			seen, undone := 1, 0
			for i := 0; i < 12; i++ {
				l := e.legal(g.ID)
				m := l.Moves[0]
				for _, c := range l.Moves {
					if c.Type == "move" || c.Type == "flip" {
						m = c
						break
					}
				}
				if i%5 == 4 {
					m = undo()
				}
				start := time.Now()
				r := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: m})
				if r.status != http.StatusOK {
					continue // e.g. nothing to undo
				}
				var res api.MoveResult
				r.decode(t, &res)
				for _, want := range res.Events {
					got := eventOf(t, mustNext(t, s, time.Second))
					if got.Type == "move_undone" {
						undone++
					}
					if got.Version != seen+1 || got.Version != want.Version || got.Hash != want.Hash {
						t.Fatalf("got version %d (hash %s), want %d (%s)", got.Version, got.Hash, want.Version, want.Hash)
					}
					seen = got.Version
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("events of a move arrived after %v", d)
				}
			}
			if undone == 0 {
				t.Error("no undo streamed")
			}
			// Resign: the final event ends the stream.
			res := e.play(g.ID, resign())
			for range res.Events {
				seen = eventOf(t, mustNext(t, s, time.Second)).Version
			}
			s.ended(t, time.Second)
			if seen != res.Game.Version {
				t.Fatalf("stream ended at %d, game at %d", seen, res.Game.Version)
			}

			// What the stream sent is what the log shows, byte for byte
			// (the deal aside: it was redacted while the game ran).
			page := e.pageJSON(g.ID)
			for _, line := range strings.Split(string(s.bytes()), "\n") {
				data, ok := strings.CutPrefix(line, "data:")
				if !ok || data == "" {
					continue
				}
				var ev api.Event
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Version > 1 && data != page[ev.Version] {
					t.Errorf("stream event %d\n%s\npage\n%s", ev.Version, data, page[ev.Version])
				}
			}

			// Resume after version 5: exactly 6..end, then the end. The game
			// has ended, so the stream is finite and goes through the
			// validating transport.
			r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/stream",
				header: map[string]string{"Last-Event-ID": "5"}})
			var versions []int
			for _, line := range strings.Split(string(r.body), "\n") {
				if data, ok := strings.CutPrefix(line, "data:"); ok && data != "" {
					var ev api.Event
					if err := json.Unmarshal([]byte(data), &ev); err != nil {
						t.Fatal(err)
					}
					if data != page[ev.Version] {
						t.Errorf("resumed event %d differs from the page", ev.Version)
					}
					versions = append(versions, ev.Version)
				}
			}
			if len(versions) != seen-5 || versions[0] != 6 || versions[len(versions)-1] != seen {
				t.Errorf("resumed after 5: versions %v, want 6..%d", versions, seen)
			}
			// From the start after the end: the deal whole.
			r = e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/stream"})
			if !strings.Contains(string(r.body), "id:1\ndata:"+page[1]+"\n\n") {
				t.Errorf("the deal after the end is not the page's:\n%s", truncate(r.body))
			}
			// Nothing after the final event: 204, EventSource stops.
			e.must(http.StatusNoContent, req{method: "GET", path: "/v1/games/" + g.ID + "/stream",
				header: map[string]string{"Last-Event-ID": strconv.Itoa(seen)}})
		})
	}
}

func mustNext(t testing.TB, s *liveStream, d time.Duration) sseEvent {
	t.Helper()
	ev, ok := s.next(t, d)
	if !ok {
		t.Fatal("the stream ended early")
	}
	return ev
}

// TestStreamReconnect: a client that drops its stream and comes back with
// Last-Event-ID gets exactly the events it missed, then the new ones.
func TestStreamReconnect(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newStreamEnv(t, backend, streamOptions{})
			g := e.createGame(map[string]any{"variant": "klondike", "seed": 7})
			s := e.openStream(g.ID, "", 0)
			eventOf(t, mustNext(t, s, time.Second))
			e.play(g.ID, draw())
			last := eventOf(t, mustNext(t, s, time.Second)).Version
			s.close()

			var missed []api.Event
			for i := 0; i < 3; i++ {
				missed = append(missed, e.play(g.ID, draw()).Events...)
			}
			s = e.openStream(g.ID, "", last)
			for _, want := range missed {
				got := eventOf(t, mustNext(t, s, time.Second))
				if got.Version != want.Version || got.Hash != want.Hash {
					t.Fatalf("resumed with %d (%s), want %d (%s)", got.Version, got.Hash, want.Version, want.Hash)
				}
			}
			next := e.play(g.ID, draw()).Events[0]
			if got := eventOf(t, mustNext(t, s, time.Second)); got.Version != next.Version {
				t.Fatalf("after the missed ones got %d, want %d", got.Version, next.Version)
			}
			// Far ahead of the log: nothing until the log gets there.
			ahead := e.openStream(g.ID, "", next.Version+1)
			e.play(g.ID, draw())
			e.play(g.ID, draw())
			if got := eventOf(t, mustNext(t, ahead, time.Second)); got.Version != next.Version+2 {
				t.Fatalf("a stream after %d sent %d", next.Version+1, got.Version)
			}
		})
	}
}

// TestStreamAccess: streams are read like every other read: only the
// owner while the game is in progress, anyone after the end; a bad
// Last-Event-ID is 400; no token is 401.
func TestStreamAccess(t *testing.T) {
	e := newStreamEnv(t, "sqlite", streamOptions{})
	g := e.createGame(map[string]any{"variant": "klondike"})
	_, other := e.newPlayer("Eve")
	path := "/v1/games/" + g.ID + "/stream"
	e.must(http.StatusNotFound, req{method: "GET", path: path, token: other})
	e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/nope/stream"})
	e.must(http.StatusUnauthorized, req{method: "GET", path: path, token: "-"})
	for _, bad := range []string{"x", "-1", "1.5", "99999999999"} {
		p := e.must(http.StatusBadRequest, req{method: "GET", path: path, invalid: true,
			header: map[string]string{"Last-Event-ID": bad}}).problem(t)
		if p.Code != api.CodeInvalidParameter || p.Param != "Last-Event-ID" {
			t.Errorf("Last-Event-ID %q: %+v", bad, p)
		}
	}
	e.play(g.ID, resign())
	r := e.must(http.StatusOK, req{method: "GET", path: path, token: other})
	if !strings.Contains(string(r.body), `"type":"game_resigned"`) {
		t.Errorf("another player's stream of an ended game: %s", truncate(r.body))
	}
}

// TestStreamLimit: a player may hold MaxStreamsPerPlayer streams; one more
// gets 429 too_many_streams with Retry-After, other players are not
// affected, and a closed stream frees its slot.
func TestStreamLimit(t *testing.T) {
	e := newStreamEnv(t, "sqlite", streamOptions{maxStreams: 2, heartbeat: 100 * time.Millisecond})
	g := e.createGame(map[string]any{"variant": "klondike"})
	a := e.openStream(g.ID, "", -1)
	e.openStream(g.ID, "", -1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/games/"+g.ID+"/stream", nil)
	hr.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(hr) // validating: a problem ends the body
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != http.StatusTooManyRequests ||
		p.Code != api.CodeTooManyStreams || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("third stream: %d %s Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	// Another player has slots of their own (the game is not theirs: 404).
	_, other := e.newPlayer("Eve")
	e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID + "/stream", token: other})

	a.close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		hr, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/games/"+g.ID+"/stream", nil)
		hr.Header.Set("Authorization", "Bearer "+e.token)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed stream was not freed (status %d)", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStreamOutlivesServerTimeouts: the HTTP server's read and write
// timeouts (cmd/solitaire-server sets both) do not cut a stream short.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	e := newStreamEnv(t, "sqlite", streamOptions{heartbeat: 50 * time.Millisecond, server: func(s *http.Server) {
		s.ReadTimeout, s.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
	}})
	g := e.createGame(map[string]any{"variant": "klondike", "seed": 3})
	s := e.openStream(g.ID, "", 0)
	eventOf(t, mustNext(t, s, time.Second))
	for i := 0; i < 4; i++ {
		time.Sleep(250 * time.Millisecond)
		v := e.play(g.ID, draw()).Game.Version
		if got := eventOf(t, mustNext(t, s, time.Second)); got.Version != v {
			t.Fatalf("got %d, want %d", got.Version, v)
		}
	}
}

// TestStreamWithoutFeed: with no Config.Feed a stream polls the log.
func TestStreamWithoutFeed(t *testing.T) {
	e := newStreamEnv(t, "sqlite", streamOptions{noFeed: true, heartbeat: time.Minute})
	g := e.createGame(map[string]any{"variant": "klondike", "seed": 3})
	s := e.openStream(g.ID, "", 1)
	v := e.play(g.ID, draw()).Game.Version
	if got := eventOf(t, mustNext(t, s, 2*time.Second)); got.Version != v {
		t.Fatalf("got %d, want %d", got.Version, v)
	}
}

// TestStreamDone: closing Config.Done (the server shutting down) ends
// open streams.
func TestStreamDone(t *testing.T) {
	done := make(chan struct{})
	e := newStreamEnv(t, "sqlite", streamOptions{done: done})
	g := e.createGame(map[string]any{"variant": "klondike"})
	s := e.openStream(g.ID, "", 0)
	eventOf(t, mustNext(t, s, time.Second))
	close(done)
	s.ended(t, 2*time.Second)
}

// TestStreamAndAuditHideInformation pins RULES R6.4 for the stream and the
// audit: while a game is in progress no byte of either names a face-down
// or stock card, the seed or the salt.
func TestStreamAndAuditHideInformation(t *testing.T) {
	t.Parallel()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newStreamEnv(t, backend, streamOptions{heartbeat: 20 * time.Millisecond})
			for _, variant := range []string{"klondike", "klassik", "relaxed"} { // one deck: a hidden card has no face-up twin
				g := e.createGame(api.CreateGameRequest{Variant: variant})
				s := e.openStream(g.ID, "", -1)
				e.tr.mu.Lock()
				e.tr.bodies = nil
				e.tr.mu.Unlock()
				e.playQuietly(g.ID, 10, time.Second)
				var a api.Audit
				e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/audit"}).decode(t, &a)
				if a.Seed != nil || a.Salt != nil || a.CommitmentOK != nil || a.Problem != nil {
					t.Errorf("%s: audit in progress reveals %+v", variant, a)
				}
				v := e.getGame(g.ID).Version
				for seen := 0; seen < v; {
					seen = eventOf(t, mustNext(t, s, time.Second)).Version
				}
				time.Sleep(60 * time.Millisecond) // a few heartbeats more

				game, st, err := e.store.Load(context.Background(), g.ID)
				if err != nil {
					t.Fatal(err)
				}
				hidden := hiddenCodes(st)
				if len(hidden) < 20 {
					t.Fatalf("%s: only %d hidden cards left to check", variant, len(hidden))
				}
				secrets := []string{strconv.FormatUint(game.Seed, 10), hex.EncodeToString(game.Salt),
					hex.EncodeToString(game.Salt[:8])}
				e.tr.mu.Lock()
				bodies := append([][]byte{s.bytes()}, e.tr.bodies...)
				e.tr.mu.Unlock()
				for _, b := range bodies {
					for _, c := range hidden {
						if bytes.Contains(b, []byte(`"`+c+`"`)) {
							t.Errorf("%s: hidden card %s sent: %s", variant, c, truncate(b))
						}
					}
					for _, x := range secrets {
						if bytes.Contains(b, []byte(x)) {
							t.Errorf("%s: seed or salt %s sent: %s", variant, x, truncate(b))
						}
					}
				}
				s.close()
				e.play(g.ID, resign())
			}
		})
	}
}
