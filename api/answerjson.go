package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The answers a client gets on every move (MoveResult, and the Game in
// it and in every other game answer) write their own JSON: exactly the
// bytes encoding/json writes for the same value with HTML escaping off
// (TestAppendJSONMatchesEncodingJSON checks random games of every variant
// and values with every field set, special characters included), in a
// fraction of its time. encoding/json encodes the Game by reflection,
// card by card, and re-scans the JSON of each event: with it the answer is
// the largest part of a move's CPU in the server's own code (BENCHMARKS.md,
// "Design choices on the move path"). Whatever these writers do not
// handle themselves (a string that needs escaping, the legal moves, an
// event payload that is not plain compact ASCII) they hand to
// encoding/json, so the output is its output.

// jsonAppender is a value that appends its own JSON to a buffer: the
// bytes encoding/json would write for it, without the newline.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// appendStd appends v as encoding/json writes it with HTML escaping off
// (as encodeJSON does), without the newline.
func appendStd(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only for a bug: every value handed here (strings, the legal
		// moves, a valid payload) marshals.
		panic("api: appendStd: " + err.Error())
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendStr appends s as a JSON string: as it is between quotes when it
// is printable ASCII without a quote or backslash (ids, enums, times,
// hashes, card codes), else by encoding/json.
func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return appendStd(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStrPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendStr(b, *s)
}

func appendIntPtr(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func (c Card) appendJSON(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = appendStr(b, c.Code)
	b = append(b, `,"rank":`...)
	b = strconv.AppendInt(b, int64(c.Rank), 10)
	b = append(b, `,"suit":`...)
	b = appendStr(b, c.Suit)
	return append(b, '}')
}

// appendList appends items as a JSON array, each written by each (null
// for a nil slice, as encoding/json writes it).
func appendList[T any](b []byte, items []T, each func(T, []byte) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(it, b)
	}
	return append(b, ']')
}

// appendCards appends cards as a JSON array.
func appendCards(b []byte, cards []Card) []byte { return appendList(b, cards, Card.appendJSON) }

func (l CardList) appendJSON(b []byte) []byte {
	b = append(b, `{"cards":`...)
	b = appendCards(b, l.Cards)
	return append(b, '}')
}

func (o GameOptions) appendJSON(b []byte) []byte {
	b = append(b, `{"draw":`...)
	b = strconv.AppendInt(b, int64(o.Draw), 10)
	b = append(b, `,"passes":`...)
	b = appendIntPtr(b, o.Passes)
	b = append(b, `,"scoring":`...)
	b = appendStr(b, o.Scoring)
	b = append(b, `,"take_back":`...)
	b = strconv.AppendBool(b, o.TakeBack)
	b = append(b, `,"flip":`...)
	b = appendStr(b, o.Flip)
	b = append(b, `,"autocomplete":`...)
	b = appendStr(b, o.Autocomplete)
	b = append(b, `,"time_limit_s":`...)
	b = appendIntPtr(b, o.TimeLimitS)
	b = append(b, `,"undo":`...)
	b = strconv.AppendBool(b, o.Undo)
	return append(b, '}')
}

func (p TableauPile) appendJSON(b []byte) []byte {
	b = append(b, `{"face_down":`...)
	b = strconv.AppendInt(b, int64(p.FaceDown), 10)
	b = append(b, `,"cards":`...)
	b = appendCards(b, p.Cards)
	if p.FaceDownCards != nil { // omitzero
		b = append(b, `,"face_down_cards":`...)
		b = appendCards(b, p.FaceDownCards)
	}
	return append(b, '}')
}

func (c *Competition) appendJSON(b []byte) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = appendStr(b, c.Kind)
	b = append(b, `,"id":`...)
	b = appendStr(b, c.ID)
	b = append(b, `,"date":`...)
	b = appendStrPtr(b, c.Date)
	return append(b, '}')
}

func (g Game) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendStr(b, g.ID)
	b = append(b, `,"variant":`...)
	b = appendStr(b, g.Variant)
	b = append(b, `,"options":`...)
	b = g.Options.appendJSON(b)
	b = append(b, `,"status":`...)
	b = appendStr(b, g.Status)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(g.Version), 10)
	b = append(b, `,"moves":`...)
	b = strconv.AppendInt(b, int64(g.Moves), 10)
	b = append(b, `,"score":`...)
	b = appendIntPtr(b, g.Score)
	b = append(b, `,"started_at":`...)
	b = appendStrPtr(b, g.StartedAt)
	b = append(b, `,"elapsed_ms":`...)
	b = strconv.AppendInt(b, g.ElapsedMS, 10)
	b = append(b, `,"deadline":`...)
	b = appendStrPtr(b, g.Deadline)
	b = append(b, `,"stock":{"count":`...)
	b = strconv.AppendInt(b, int64(g.Stock.Count), 10)
	if g.Stock.Cards != nil { // omitzero
		b = append(b, `,"cards":`...)
		b = appendCards(b, g.Stock.Cards)
	}
	b = append(b, `},"passes":{"used":`...)
	b = strconv.AppendInt(b, int64(g.Passes.Used), 10)
	b = append(b, `,"limit":`...)
	b = appendIntPtr(b, g.Passes.Limit)
	b = append(b, `,"recycles_left":`...)
	b = appendIntPtr(b, g.Passes.RecyclesLeft)
	b = append(b, `},"waste":`...)
	b = g.Waste.appendJSON(b)
	b = append(b, `,"waste_fanned":`...)
	b = strconv.AppendInt(b, int64(g.WasteFanned), 10)
	b = append(b, `,"foundations":`...)
	b = appendList(b, g.Foundations, CardList.appendJSON)
	b = append(b, `,"tableau":`...)
	b = appendList(b, g.Tableau, TableauPile.appendJSON)
	b = append(b, `,"can_undo":`...)
	b = strconv.AppendBool(b, g.CanUndo)
	b = append(b, `,"can_redo":`...)
	b = strconv.AppendBool(b, g.CanRedo)
	b = append(b, `,"commitment":`...)
	b = appendStr(b, g.Commitment)
	b = append(b, `,"ranked":`...)
	b = strconv.AppendBool(b, g.Ranked)
	b = append(b, `,"created_at":`...)
	b = appendStr(b, g.CreatedAt)
	b = append(b, `,"deal":`...)
	b = appendStrPtr(b, g.Deal)
	b = append(b, `,"competition":`...)
	b = g.Competition.appendJSON(b)
	if len(g.LegalMoves) > 0 { // omitempty
		b = append(b, `,"legal_moves":`...)
		b = appendStd(b, g.LegalMoves)
	}
	b = append(b, `,"winnable":`...)
	b = strconv.AppendBool(b, g.Winnable)
	b = append(b, `,"solution_commitment":`...)
	b = appendStrPtr(b, g.SolutionCommitment)
	b = append(b, `,"difficulty":`...)
	b = appendStrPtr(b, g.Difficulty)
	return append(b, '}')
}

// appendJSON writes e as MarshalJSON does. Its payload is written as it
// is when it is plain compact ASCII JSON (what the server stores): no
// white space, no byte that encoding/json would escape in a string (<, >,
// &) and nothing beyond ASCII, for which encoding/json's compaction
// changes nothing. MarshalJSON escapes <, > and & in the other strings
// too (json.Marshal does), so an event with one of those goes through
// MarshalJSON, as does any event without a plain payload.
func (e Event) appendJSON(b []byte) []byte {
	plain := e.raw != nil && plainJSON(e.raw)
	for _, s := range [...]string{e.GameID, e.Type, e.OccurredAt, e.PrevHash, e.Hash} {
		plain = plain && !strings.ContainsAny(s, "<>&")
	}
	if !plain {
		return appendStd(b, e)
	}
	b = append(b, `{"game_id":`...)
	b = appendStr(b, e.GameID)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(e.Version), 10)
	b = append(b, `,"type":`...)
	b = appendStr(b, e.Type)
	b = append(b, `,"occurred_at":`...)
	b = appendStr(b, e.OccurredAt)
	b = append(b, `,"data":`...)
	b = append(b, e.raw...)
	b = append(b, `,"prev_hash":`...)
	b = appendStr(b, e.PrevHash)
	b = append(b, `,"hash":`...)
	b = appendStr(b, e.Hash)
	return append(b, '}')
}

// plainJSON reports whether raw (valid JSON: newEvent checks a payload
// read back from the database, and a move's fresh one is
// domain.EncodePayload's) has only printable ASCII other than space, <, >
// and &.
func plainJSON(raw []byte) bool {
	for _, c := range raw {
		if c <= ' ' || c > 0x7e || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func (r MoveResult) appendJSON(b []byte) []byte {
	b = append(b, `{"game":`...)
	b = r.Game.appendJSON(b)
	b = append(b, `,"events":`...)
	b = appendList(b, r.Events, Event.appendJSON)
	return append(b, '}')
}
