package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// playQuietly plays up to steps legal moves that reveal nothing a client
// has not seen: building moves and flips first, draws only while the stock
// has cards (no recycle), never undo or resign. It returns every live
// view, by version, including the one it started from.
func (e *env) playQuietly(id string, steps int, between time.Duration) map[int]api.Game {
	e.t.Helper()
	live := map[int]api.Game{}
	for step := 0; step < steps; step++ {
		g := e.getGame(id)
		if g.Status != "in_progress" {
			break
		}
		l := e.legal(id)
		var pick *api.MoveRequest
		for i, m := range l.Moves {
			switch m.Type {
			case "move", "flip":
				if pick == nil || pick.Type == "draw" {
					pick = &l.Moves[i]
				}
			case "draw":
				if pick == nil && g.Stock.Count > 0 {
					pick = &l.Moves[i]
				}
			}
		}
		if pick == nil {
			break
		}
		e.clock.Advance(between)
		r := e.play(id, *pick)
		live[r.Game.Version] = r.Game
	}
	return live
}

// ndjson reads a game's log as a stream.
func (e *env) ndjson(id string, after int) []api.Event {
	e.t.Helper()
	r := e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/events?after=%d", id, after),
		header: map[string]string{"Accept": "application/x-ndjson"}})
	if ct := r.header.Get("Content-Type"); ct != "application/x-ndjson" {
		e.t.Fatalf("Content-Type %q", ct)
	}
	var out []api.Event
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev api.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			e.t.Fatalf("NDJSON line: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

func TestEvents(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike", "seed": 77})
		e.playQuietly(g.ID, 15, time.Second)
		version := e.getGame(g.ID).Version

		all := e.allEvents(g.ID, 500)
		paged := e.allEvents(g.ID, 2)
		if len(all) != version || !reflect.DeepEqual(all, paged) {
			t.Fatalf("%d events (paged %d), version %d", len(all), len(paged), version)
		}
		for i, ev := range all {
			if ev.Version != i+1 {
				t.Fatalf("event %d has version %d", i, ev.Version)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", ev.OccurredAt); err != nil {
				t.Errorf("occurred_at %q: %v", ev.OccurredAt, err)
			}
		}
		if s := e.ndjson(g.ID, 0); !reflect.DeepEqual(s, all) {
			t.Errorf("NDJSON differs from the pages")
		}
		if s := e.ndjson(g.ID, 3); !reflect.DeepEqual(s, all[3:]) {
			t.Errorf("NDJSON after 3 differs")
		}
		var p api.EventPage
		e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/events?after=%d", g.ID, version)}).decode(t, &p)
		if len(p.Events) != 0 || p.NextAfter != nil {
			t.Errorf("page after the end: %+v", p)
		}

		// R6.4: while in progress the deal is redacted.
		d := all[0]
		if d.Type != "game_dealt" || d.Data.Hidden == nil || d.Data.Hidden.Stock != 24 ||
			!slices.Equal(d.Data.Hidden.FaceDown, []int{0, 1, 2, 3, 4, 5, 6}) || len(d.Data.Deal.Stock) != 0 || d.Data.Rules == nil {
			t.Errorf("redacted deal: %+v", d.Data)
		}
		for _, p := range d.Data.Deal.Tableau {
			if len(p.Down) != 0 || len(p.Up) != 1 {
				t.Errorf("redacted pile %+v", p)
			}
		}

		// After the end the log is whole, and each event's data is the
		// domain's payload.
		e.play(g.ID, resign())
		all = e.allEvents(g.ID, 500)
		if all[0].Data.Hidden != nil || len(all[0].Data.Deal.Stock) != 24 || len(all[0].Data.Deal.Tableau[6].Down) != 6 {
			t.Errorf("unredacted deal: %+v", all[0].Data)
		}
		recs, err := e.store.Events(context.Background(), g.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			got, _ := json.Marshal(all[i].Data)
			if a, b := normalJSON(t, got), normalJSON(t, r.Payload); !reflect.DeepEqual(a, b) {
				t.Errorf("event %d data\n got %s\nwant %s", r.Version, got, r.Payload)
			}
		}
		if s := e.ndjson(g.ID, 0); !reflect.DeepEqual(s, all) {
			t.Errorf("NDJSON after the end differs from the pages")
		}

		for _, q := range []string{"after=-1", "after=x", "limit=0", "limit=501", "limit=1.5"} {
			r := e.do(req{method: "GET", path: "/v1/games/" + g.ID + "/events?" + q, invalid: true})
			if r.status != http.StatusBadRequest {
				t.Errorf("events?%s: %d", q, r.status)
			}
		}
	})
}

// normalJSON decodes JSON for comparison: a null inside an array counts as
// an empty array (the domain writes empty foundations of a deal as null)
// and times are compared as instants.
func normalJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				x[k] = walk(y)
			}
		case []any:
			for i, y := range x {
				if y == nil {
					x[i] = []any{}
					continue
				}
				x[i] = walk(y)
			}
		case string:
			if tm, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return tm.UTC().Format(time.RFC3339Nano)
			}
		}
		return v
	}
	return walk(v)
}

// withoutRevealed drops what only an ended game shows.
func withoutRevealed(g api.Game) api.Game {
	g.Stock.Cards = nil
	g.Tableau = slices.Clone(g.Tableau)
	for i := range g.Tableau {
		g.Tableau[i].FaceDownCards = nil
	}
	return g
}

func TestStatesEqualLive(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		for _, body := range []map[string]any{
			{"variant": "klondike", "seed": 5},
			{"variant": "klassik", "seed": 5}, // time limit, klassik score
			{"variant": "relaxed", "seed": 5}, // player flips, undo
			{"variant": "klondike-draw3", "seed": 5, "options": map[string]any{"scoring": "standard"}}, // score over time
		} {
			g := e.createGame(body)
			live := e.playQuietly(g.ID, 12, 7*time.Second)
			live[1] = g
			if g.Variant == "relaxed" {
				r := e.play(g.ID, undo())
				live[r.Game.Version] = r.Game
			}
			for v, want := range live {
				var got api.Game
				r := e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/states/%d", g.ID, v)})
				r.decode(t, &got)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s states/%d differs from the live response\n got %+v\nwant %+v", g.Variant, v, got, want)
				}
				if r.header.Get("ETag") != quoted(v) {
					t.Errorf("states/%d ETag %q", v, r.header.Get("ETag"))
				}
			}
			end := e.play(g.ID, resign()).Game.Version
			for v, want := range live {
				var got api.Game
				e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/states/%d", g.ID, v)}).decode(t, &got)
				if !reflect.DeepEqual(withoutRevealed(got), want) {
					t.Errorf("%s states/%d after the end differs beyond the revealed cards", g.Variant, v)
				}
				if len(got.Stock.Cards) != got.Stock.Count {
					t.Errorf("%s states/%d after the end: stock %+v", g.Variant, v, got.Stock)
				}
				for i, p := range got.Tableau {
					if len(p.FaceDownCards) != p.FaceDown {
						t.Errorf("%s states/%d after the end: pile %d %+v", g.Variant, v, i, p)
					}
				}
			}
			for _, tc := range []struct {
				v      string
				status int
			}{{"0", 400}, {"-1", 400}, {"x", 400}, {fmt.Sprint(end + 1), 404}, {"99999999999999999999", 400}} {
				r := e.do(req{method: "GET", path: "/v1/games/" + g.ID + "/states/" + tc.v, invalid: true})
				if r.status != tc.status {
					t.Errorf("states/%s: %d, want %d", tc.v, r.status, tc.status)
				}
				if tc.status == 404 && r.problem(t).Code != api.CodeVersionNotFound {
					t.Errorf("states/%s: %s", tc.v, r.body)
				}
			}
		}
	})
}

// TestHiddenInformation pins RULES R6.4: while a game is in progress no
// response names a face-down card or a stock card; once it has ended every
// view lists them.
func TestHiddenInformation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		for _, variant := range []string{"klondike", "klassik", "relaxed"} {
			g := e.createGame(api.CreateGameRequest{Variant: variant})
			e.tr.mu.Lock()
			e.tr.bodies = nil
			e.tr.mu.Unlock()
			e.playQuietly(g.ID, 10, time.Second)
			cur := e.getGame(g.ID)
			e.must(http.StatusNotModified, req{method: "GET", path: "/v1/games/" + g.ID, header: map[string]string{"If-None-Match": quoted(cur.Version)}})
			e.legal(g.ID)
			e.allEvents(g.ID, 3)
			e.ndjson(g.ID, 0)
			for v := 1; v <= cur.Version; v++ {
				e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/states/%d", g.ID, v)})
			}
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
			e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: move("stock", "tableau/0", 0)})

			s := e.load(g.ID)
			hidden := hiddenCodes(s)
			if len(hidden) < 20 {
				t.Fatalf("%s: only %d hidden cards left to check", variant, len(hidden))
			}
			e.tr.mu.Lock()
			for _, b := range e.tr.bodies {
				for _, c := range hidden {
					if bytes.Contains(b, []byte(`"`+c+`"`)) {
						t.Errorf("%s: hidden card %s in a response: %s", variant, c, truncate(b))
					}
				}
			}
			e.tr.mu.Unlock()

			// After the end, everything.
			over := e.play(g.ID, resign()).Game
			pos := s.Position()
			for _, got := range []api.Game{over, e.getGame(g.ID)} {
				if codesOf(got.Stock.Cards) != strings.Join(cardStrings(pos.Stock), ",") {
					t.Errorf("%s: stock after the end %v, want %v", variant, codesOf(got.Stock.Cards), pos.Stock)
				}
				for i, p := range got.Tableau {
					if codesOf(p.FaceDownCards) != strings.Join(cardStrings(pos.Tableau[i].Down), ",") {
						t.Errorf("%s: pile %d face-down cards %v", variant, i, codesOf(p.FaceDownCards))
					}
				}
			}
			var first api.Game
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/states/1"}).decode(t, &first)
			if len(first.Stock.Cards) != first.Stock.Count || first.Stock.Count == 0 {
				t.Errorf("%s: states/1 after the end does not list the stock", variant)
			}
			if ev := e.allEvents(g.ID, 1)[0]; ev.Data.Hidden != nil || len(ev.Data.Deal.Stock) != first.Stock.Count {
				t.Errorf("%s: the deal after the end is still redacted", variant)
			}
		}
	})
}

func codesOf(cs []api.Card) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return strings.Join(out, ",")
}

func cardStrings(cs []domain.Card) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}
