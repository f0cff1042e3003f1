package api_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// TestR6_8HashesRevealNoHiddenCards is the brute-force attack of RULES
// R6.8, run over HTTP on both databases against a game on a server seed, a
// sealed daily game and a duel game: the player plays a winning line until
// at most maxUnknown cards have never been face up, reads every view of
// the game it may read (the game, its events as JSON and NDJSON, its
// states, its audit, the list, the answers to its moves), and tries every
// arrangement of the unseen cards over the unseen places: it rebuilds the
// deal event's payload from the redacted one, hashes it as the chain does,
// chains every later event it was shown onto it, and looks for any of
// those hashes among everything it read. No arrangement may match.
//
// So that the attack is known to be the right one, the test checks that
// the rebuilt payload of the true arrangement is the stored payload byte
// for byte once the game's salt (which the player cannot read) is put in,
// and that the stored payload's hash is the hash the player was shown:
// the salt alone stands between the player and the cards. A game on a
// shared deal is attacked again after it has ended (sealed, R6.6); the
// game on a server seed, once ended, shows its whole deal and salt and
// its chain verifies.
func TestR6_8HashesRevealNoHiddenCards(t *testing.T) {
	t.Parallel()
	line := winLine(t, "klondike", klondikeSeed)
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bob := e.newPlayer("Bob")
		e.seeds.next(klondikeSeed)
		game := e.createGame(map[string]any{"variant": "klondike"})
		e.seeds.next(klondikeSeed)
		daily := e.playDaily(e.token, "klondike")
		e.seeds.next(klondikeSeed)
		duel := e.createDuel(map[string]any{"variant": "klondike", "winnable": false, "duration_s": 3600})
		duelGame := e.join(bob, duel.ID)
		for _, c := range []struct {
			name, id, token string
			shared          bool
		}{{"game", game.ID, e.token, false}, {"daily", daily.ID, e.token, true}, {"duel", duelGame.ID, bob, true}} {
			func() { // e's helpers fail e.t, so the cases are not subtests
				unseen := e.playDownTo(c.token, c.id, line)
				tried, matched := e.bruteForce(c.token, c.id, unseen)
				figures(t, "%s/%s: %d cards never face up, %d arrangements tried against %d hashes read, matches: %d",
					t.Name(), c.name, len(unseen), tried, e.hashesRead(), matched)
				if matched != 0 {
					t.Fatalf("%s: %d of %d arrangements of the unseen cards match a hash the player read (R6.8)", c.name, matched, tried)
				}
				e.playAs(c.token, c.id, resign())
				if c.shared {
					if tried, matched := e.bruteForce(c.token, c.id, unseen); matched != 0 {
						t.Fatalf("%s, sealed after the end: %d of %d arrangements match (R6.6, R6.8)", c.name, matched, tried)
					}
					return
				}
				recs := e.exported(c.token, c.id)
				if bad := domain.VerifyChain(c.id, recs); bad != 0 {
					t.Fatalf("%s: the revealed chain breaks at version %d", c.name, bad)
				}
				first, err := domain.DecodeEvent(1, recs[0].Type, recs[0].OccurredAt, recs[0].Payload)
				if err != nil || first.Data.Salt == "" || first.Data.Hidden != nil {
					t.Fatalf("the revealed deal event: %v %+v", err, first.Data)
				}
				if a := domain.Audit(c.id, recs, nil); !a.ChainOK || !a.ReplayOK || a.CommitmentOK == nil || !*a.CommitmentOK {
					t.Fatalf("offline audit of the revealed export: %+v", a)
				}
			}()
		}
	})
}

// maxUnknown is how few never-seen cards playDownTo plays down to: 7! =
// 5,040 arrangements, each chained through every event of the log.
const maxUnknown = 7

// playDownTo plays line in game id as token's player until at most
// maxUnknown of its cards have never been face up, and returns those
// cards. It fails the test if the line ends first.
func (e *cenv) playDownTo(token, id string, line []domain.Move) []domain.Card {
	e.t.Helper()
	seen := map[domain.Card]bool{}
	for _, m := range line {
		e.clock.Advance(time.Second)
		e.playAs(token, id, fromDomain(m))
		s := e.load(id)
		for _, p := range s.Tableau {
			for _, c := range p.Cards[p.Down:] {
				seen[c] = true
			}
		}
		for _, c := range s.Waste {
			seen[c] = true
		}
		for _, f := range s.Foundations {
			for _, c := range f {
				seen[c] = true
			}
		}
		if s.Status != domain.StatusInProgress {
			e.t.Fatalf("the line ended the game with %d cards unseen", 52-len(seen))
		}
		if n := 52 - len(seen); n <= maxUnknown && n > 1 {
			var out []domain.Card
			for c := domain.Card(0); int(c) < 52; c++ {
				if !seen[c] {
					out = append(out, c)
				}
			}
			return out
		}
	}
	e.t.Fatal("the line never got down to a few unseen cards")
	return nil
}

// hex64 finds every hash-sized hex string in a body.
var hex64 = regexp.MustCompile(`[0-9a-f]{64}`)

// bruteForce reads every view of game id the player with token may read,
// then tries every arrangement of unseen over the places the true deal
// gives them (see TestR6_8HashesRevealNoHiddenCards). It returns the
// arrangements tried and how many produced a hash found in any body the
// test's client has read so far.
func (e *cenv) bruteForce(token, id string, unseen []domain.Card) (tried, matched int) {
	e.t.Helper()
	t := e.t
	for _, path := range []string{"/v1/games/" + id, "/v1/games", "/v1/games/" + id + "/legal-moves",
		"/v1/games/" + id + "/audit", "/v1/games/" + id + "/states/1", "/v1/games/" + id + "/states/" + strconv.Itoa(e.version(id))} {
		e.must(http.StatusOK, req{method: "GET", path: path, token: token})
	}
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events", token: token,
		header: map[string]string{"Accept": "application/x-ndjson"}})
	var page struct {
		Events []struct {
			Version    int             `json:"version"`
			Type       string          `json:"type"`
			OccurredAt string          `json:"occurred_at"`
			Data       json.RawMessage `json:"data"`
			Hash       string          `json:"hash"`
		} `json:"events"`
	}
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events?limit=500", token: token}).decode(t, &page)
	read := map[string]bool{}
	e.tr.mu.Lock()
	for _, b := range e.tr.bodies {
		for _, h := range hex64.FindAll(b, -1) {
			read[string(h)] = true
		}
	}
	e.tr.mu.Unlock()

	// The attacker's model of the deal event: the redacted payload it was
	// shown, to be filled in with a guess.
	var shown domain.EventData
	if err := json.Unmarshal(page.Events[0].Data, &shown); err != nil || shown.Hidden == nil || shown.Deal == nil {
		t.Fatalf("the deal as shown: %v %s", err, page.Events[0].Data)
	}
	if shown.Salt != "" {
		t.Fatalf("the redacted deal shows its salt: %s", page.Events[0].Data)
	}
	at, err := time.Parse(time.RFC3339Nano, page.Events[0].OccurredAt)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.store.Events(context.Background(), id, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := domain.DecodeEvent(1, stored[0].Type, stored[0].OccurredAt, stored[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	// The places of the unseen cards in the true deal.
	isUnseen := map[domain.Card]bool{}
	for _, c := range unseen {
		isUnseen[c] = true
	}
	type place struct{ pile, at int } // pile -1: the stock
	var places []place
	for i, p := range truth.Data.Deal.Tableau {
		for j, c := range p.Down {
			if isUnseen[c] {
				places = append(places, place{i, j})
			}
		}
	}
	for j, c := range truth.Data.Deal.Stock {
		if isUnseen[c] {
			places = append(places, place{-1, j})
		}
	}
	if len(places) != len(unseen) {
		t.Fatalf("%d unseen cards in %d places", len(unseen), len(places))
	}
	guess := func(cards []domain.Card, salt string) []byte {
		d := shown
		d.Salt = salt
		deal := *truth.Data.Deal // every seen card where it truly lies: a stronger attacker than any player
		deal.Tableau = make([]domain.PileLayout, len(truth.Data.Deal.Tableau))
		for i, p := range truth.Data.Deal.Tableau {
			deal.Tableau[i] = domain.PileLayout{Down: append([]domain.Card{}, p.Down...), Up: p.Up}
		}
		deal.Stock = append([]domain.Card{}, truth.Data.Deal.Stock...)
		for k, pl := range places {
			if pl.pile < 0 {
				deal.Stock[pl.at] = cards[k]
			} else {
				deal.Tableau[pl.pile].Down[pl.at] = cards[k]
			}
		}
		d.Deal, d.Hidden = &deal, nil
		b, err := domain.EncodePayload(domain.Event{Data: d})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The attack is the right one: with the salt it cannot read, the true
	// arrangement rebuilds the stored payload, whose hash it was shown.
	trueCards := make([]domain.Card, len(places))
	for k, pl := range places {
		if pl.pile < 0 {
			trueCards[k] = truth.Data.Deal.Stock[pl.at]
		} else {
			trueCards[k] = truth.Data.Deal.Tableau[pl.pile].Down[pl.at]
		}
	}
	if b := guess(trueCards, truth.Data.Salt); !bytes.Equal(b, stored[0].Payload) {
		t.Fatalf("the rebuilt payload is not the stored one:\n%s\n%s", b, stored[0].Payload)
	}
	if page.Events[0].Hash != hex.EncodeToString(stored[0].Hash) {
		t.Fatalf("the deal's hash shown %q is not the stored one", page.Events[0].Hash)
	}

	// Every arrangement, chained through every event shown (Heap's algorithm).
	cards := append([]domain.Card{}, unseen...)
	try := func() {
		tried++
		h := domain.EventHash(domain.GenesisHash, id, 1, domain.EventGameDealt, at, guess(cards, ""))
		hit := read[hex.EncodeToString(h)]
		for _, ev := range page.Events[1:] {
			evAt, err := time.Parse(time.RFC3339Nano, ev.OccurredAt)
			if err != nil {
				t.Fatal(err)
			}
			h = domain.EventHash(h, id, ev.Version, domain.EventType(ev.Type), evAt, ev.Data)
			hit = hit || read[hex.EncodeToString(h)]
		}
		if hit {
			matched++
		}
	}
	c := make([]int, len(cards))
	try()
	for i := 0; i < len(cards); {
		if c[i] < i {
			if i%2 == 0 {
				cards[0], cards[i] = cards[i], cards[0]
			} else {
				cards[c[i]], cards[i] = cards[i], cards[c[i]]
			}
			try()
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
	return tried, matched
}

// hashesRead counts the distinct hash-sized hex strings in every body the
// test's client has read.
func (e *cenv) hashesRead() int {
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	seen := map[string]bool{}
	for _, b := range e.tr.bodies {
		for _, h := range hex64.FindAll(b, -1) {
			seen[string(h)] = true
		}
	}
	return len(seen)
}

// exported reads game id's log as the NDJSON export and imports it.
func (e *cenv) exported(token, id string) []domain.RecordedEvent {
	e.t.Helper()
	r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events", token: token,
		header: map[string]string{"Accept": "application/x-ndjson"}})
	var out []domain.RecordedEvent
	for _, l := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
		var x domain.ExportedEvent
		if err := json.Unmarshal(l, &x); err != nil {
			e.t.Fatal(err)
		}
		rec, err := domain.Import(x)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// TestR6_8LegacyChainHidden: a log whose deal event carries no salt (deal
// payload version 1) has a deal hash that is a function of the cards
// alone, so while its deal is hidden no route shows any of its hashes
// (hash and prev_hash empty, the audit's head_hash empty); once the game
// has ended they all show and the chain verifies offline as before.
func TestR6_8LegacyChainHidden(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rules := rulesOf(t, "klondike")
		salt := bytes.Repeat([]byte{7}, 32)
		deal := domain.Deal(rules, 42)
		g := &app.Game{ID: "0123456789abcdef0123456789abcdef", Variant: "klondike", Rules: rules, Owner: e.player,
			DealSecret: app.DealSecret{Seed: 42, Salt: salt, Commitment: domain.Commitment(deal, salt)}, HasSeed: true, Ranked: true,
			CreatedAt: e.clock.Now()}
		first := domain.DealtEvent(rules, deal, g.Commitment, g.CreatedAt)
		if first.Data.V != domain.PayloadVersion || first.Data.Salt != "" {
			t.Fatalf("a version 1 deal payload: %+v", first.Data)
		}
		s := &domain.State{}
		s.Apply(first)
		g.Project(s)
		if err := e.store.Create(ctx, g, first, s, nil); err != nil {
			t.Fatal(err)
		}
		e.play(g.ID, draw())
		e.play(g.ID, draw())
		var page hashPage
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/events"}).decode(t, &page)
		nd := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/events",
			header: map[string]string{"Accept": "application/x-ndjson"}})
		var audit struct {
			HeadHash string `json:"head_hash"`
			ChainOK  bool   `json:"chain_ok"`
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/audit"}).decode(t, &audit)
		if len(page.Events) != 3 || audit.HeadHash != "" || !audit.ChainOK {
			t.Fatalf("%d events, audit %+v", len(page.Events), audit)
		}
		for _, ev := range page.Events {
			if ev.Hash != "" || ev.PrevHash != "" {
				t.Errorf("version %d shows hash %q prev %q while the deal is hidden", ev.Version, ev.Hash, ev.PrevHash)
			}
		}
		for _, l := range bytes.Split(bytes.TrimSpace(nd.body), []byte("\n")) {
			var x domain.ExportedEvent
			if err := json.Unmarshal(l, &x); err != nil || x.Hash != "" || x.PrevHash != "" {
				t.Errorf("the NDJSON export shows a hash while the deal is hidden (%v): %s", err, l)
			}
		}
		e.play(g.ID, resign())
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/events"}).decode(t, &page)
		for _, ev := range page.Events {
			if len(ev.Hash) != 64 || len(ev.PrevHash) != 64 {
				t.Errorf("version %d after the end: hash %q prev %q", ev.Version, ev.Hash, ev.PrevHash)
			}
		}
		ce := &cenv{env: e}
		recs := ce.exported("", g.ID)
		if a := domain.Audit(g.ID, recs, salt); !a.ChainOK || !a.ReplayOK || a.CommitmentOK == nil || !*a.CommitmentOK {
			t.Fatalf("offline audit of the legacy log: %+v", a)
		}
	})
}

// hashPage is an events page with the fields TestR6_8LegacyChainHidden
// reads.
type hashPage struct {
	Events []struct {
		Version  int    `json:"version"`
		Hash     string `json:"hash"`
		PrevHash string `json:"prev_hash"`
	} `json:"events"`
}
