package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/openpatience/solitaire/api"
	client "github.com/openpatience/solitaire/clients/go"
	"github.com/openpatience/solitaire/domain"
)

// line is a game played end to end: how it is created, the moves in order,
// and the status it must end in. Solver lines (testdata/) become lines too:
// convert each solver token to domain moves and add them to lines.
type line struct {
	name   string
	create client.CreateGameRequest
	moves  []domain.Move
	status client.GameStatus
}

// clientLayout is the runs layout in the client's types.
func clientLayout() *client.Layout {
	l := runs()
	out := &client.Layout{Stock: l.Stock}
	for _, p := range l.Tableau {
		out.Tableau = append(out.Tableau, client.LayoutPile{FaceDown: p.FaceDown, FaceUp: p.FaceUp})
	}
	return out
}

func lines() []line {
	var seed client.CreateGameRequest_Seed
	if err := seed.FromSeed("99"); err != nil {
		panic(err)
	}
	automatic := client.CreateOptionsAutocompleteAutomatic
	return []line{
		{name: "klondike won card by card", create: client.CreateGameRequest{Variant: "klondike", Layout: clientLayout()},
			moves: winningLine(), status: client.GameStatusWon},
		{name: "klondike autocomplete", create: client.CreateGameRequest{Variant: "klondike", Layout: clientLayout()},
			moves: []domain.Move{{Type: domain.MoveAutocomplete}}, status: client.GameStatusWon},
		{name: "relaxed finishes itself (R2.6 automatic)", create: client.CreateGameRequest{Variant: "relaxed", Layout: clientLayout(),
			Options: &client.CreateOptions{Autocomplete: &automatic}},
			moves:  []domain.Move{{Type: domain.MoveCards, From: domain.TableauRef(0), To: domain.FoundationRef(domain.AnyFoundation)}},
			status: client.GameStatusWon},
		{name: "seeded klondike resigned", create: client.CreateGameRequest{Variant: "klondike", Seed: &seed},
			moves:  []domain.Move{{Type: domain.MoveDraw}, {Type: domain.MoveDraw}, {Type: domain.MoveResign}},
			status: client.GameStatusLost},
	}
}

// clientMove renders a domain move in the client's request type.
func clientMove(m domain.Move) client.MoveRequest { return clientReq(fromDomain(m)) }

// clientReq renders a move request in the client's request type, a oneOf
// on type (one schema per command): through its JSON, which is the same.
func clientReq(r api.MoveRequest) client.MoveRequest {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	var out client.MoveRequest
	if err := out.UnmarshalJSON(b); err != nil {
		panic(err)
	}
	return out
}

// playLine plays l with the generated client against the server at base,
// each move conditional on the version the client last saw, and checks
// the end: the status, the log's length, and the replay of the last
// version.
func playLine(t *testing.T, c *client.ClientWithResponses, l line) client.Game {
	t.Helper()
	ctx := context.Background()
	created, err := c.CreateGameWithResponse(ctx, nil, l.create)
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil {
		t.Fatalf("%s: create: %d %s", l.name, created.StatusCode(), created.Body)
	}
	g := *created.JSON201
	for i, m := range l.moves {
		etag := strconv.Quote(strconv.Itoa(g.Version))
		r, err := c.PlayMoveWithResponse(ctx, g.Id, &client.PlayMoveParams{IfMatch: &etag}, clientMove(m))
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("%s: move %d (%s): %d %s", l.name, i+1, m, r.StatusCode(), r.Body)
		}
		if r.JSON200.Game.Version != g.Version+len(r.JSON200.Events) || r.HTTPResponse.Header.Get("ETag") != strconv.Quote(strconv.Itoa(r.JSON200.Game.Version)) {
			t.Fatalf("%s: move %d: version %d after %d with %d events", l.name, i+1, r.JSON200.Game.Version, g.Version, len(r.JSON200.Events))
		}
		g = r.JSON200.Game
	}
	if g.Status != l.status {
		t.Fatalf("%s: ended %s, want %s", l.name, g.Status, l.status)
	}
	got, err := c.GetGameWithResponse(ctx, g.Id, nil)
	if err != nil || got.JSON200 == nil || !reflect.DeepEqual(*got.JSON200, g) {
		t.Errorf("%s: GET differs from the last move's game: %v", l.name, err)
	}
	limit := 500
	evs, err := c.ListEventsWithResponse(ctx, g.Id, &client.ListEventsParams{Limit: &limit})
	if err != nil || evs.JSON200 == nil || len(evs.JSON200.Events) != g.Version {
		t.Errorf("%s: events: %v", l.name, err)
	}
	// The generated client narrows an event on its type (Event's
	// discriminator): each comes back as its own type's struct.
	for i, ev := range evs.JSON200.Events {
		v, err := ev.ValueByDiscriminator()
		if err != nil {
			t.Fatalf("%s: event %d: %v", l.name, i+1, err)
		}
		switch v := v.(type) {
		case client.GameDealtEvent:
			if i != 0 || string(v.Data.Rules.Variant) != string(l.create.Variant) {
				t.Errorf("%s: event %d is the deal of %s", l.name, i+1, v.Data.Rules.Variant)
			}
		case client.CardsMovedEvent:
			if v.Data.Count != len(v.Data.Cards) || v.Data.From == "" || v.Data.To == "" {
				t.Errorf("%s: event %d moves %+v", l.name, i+1, v.Data)
			}
		case client.GameWonEvent, client.GameResignedEvent:
			if i != len(evs.JSON200.Events)-1 {
				t.Errorf("%s: event %d ends the game but is not the last", l.name, i+1)
			}
		}
	}
	st, err := c.GetStateWithResponse(ctx, g.Id, g.Version)
	if err != nil || st.JSON200 == nil || !reflect.DeepEqual(*st.JSON200, g) {
		t.Errorf("%s: states/%d differs from the game", l.name, g.Version)
	}
	return g
}

// TestEndToEnd plays whole games with the client generated from
// openapi.yaml against a listening server, every call validated against
// the spec by the test transport.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		hc := &http.Client{Transport: e.tr}
		anon, err := client.NewClientWithResponses(e.srv.URL, client.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		p, err := anon.CreatePlayerWithResponse(ctx, client.NewPlayer{Name: "Client"})
		if err != nil || p.JSON201 == nil {
			t.Fatalf("create player: %v", err)
		}
		vs, err := anon.ListVariantsWithResponse(ctx)
		if err != nil || vs.JSON200 == nil || len(vs.JSON200.Variants) != len(domain.Variants()) {
			t.Fatalf("variants: %v", err)
		}
		auth := func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+p.JSON201.Token)
			return nil
		}
		c, err := client.NewClientWithResponses(e.srv.URL, client.WithHTTPClient(hc), client.WithRequestEditorFn(auth))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines() {
			playLine(t, c, l)
		}
		list, err := c.ListGamesWithResponse(ctx, nil)
		if err != nil || list.JSON200 == nil || len(list.JSON200.Games) != len(lines()) {
			t.Errorf("list: %v", err)
		}
		// The client sees problems as problems.
		bad, err := c.PlayMoveWithResponse(ctx, "nope", nil, clientReq(draw()))
		if err != nil || bad.ApplicationproblemJSON404 == nil || bad.ApplicationproblemJSON404.Code != "not_found" {
			t.Errorf("move in no game: %v %s", err, bad.Body)
		}
	})
}
