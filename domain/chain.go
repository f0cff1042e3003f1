package domain

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strconv"
	"time"
)

// RecordedEvent is an event as the log stores it: the payload bytes exactly
// as written, and the hash chain links. Position is the global order of the
// event across all games (a bigint sequence); 0 where unknown.
type RecordedEvent struct {
	GameID     string
	Position   int64
	Version    int
	Type       EventType
	OccurredAt time.Time // UTC, whole milliseconds
	Payload    []byte    // JSON, as EncodePayload wrote it
	PrevHash   []byte    // 32 bytes; all zero for version 1
	Hash       []byte    // 32 bytes: EventHash(PrevHash, ...)
}

// GenesisHash is the PrevHash of a stream's first event: 32 zero bytes.
var GenesisHash = make([]byte, sha256.Size)

// EventHash is the chain link of one event (R6.4: an audit can check it):
//
//	SHA-256( prev ‖ gameID ‖ 0x0A ‖ version ‖ 0x0A ‖ type ‖ 0x0A ‖ occurredAt ‖ 0x0A ‖ payload )
//
// where version is decimal, occurredAt is RFC 3339 in UTC with exactly three
// fraction digits ("2026-11-29T20:32:08.123Z"), and payload is the stored
// JSON bytes. Binding the game id stops an event from being spliced into
// another game's log. The result is 32 bytes.
func EventHash(prev []byte, gameID string, version int, typ EventType, occurredAt time.Time, payload []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write([]byte(gameID))
	h.Write([]byte{'\n'})
	h.Write([]byte(strconv.Itoa(version)))
	h.Write([]byte{'\n'})
	h.Write([]byte(typ))
	h.Write([]byte{'\n'})
	h.Write([]byte(FormatTime(occurredAt)))
	h.Write([]byte{'\n'})
	h.Write(payload)
	return h.Sum(nil)
}

// timeLayout is FormatTime's form as a time layout.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime is the one text form of an event time: RFC 3339, UTC,
// milliseconds, truncated (R5.1), e.g. "2026-11-29T12:30:01.123Z". It is
// t.UTC().Format(timeLayout), written digit by digit for years 0..9999:
// a move formats several times (its event's hash and the answer's
// timestamps), and time.Format parses its layout on every call.
func FormatTime(t time.Time) string {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format(timeLayout)
	}
	h, mi, s := t.Clock()
	var b [24]byte
	digits := func(at, v, n int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	digits(0, y, 4)
	b[4] = '-'
	digits(5, int(mo), 2)
	b[7] = '-'
	digits(8, d, 2)
	b[10] = 'T'
	digits(11, h, 2)
	b[13] = ':'
	digits(14, mi, 2)
	b[16] = ':'
	digits(17, s, 2)
	b[19] = '.'
	digits(20, t.Nanosecond()/1e6, 3)
	b[23] = 'Z'
	return string(b[:])
}

// Record encodes events (versions following prev's stream) into
// RecordedEvents chained from prevHash (GenesisHash for a new stream).
func Record(gameID string, prevHash []byte, events []Event) ([]RecordedEvent, error) {
	out := make([]RecordedEvent, len(events))
	for i, e := range events {
		payload, err := EncodePayload(e)
		if err != nil {
			return nil, err
		}
		at := Millis(e.OccurredAt)
		hash := EventHash(prevHash, gameID, e.Version, e.Type, at, payload)
		out[i] = RecordedEvent{GameID: gameID, Version: e.Version, Type: e.Type, OccurredAt: at,
			Payload: payload, PrevHash: prevHash, Hash: hash}
		prevHash = hash
	}
	return out, nil
}

// VerifyChain checks a whole stream, versions 1..n in order: each record
// of game gameID (a record with an empty GameID is taken as of this game),
// each version one more than the last, each PrevHash equal to the previous Hash (genesis
// for the first), each Hash recomputed from the stored bytes. It returns 0
// if all is well, else the first version found broken (for a gap or a
// reordering, the position's expected version).
func VerifyChain(gameID string, events []RecordedEvent) int {
	return verifyChain(gameID, events, false)
}

// verifyChain is VerifyChain; with dealGiven the first record's Hash is
// taken as given instead of recomputed (its payload is a redacted deal,
// R6.4, R6.8), and every other link is checked as VerifyChain checks it.
func verifyChain(gameID string, events []RecordedEvent, dealGiven bool) int {
	prev := GenesisHash
	for i, r := range events {
		want := i + 1
		if r.Version != want || !bytes.Equal(r.PrevHash, prev) || (r.GameID != "" && r.GameID != gameID) {
			return want
		}
		if i > 0 || !dealGiven {
			h := EventHash(prev, gameID, r.Version, r.Type, r.OccurredAt, r.Payload)
			if subtle.ConstantTimeCompare(h, r.Hash) != 1 {
				return want
			}
		} else if len(r.Hash) != sha256.Size {
			return want
		}
		prev = r.Hash
	}
	return 0
}

// Commitment is the public promise of a deal made at creation (R6.4):
//
//	"sha256:" + hex( SHA-256( Position.String() of the deal ‖ 0x0A ‖ hex(salt) ) )
//
// Anyone can recompute it from the deal and salt revealed after the end,
// e.g. printf '%s\n%s' "$DEAL" "$SALT" | sha256sum.
func Commitment(deal Position, salt []byte) string {
	h := sha256.Sum256([]byte(deal.String() + "\n" + hex.EncodeToString(salt)))
	return "sha256:" + hex.EncodeToString(h[:])
}

// CheckCommitment reports whether commitment matches the deal and salt.
func CheckCommitment(commitment string, deal Position, salt []byte) bool {
	return subtle.ConstantTimeCompare([]byte(commitment), []byte(Commitment(deal, salt))) == 1
}

// Replay rebuilds the state from decoded events in order. It returns the
// state and the version of the first event that did not fit (0 if none).
func Replay(events []Event) (*State, int) {
	s := &State{}
	for _, e := range events {
		s.Apply(e)
		if s.Fault != "" {
			return s, e.Version
		}
	}
	return s, 0
}
