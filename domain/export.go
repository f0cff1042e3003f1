package domain

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// ExportedEvent is the wire form of a recorded event: one line of the
// NDJSON export (GET /v1/games/{id}/events with Accept:
// application/x-ndjson) and one item of the JSON events page. Data holds
// the stored payload bytes verbatim, so anyone can recompute the chain;
// hashes are lower-case hex (64 characters).
type ExportedEvent struct {
	GameID     string          `json:"game_id"`
	Version    int             `json:"version"`
	Type       EventType       `json:"type"`
	OccurredAt string          `json:"occurred_at"` // RFC 3339 UTC with milliseconds
	Data       json.RawMessage `json:"data"`
	PrevHash   string          `json:"prev_hash"`
	Hash       string          `json:"hash"`
}

// Export converts a recorded event to its wire form.
func Export(r RecordedEvent) ExportedEvent {
	return ExportedEvent{GameID: r.GameID, Version: r.Version, Type: r.Type, OccurredAt: FormatTime(r.OccurredAt),
		Data: json.RawMessage(r.Payload), PrevHash: hex.EncodeToString(r.PrevHash), Hash: hex.EncodeToString(r.Hash)}
}

// Import converts the wire form back. It returns an error for a malformed
// time or hash, or one not written the way Export writes it (lowercase hex,
// FormatTime's form): the decoders accept other spellings of the same value
// (upper-case hex digits, other RFC 3339 forms), and an audit of a file
// must fail on any changed byte, not only on a changed value. It does not
// verify anything else (Audit does).
func Import(x ExportedEvent) (RecordedEvent, error) {
	at, err := time.Parse(time.RFC3339Nano, x.OccurredAt)
	if err != nil {
		return RecordedEvent{}, fmt.Errorf("event %d: occurred_at: %w", x.Version, err)
	}
	if FormatTime(at) != x.OccurredAt {
		return RecordedEvent{}, fmt.Errorf("event %d: occurred_at %q is not in the export's form %q", x.Version, x.OccurredAt, FormatTime(at))
	}
	prev, err := hex.DecodeString(x.PrevHash)
	if err != nil {
		return RecordedEvent{}, fmt.Errorf("event %d: prev_hash: %w", x.Version, err)
	}
	hash, err := hex.DecodeString(x.Hash)
	if err != nil {
		return RecordedEvent{}, fmt.Errorf("event %d: hash: %w", x.Version, err)
	}
	if hex.EncodeToString(prev) != x.PrevHash || hex.EncodeToString(hash) != x.Hash {
		return RecordedEvent{}, fmt.Errorf("event %d: hashes must be lowercase hex", x.Version)
	}
	return RecordedEvent{GameID: x.GameID, Version: x.Version, Type: x.Type, OccurredAt: at.UTC(),
		Payload: []byte(x.Data), PrevHash: prev, Hash: hash}, nil
}
