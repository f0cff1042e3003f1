package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
)

// ndjsonStream is GET /v1/games/{id}/stream with Accept:
// application/x-ndjson, read line by line by a goroutine.
type ndjsonStream struct {
	lines  chan []byte // every line, keep-alives (empty) included; closed at the end
	cancel context.CancelFunc
	mu     sync.Mutex
	raw    bytes.Buffer
}

// openNDJSONStream opens the NDJSON stream of a game for the env's player
// and checks its status and headers.
func (e *env) openNDJSONStream(id string) *ndjsonStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/games/"+id+"/stream", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+e.token)
	hr.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" ||
		resp.Header.Get("Cache-Control") != "no-cache" {
		cancel()
		resp.Body.Close()
		e.t.Fatalf("NDJSON stream: %d %v", resp.StatusCode, resp.Header)
	}
	s := &ndjsonStream{lines: make(chan []byte, 1000), cancel: cancel}
	go func() {
		defer close(s.lines)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadBytes('\n')
			s.mu.Lock()
			s.raw.Write(line)
			s.mu.Unlock()
			if err != nil {
				return
			}
			s.lines <- bytes.TrimSuffix(line, []byte("\n"))
		}
	}()
	e.t.Cleanup(cancel)
	return s
}

// TestStreamNDJSON: with Accept: application/x-ndjson the live stream
// sends one Event per line, the item schema (x-itemSchema) openapi.yaml
// gives that media type, each line exactly as GET …/events shows the
// event, including events of moves made by other requests while it is
// open; an empty line at each heartbeat; no hidden card, seed or salt
// while the game is in progress (R6.4); and it ends after the final event.
func TestStreamNDJSON(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	res := doc.Paths.Value("/v1/games/{id}/stream").Get.Responses.Status(http.StatusOK).Value
	mt := res.Content["application/x-ndjson"]
	if mt == nil || !mt.Schema.Value.Type.Is("string") {
		t.Fatalf("openapi.yaml: the stream's 200 has no application/x-ndjson text")
	}
	if item, err := ndjsonItem(doc, mt); err != nil || item != doc.Components.Schemas["Event"].Value {
		t.Fatalf("openapi.yaml: the stream's NDJSON lines are not Events (%v)", err)
	}
	if res.Content["text/event-stream"] == nil {
		t.Fatalf("openapi.yaml: the stream's 200 has no text/event-stream content")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newStreamEnv(t, backend, streamOptions{heartbeat: 20 * time.Millisecond})
			g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
			s := e.openNDJSONStream(g.ID)
			e.playQuietly(g.ID, 10, time.Second) // other requests, while the stream is open
			v := e.getGame(g.ID).Version
			keepAlives, last := 0, 0
			timeout := time.After(10 * time.Second)
			for last < v || keepAlives < 2 {
				select {
				case line, ok := <-s.lines:
					if !ok {
						t.Fatalf("the stream ended at version %d of %d", last, v)
					}
					if len(line) == 0 {
						keepAlives++
						continue
					}
					ev := checkEventJSON(t, line)
					if ev.Version != last+1 {
						t.Fatalf("line of version %d after %d", ev.Version, last)
					}
					last = ev.Version
				case <-timeout:
					t.Fatalf("within 10s: versions up to %d of %d, %d keep-alive lines", last, v, keepAlives)
				}
			}
			s.mu.Lock()
			raw := append([]byte(nil), s.raw.Bytes()...)
			s.mu.Unlock()
			page := e.pageJSON(g.ID)
			for i, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				ev := checkEventJSON(t, line)
				if string(line) != page[ev.Version] {
					t.Errorf("line %d (version %d) differs from GET …/events:\n%s\n%s", i+1, ev.Version, line, page[ev.Version])
				}
			}
			game, st, err := e.store.Load(context.Background(), g.ID)
			if err != nil {
				t.Fatal(err)
			}
			hidden := hiddenCodes(st)
			if len(hidden) < 20 {
				t.Fatalf("only %d hidden cards left to check", len(hidden))
			}
			for _, c := range hidden {
				if bytes.Contains(raw, []byte(`"`+c+`"`)) {
					t.Errorf("hidden card %s sent on the stream", c)
				}
			}
			for _, x := range []string{strconv.FormatUint(game.Seed, 10), hex.EncodeToString(game.Salt)} {
				if bytes.Contains(raw, []byte(x)) {
					t.Errorf("seed or salt %s sent on the stream", x)
				}
			}
			// The final event ends the stream.
			e.play(g.ID, resign())
			for {
				select {
				case line, ok := <-s.lines:
					if !ok {
						t.Fatalf("the stream ended without game_resigned")
					}
					if len(line) > 0 {
						if ev := checkEventJSON(t, line); ev.Type == "game_resigned" {
							if _, more := <-s.lines; more {
								t.Errorf("a line after game_resigned")
							}
							return
						}
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no game_resigned within 5s")
				}
			}
		})
	}
}
