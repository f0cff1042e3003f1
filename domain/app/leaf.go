package app

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openpatience/solitaire/domain"
)

// LeafFormat is the version of the canonical leaf record, the value of its
// "v" key. A change of keys or of their meaning is a new version; records
// already in a log keep the version they were written with.
const LeafFormat = 1

// MaxLeafBytes bounds a leaf record: ids, rules and hashes fit in well
// under 1 KiB; a parser refuses anything longer.
const MaxLeafBytes = 4096

// Leaf is one finished game as the transparency log records it: the facts
// a rewritten game would change (its result, its chain's head, its deal's
// commitment) and nothing the rules keep secret. Only commitments and
// hashes stand for the deal, so a leaf may be published at once, even for
// a game on a shared deal (RULES R6.4, R6.6).
//
// The canonical encoding (EncodeLeaf) is one line of JSON, the keys in
// byte order at every depth, no white space, no HTML escaping, ending in
// one "\n":
//
//	{"commitment":C,"ended_at":T,"events":N,"game_id":ID,"head":H,"moves":M,
//	 "owner":P,"rules":{...},"score":S,"status":ST,"v":1,"variant":V}
//
// C the commitment of the first event (R6.4), T the end time in RFC 3339
// UTC with milliseconds (R5.1; an expiry's is the deadline), N the events
// in the log (the head's version), H the head event's hash in lower-case
// hex (64 digits), M the moves counted (R4), P the owner's player id, the
// rules as resolved (domain.Rules), S the score at the end or null without
// scoring (R4), ST won, lost or expired, V the variant id (R3).
type Leaf struct {
	Commitment string        `json:"commitment"`
	EndedAt    string        `json:"ended_at"`
	Events     int           `json:"events"`
	GameID     string        `json:"game_id"`
	Head       string        `json:"head"`
	Moves      int           `json:"moves"`
	Owner      string        `json:"owner"`
	Rules      domain.Rules  `json:"rules"`
	Score      *int          `json:"score"`
	Status     domain.Status `json:"status"`
	V          int           `json:"v"`
	Variant    string        `json:"variant"`
}

// ErrNotEnded: a game in progress has no leaf; it gets one when it ends.
var ErrNotEnded = errors.New("the game has not ended")

// LeafOf is the leaf of game g, ended, whose log's last event (number
// g.Version) has hash head. It reads the record's id, variant, rules,
// commitment and owner and the projection (status, moves, score,
// finished time). Errors: ErrNotEnded for a game in progress; an error for
// a head that is not 32 bytes.
func LeafOf(g *Game, head []byte) (Leaf, error) {
	if !g.Status.Ended() || g.FinishedAt == nil {
		return Leaf{}, ErrNotEnded
	}
	if len(head) != 32 {
		return Leaf{}, fmt.Errorf("domain: leaf of %s: head hash of %d bytes, want 32", g.ID, len(head))
	}
	var score *int
	if g.Score != nil {
		v := *g.Score
		score = &v
	}
	return Leaf{Commitment: g.Commitment, EndedAt: domain.FormatTime(*g.FinishedAt), Events: g.Version,
		GameID: g.ID, Head: hex.EncodeToString(head), Moves: g.Moves, Owner: g.Owner, Rules: g.Rules,
		Score: score, Status: g.Status, V: LeafFormat, Variant: g.Variant}, nil
}

// LeafFromLog is the leaf an audited log gives: what LeafOf gives for the
// game the server should hold, rebuilt from the log alone (the rules,
// variant and commitment of the first event; status, moves, score and end
// of the replayed state; the head of the chain). The owner is not in a
// log: it is taken as given. Errors: ErrNotEnded when the replay did not
// end the game; an error when the log has no deal or its head is not a
// hash.
func LeafFromLog(gameID, owner string, recs []domain.RecordedEvent, a domain.AuditReport) (Leaf, error) {
	if a.State == nil || len(recs) == 0 || a.State.Version != len(recs) {
		return Leaf{}, errors.New("domain: leaf from log: the log does not replay to its end")
	}
	e, err := domain.DecodeEvent(recs[0].Version, recs[0].Type, recs[0].OccurredAt, recs[0].Payload)
	if err != nil || e.Type != domain.EventGameDealt || e.Data.Rules == nil {
		return Leaf{}, errors.New("domain: leaf from log: the first event is not a readable deal")
	}
	g := &Game{ID: gameID, Variant: e.Data.Rules.Variant, Rules: *e.Data.Rules, DealSecret: DealSecret{Commitment: e.Data.Commitment},
		Owner: owner}
	g.Project(a.State)
	return LeafOf(g, recs[len(recs)-1].Hash)
}

// EncodeLeaf is the canonical encoding of l (see Leaf): the same leaf
// always gives the same bytes, on every machine and Go version, because
// keys are sorted and numbers are integers written in decimal.
func EncodeLeaf(l Leaf) ([]byte, error) {
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("domain: encode leaf: %w", err)
	}
	// Struct fields come out in declaration order; the nested rules do
	// not sort by name, so the whole value goes through a generic map,
	// whose keys encoding/json writes sorted. UseNumber keeps integers
	// exact.
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("domain: encode leaf: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the line with "\n"
		return nil, fmt.Errorf("domain: encode leaf: %w", err)
	}
	if b.Len() > MaxLeafBytes {
		return nil, fmt.Errorf("domain: encode leaf: %d bytes, at most %d", b.Len(), MaxLeafBytes)
	}
	return b.Bytes(), nil
}

// ParseLeaf reads a canonical leaf record. Errors: a record longer than
// MaxLeafBytes, one that is not JSON of a Leaf, of another format version,
// or not in canonical form (EncodeLeaf of what it decodes to must give the
// same bytes: a record with the same meaning but other bytes would have
// another hash, so it is refused rather than read leniently).
func ParseLeaf(b []byte) (Leaf, error) {
	if len(b) > MaxLeafBytes {
		return Leaf{}, fmt.Errorf("domain: leaf of %d bytes, at most %d", len(b), MaxLeafBytes)
	}
	var l Leaf
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		return Leaf{}, fmt.Errorf("domain: leaf: %w", err)
	}
	if l.V != LeafFormat {
		return Leaf{}, fmt.Errorf("domain: leaf format %d, this program reads %d", l.V, LeafFormat)
	}
	canon, err := EncodeLeaf(l)
	if err != nil {
		return Leaf{}, err
	}
	if !bytes.Equal(canon, b) {
		return Leaf{}, errors.New("domain: leaf is not in canonical form")
	}
	return l, nil
}
