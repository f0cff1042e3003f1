package api

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The answer to a move (MoveResult) is the one body every move renders,
// and encoding/json's reflection over its dozens of cards was a tenth of a
// move's CPU. appendMoveResult writes the same bytes as encodeJSON (which
// TestRenderMatchesEncodingJSON checks over random games, revealed or
// not) by appending each field in order; whatever it does not handle
// itself byte for byte (a string that needs escaping, a payload that is
// not already in the form encoding/json would write) it hands to
// encodeJSON, so its output never differs. A field added to Game, Card or
// Event must be added here too: the test fails until it is.

// renderMoveResult is encodeJSON(r), faster.
func renderMoveResult(r *MoveResult) ([]byte, error) {
	b := make([]byte, 0, 4096)
	b = append(b, `{"game":`...)
	b, err := appendGame(b, &r.Game)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"events":`...)
	if r.Events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Events {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendEvent(b, &r.Events[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...), nil
}

// plainString reports whether s is written by encoding/json (HTML escaping
// off) as itself between quotes: printable ASCII without " and \.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainHTML is plainString for a string that Event.MarshalJSON's
// json.Marshal writes, which escapes <, > and & too.
func plainHTML(s string) bool {
	return plainString(s) && !strings.ContainsAny(s, "<>&")
}

// appendString appends s as a JSON string, as encodeJSON writes it.
func appendString(b []byte, s string) ([]byte, error) {
	if plainString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), nil
	}
	enc, err := encodeJSON(s)
	if err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(enc, []byte("\n"))...), nil
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

func appendIntPtr(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return appendInt(b, *n)
}

func appendStringPtr(b []byte, s *string) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	return appendString(b, *s)
}

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// appendCards appends cards as encoding/json writes a []Card (null for
// nil).
func appendCards(b []byte, cards []Card) ([]byte, error) {
	if cards == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	var err error
	for i := range cards {
		if i > 0 {
			b = append(b, ',')
		}
		c := &cards[i]
		b = append(b, `{"code":`...)
		if b, err = appendString(b, c.Code); err != nil {
			return nil, err
		}
		b = append(b, `,"rank":`...)
		b = appendInt(b, c.Rank)
		b = append(b, `,"suit":`...)
		if b, err = appendString(b, c.Suit); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendGame appends g as encodeJSON writes it (without the newline).
func appendGame(b []byte, g *Game) ([]byte, error) {
	var err error
	str := func(prefix, s string) {
		if err == nil {
			b = append(b, prefix...)
			b, err = appendString(b, s)
		}
	}
	strPtr := func(prefix string, s *string) {
		if err == nil {
			b = append(b, prefix...)
			b, err = appendStringPtr(b, s)
		}
	}
	cards := func(prefix string, cs []Card) {
		if err == nil {
			b = append(b, prefix...)
			b, err = appendCards(b, cs)
		}
	}
	str(`{"id":`, g.ID)
	str(`,"variant":`, g.Variant)
	o := &g.Options
	b = append(b, `,"options":{"draw":`...)
	b = appendInt(b, o.Draw)
	b = append(b, `,"passes":`...)
	b = appendIntPtr(b, o.Passes)
	str(`,"scoring":`, o.Scoring)
	b = append(b, `,"take_back":`...)
	b = appendBool(b, o.TakeBack)
	str(`,"flip":`, o.Flip)
	str(`,"autocomplete":`, o.Autocomplete)
	b = append(b, `,"time_limit_s":`...)
	b = appendIntPtr(b, o.TimeLimitS)
	b = append(b, `,"undo":`...)
	b = appendBool(b, o.Undo)
	b = append(b, '}')
	str(`,"status":`, g.Status)
	b = append(b, `,"version":`...)
	b = appendInt(b, g.Version)
	b = append(b, `,"moves":`...)
	b = appendInt(b, g.Moves)
	b = append(b, `,"score":`...)
	b = appendIntPtr(b, g.Score)
	strPtr(`,"started_at":`, g.StartedAt)
	b = append(b, `,"elapsed_ms":`...)
	b = strconv.AppendInt(b, g.ElapsedMS, 10)
	strPtr(`,"deadline":`, g.Deadline)
	b = append(b, `,"stock":{"count":`...)
	b = appendInt(b, g.Stock.Count)
	if g.Stock.Cards != nil { // omitzero
		cards(`,"cards":`, g.Stock.Cards)
	}
	b = append(b, `},"passes":{"used":`...)
	b = appendInt(b, g.Passes.Used)
	b = append(b, `,"limit":`...)
	b = appendIntPtr(b, g.Passes.Limit)
	b = append(b, '}')
	cards(`,"waste":{"cards":`, g.Waste.Cards)
	b = append(b, '}')
	b = append(b, `,"foundations":`...)
	if g.Foundations == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range g.Foundations {
			if i > 0 {
				b = append(b, ',')
			}
			cards(`{"cards":`, g.Foundations[i].Cards)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"tableau":`...)
	if g.Tableau == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range g.Tableau {
			p := &g.Tableau[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"face_down":`...)
			b = appendInt(b, p.FaceDown)
			cards(`,"cards":`, p.Cards)
			if p.FaceDownCards != nil { // omitzero
				cards(`,"face_down_cards":`, p.FaceDownCards)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"can_undo":`...)
	b = appendBool(b, g.CanUndo)
	b = append(b, `,"can_redo":`...)
	b = appendBool(b, g.CanRedo)
	str(`,"commitment":`, g.Commitment)
	b = append(b, `,"ranked":`...)
	b = appendBool(b, g.Ranked)
	str(`,"created_at":`, g.CreatedAt)
	strPtr(`,"deal":`, g.Deal)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// plainPayload reports whether raw, a stored payload, is written by
// Event.MarshalJSON as it is: no insignificant white space to compact
// away and nothing json.Marshal would escape for HTML (<, >, &, U+2028,
// U+2029), bytes checked in a string-unaware way (anything suspect falls
// back).
func plainPayload(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return false
		}
	}
	return true
}

// appendEvent appends e as encodeJSON writes it (Event.MarshalJSON).
func appendEvent(b []byte, e *Event) ([]byte, error) {
	if e.raw == nil || !plainPayload(e.raw) || !plainHTML(e.GameID) || !plainHTML(e.Type) ||
		!plainHTML(e.OccurredAt) || !plainHTML(e.PrevHash) || !plainHTML(e.Hash) {
		enc, err := encodeJSON(e)
		if err != nil {
			return nil, err
		}
		return append(b, bytes.TrimSuffix(enc, []byte("\n"))...), nil
	}
	b = append(b, `{"game_id":"`...)
	b = append(b, e.GameID...)
	b = append(b, `","version":`...)
	b = appendInt(b, e.Version)
	b = append(b, `,"type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","occurred_at":"`...)
	b = append(b, e.OccurredAt...)
	b = append(b, `","data":`...)
	b = append(b, e.raw...)
	b = append(b, `,"prev_hash":"`...)
	b = append(b, e.PrevHash...)
	b = append(b, `","hash":"`...)
	b = append(b, e.Hash...)
	return append(b, `"}`...), nil
}
