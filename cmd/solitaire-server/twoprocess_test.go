package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// process is a solitaire-server running as its own process.
type process struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	exit chan error
}

// startProcess runs bin with env added to the environment and waits for
// its "serving" log line, which names the address it listens on.
func startProcess(t *testing.T, bin string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, cmd: cmd, logs: &syncBuffer{}, exit: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.logs.Write(append(sc.Bytes(), '\n'))
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addr <- line.Addr
			}
		}
		p.exit <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case err := <-p.exit:
		t.Fatalf("server exited: %v\n%s", err, p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not report its address\n%s", p.logs.String())
	}
	return p
}

// stop sends sig and waits for the process to exit.
func (p *process) stop(sig os.Signal, within time.Duration) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case err := <-p.exit:
		if err != nil {
			p.t.Errorf("server exit: %v\n%s", err, p.logs.String())
		}
	case <-time.After(within):
		p.t.Fatalf("server still running %v after %v\n%s", within, sig, p.logs.String())
	}
}

// call sends a JSON request to the process.
func (p *process) call(token, method, path string, body any, want int, out any) {
	p.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.url+path, r)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		p.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatal(err)
		}
	}
}

// sse is an open event stream; events carries each SSE event that has
// an id (heartbeats aside) and is closed at the end of the stream.
type sse struct {
	events     chan api.Event
	heartbeats chan struct{}
	close      func()
}

func (p *process) stream(token, id string, lastID int) *sse {
	p.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", p.url+"/v1/games/"+id+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.Itoa(lastID))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		p.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		p.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sse{events: make(chan api.Event, 1000), heartbeats: make(chan struct{}, 1000)}
	var once sync.Once
	s.close = func() { once.Do(func() { cancel(); resp.Body.Close() }) }
	p.t.Cleanup(s.close)
	go func() {
		defer close(s.events)
		r := bufio.NewReader(resp.Body)
		var id, event, data string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if event == "heartbeat" {
					s.heartbeats <- struct{}{}
				} else if id != "" {
					var ev api.Event
					if json.Unmarshal([]byte(data), &ev) != nil || strconv.Itoa(ev.Version) != id {
						p.t.Errorf("bad SSE event id %q data %q", id, data)
						return
					}
					s.events <- ev
				}
				id, event, data = "", "", ""
			case strings.HasPrefix(line, "id:"):
				id = strings.TrimPrefix(line, "id:")
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimPrefix(line, "event:")
			case strings.HasPrefix(line, "data:"):
				data = strings.TrimPrefix(line, "data:")
			}
		}
	}()
	return s
}

// next waits up to d for the next event; ok is false at the end.
func (s *sse) next(t *testing.T, d time.Duration) (api.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
		return api.Event{}, false
	}
}

// TestTwoProcesses: two server processes on one PostgreSQL database. A
// client streams a game from one while its moves are made on the other:
// every event arrives, in order, within a second of its move; a client
// that reconnects with Last-Event-ID gets exactly the events it missed;
// the stream ends after the final event; a server shutting down ends its
// open streams instead of waiting for them.
func TestTwoProcesses(t *testing.T) {
	bin := buildBinary(t)
	env := []string{"DATABASE_URL=" + pgtest.DSN(t), "SOLITAIRE_ADDR=127.0.0.1:0", testOrigin,
		"SOLITAIRE_STREAM_HEARTBEAT=300ms", "SOLITAIRE_LOG_LEVEL=info"}
	// One at a time: each applies the migrations at start.
	a := startProcess(t, bin, env...)
	b := startProcess(t, bin, env...)

	var player api.PlayerCreated
	a.call("", "POST", "/v1/players", api.NewPlayer{Name: "Ada"}, http.StatusCreated, &player)
	tok := player.Token
	var g api.Game
	b.call(tok, "POST", "/v1/games", map[string]any{"variant": "klondike", "seed": 11, "options": map[string]any{"undo": true}},
		http.StatusCreated, &g)

	s := a.stream(tok, g.ID, 0)
	if ev, ok := s.next(t, 2*time.Second); !ok || ev.Version != 1 || ev.Type != "game_dealt" {
		t.Fatalf("first event %+v %v", ev, ok)
	}
	select {
	case <-s.heartbeats:
	case <-time.After(2 * time.Second):
		t.Error("no heartbeat within 2s (interval 300ms)")
	}
	version := 1
	// play makes n moves on b and checks each one's events come through a
	// on stream s within a second; with s nil it only plays.
	play := func(s *sse, n int) []api.Event {
		var all []api.Event
		for i := 0; i < n; i++ {
			var l api.LegalMoves
			b.call(tok, "GET", "/v1/games/"+g.ID+"/legal-moves", nil, http.StatusOK, &l)
			m := l.Moves[0]
			for _, x := range l.Moves {
				if x.Type == "move" {
					m = x
				}
			}
			if i%4 == 3 {
				m = api.MoveRequest{Type: "undo"}
			}
			var res api.MoveResult
			b.call(tok, "POST", "/v1/games/"+g.ID+"/moves", m, http.StatusOK, &res)
			moved := time.Now()
			for _, want := range res.Events {
				if want.Version != version+1 {
					t.Fatalf("move response version %d after %d", want.Version, version)
				}
				version = want.Version
				all = append(all, want)
				if s == nil {
					continue
				}
				got, ok := s.next(t, time.Second)
				if !ok || got.Version != want.Version || got.Hash != want.Hash || got.Type != want.Type {
					t.Fatalf("streamed %+v, want version %d %s", got, want.Version, want.Type)
				}
			}
			if d := time.Since(moved); s != nil && d > time.Second {
				t.Errorf("events of a move on the other server arrived after %v", d)
			}
		}
		return all
	}
	play(s, 10)

	// Drop the stream, miss some moves, come back with Last-Event-ID.
	s.close()
	last := version
	missed := play(nil, 5)
	s = a.stream(tok, g.ID, last)
	for _, want := range missed {
		got, ok := s.next(t, time.Second)
		if !ok || got.Version != want.Version || got.Hash != want.Hash {
			t.Fatalf("resumed with %+v, want version %d", got, want.Version)
		}
	}
	play(s, 3)
	var res api.MoveResult
	b.call(tok, "POST", "/v1/games/"+g.ID+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, &res)
	if got, ok := s.next(t, time.Second); !ok || got.Type != "game_resigned" || got.Version != res.Game.Version {
		t.Fatalf("final event %+v", got)
	}
	if got, ok := s.next(t, time.Second); ok {
		t.Fatalf("event after the final one: %+v", got)
	}

	// Shutdown with a stream open on a game in progress: the stream ends
	// and the process exits well within its 15 s shutdown timeout.
	var g2 api.Game
	a.call(tok, "POST", "/v1/games", map[string]any{"variant": "klondike"}, http.StatusCreated, &g2)
	s = a.stream(tok, g2.ID, 0)
	s.next(t, time.Second)
	start := time.Now()
	a.stop(syscall.SIGTERM, 10*time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown with an open stream took %v", d)
	}
	b.stop(os.Interrupt, 10*time.Second)
	if strings.Contains(a.logs.String()+b.logs.String(), `"level":"ERROR"`) {
		t.Errorf("errors logged:\n%s\n%s", a.logs.String(), b.logs.String())
	}
}
