package domain

import "strconv"

// plainPayload is d's JSON exactly as json.Marshal writes it, for the
// payloads of plain moves: only the fields V, Move, Auto, From, To, Pile,
// Count, Cards, Card, Undone and Redone may be set, every card valid and
// every pile reference's text printable ASCII that JSON keeps as it is. It
// reports false for any other payload (a deal, an undo with its changes, a
// hint, an expiry), which EncodePayload hands to json.Marshal. Why:
// json.Marshal walks every field of EventData by reflection, which costs
// more than the hash of the event (BENCHMARKS.md, "Design choices on the
// move path").
// TestPlainPayloadIsJSONMarshal holds it to json.Marshal on random games
// of every variant and on every field set alone, so a field added to
// EventData cannot be dropped here unnoticed.
func plainPayload(d *EventData) ([]byte, bool) {
	if d.Rules != nil || d.Deal != nil || d.Commitment != "" || d.Salt != "" || d.Hidden != nil ||
		d.Winnable || d.SolutionCommitment != "" || d.Difficulty != "" || d.Changes != nil ||
		d.Deadline != nil || d.Verdict != "" || d.Hint != nil {
		return nil, false
	}
	if d.Card != nil && !d.Card.Valid() {
		return nil, false
	}
	for _, c := range d.Cards {
		if !c.Valid() {
			return nil, false
		}
	}
	b := make([]byte, 0, 64+8*len(d.Cards))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.V), 10)
	b = append(b, `,"move":`...)
	b = strconv.AppendInt(b, int64(d.Move), 10)
	if d.Auto {
		b = append(b, `,"auto":true`...)
	}
	for _, f := range [...]struct {
		name string
		p    PileRef
	}{{"from", d.From}, {"to", d.To}, {"pile", d.Pile}} {
		if f.p.IsZero() {
			continue
		}
		s := f.p.String()
		if !plainText(s) {
			return nil, false
		}
		b = append(b, `,"`...)
		b = append(b, f.name...)
		b = append(b, `":"`...)
		b = append(b, s...)
		b = append(b, '"')
	}
	if d.Count != 0 {
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(d.Count), 10)
	}
	if len(d.Cards) > 0 {
		b = append(b, `,"cards":[`...)
		for i, c := range d.Cards {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, c.String()...)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	if d.Card != nil {
		b = append(b, `,"card":"`...)
		b = append(b, d.Card.String()...)
		b = append(b, '"')
	}
	if d.Undone != 0 {
		b = append(b, `,"undone":`...)
		b = strconv.AppendInt(b, int64(d.Undone), 10)
	}
	if d.Redone != 0 {
		b = append(b, `,"redone":`...)
		b = strconv.AppendInt(b, int64(d.Redone), 10)
	}
	return append(b, '}'), true
}

// plainText reports whether json.Marshal writes s between quotes as it is:
// printable ASCII without a quote, a backslash or an HTML character.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
