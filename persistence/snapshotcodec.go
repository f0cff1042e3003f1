package persistence

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openpatience/solitaire/domain"
)

// A snapshot (snapshots.state, snapshotFormat) is the JSON of
// domain.State with its undo record packed: "turns" and "ops" are each a
// JSON string, the standard base64 (RFC 4648 §4) of the record in binary.
// The undo record is one turn and about one pile operation per undoable
// move, so in a long game it is nearly all of a snapshot: as JSON
// objects a draw's turn and operation take ~131 bytes, and encoding/json's
// reflection over them is most of the snapshot's cost. Packed they take
// ~19 bytes, encoded by a loop with no reflection (sizes and times in
// BENCHMARKS.md "Snapshots of a long game").
//
// Turns: for each turn, the differences from the turn before (the first
// from the zero Turn) of Version, Move, OpStart, Recycles and
// Score.Points as signed varints (encoding/binary, zig-zag), then
// Score.Placed and Score.Flipped XOR the turn before's as unsigned
// varints, then Fan as a signed varint. Versions and counters grow by
// small steps and a turn changes few bits of the scoring sets, so most
// values take one byte.
//
// Ops: for each operation, Kind, FromK, FromI, ToK, ToI and Count as
// signed varints.
//
// Decoding rejects a string that is not base64, a varint that overflows,
// a value outside its field's range and a turn or operation cut off:
// Load then replays the log instead (fromSnapshot).

// snapshotDoc is the JSON document of a snapshot as it is read: the
// state's own fields (embedded), with its Turns and Ops shadowed by their
// packed forms (encoding/json takes the shallower of two fields with one
// name). This holds while domain.State has no JSON methods of its own,
// which embedding would promote past the shadowing fields.
type snapshotDoc struct {
	*domain.State
	Turns packedTurns `json:"turns,omitempty"`
	Ops   packedOps   `json:"ops,omitempty"`
}

// encodeSnapshot returns the snapshot document of st. st is not changed.
// The state without its undo record goes through encoding/json; the
// packed record is appended to that object as it is, because
// encoding/json scans every byte a MarshalJSON method returns.
func encodeSnapshot(st *domain.State) ([]byte, error) {
	rest := *st
	rest.Turns, rest.Ops = nil, nil
	b, err := json.Marshal(&rest)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the object's '}'; it has members ("rules" at least)
	if len(st.Turns) > 0 {
		b = append(b, `,"turns":`...)
		b = appendQuotedBase64(b, packTurns(st.Turns))
	}
	if len(st.Ops) > 0 {
		b = append(b, `,"ops":`...)
		b = appendQuotedBase64(b, packOps(st.Ops))
	}
	return append(b, '}'), nil
}

// decodeSnapshot returns the state of snapshot document data. Errors: the
// JSON's, and "snapshot: ..." for a packed record that does not decode.
func decodeSnapshot(data []byte) (*domain.State, error) {
	doc := snapshotDoc{State: &domain.State{}}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	doc.State.Turns, doc.State.Ops = doc.Turns, doc.Ops
	return doc.State, nil
}

// packedTurns is domain.State.Turns in a snapshot.
type packedTurns []domain.Turn

// packTurns returns turns in binary.
func packTurns(turns []domain.Turn) []byte {
	b := make([]byte, 0, 10*len(turns))
	var prev domain.Turn
	for _, t := range turns {
		b = binary.AppendVarint(b, int64(t.Version-prev.Version))
		b = binary.AppendVarint(b, int64(t.Move-prev.Move))
		b = binary.AppendVarint(b, int64(t.OpStart-prev.OpStart))
		b = binary.AppendVarint(b, int64(t.Recycles-prev.Recycles))
		b = binary.AppendVarint(b, int64(t.Score.Points-prev.Score.Points))
		b = binary.AppendUvarint(b, t.Score.Placed^prev.Score.Placed)
		b = binary.AppendUvarint(b, t.Score.Flipped^prev.Score.Flipped)
		b = binary.AppendVarint(b, int64(t.Fan))
		prev = t
	}
	return b
}

// UnmarshalJSON reads the JSON string of packed turns (packTurns).
func (p *packedTurns) UnmarshalJSON(data []byte) error {
	b, err := unquoteBase64(data)
	if err != nil {
		return err
	}
	r := varintReader{b: b}
	out := make([]domain.Turn, 0, len(b)/8) // a turn takes 8 bytes or more
	var prev domain.Turn
	for len(r.b) > 0 {
		t := domain.Turn{
			Version:  prev.Version + r.int(),
			Move:     prev.Move + r.int(),
			OpStart:  prev.OpStart + r.int(),
			Recycles: prev.Recycles + r.int(),
		}
		t.Score.Points = prev.Score.Points + r.int()
		t.Score.Placed = prev.Score.Placed ^ r.uint()
		t.Score.Flipped = prev.Score.Flipped ^ r.uint()
		t.Fan = r.int()
		if r.err != nil {
			return r.err
		}
		out = append(out, t)
		prev = t
	}
	*p = out
	return nil
}

// packedOps is domain.State.Ops in a snapshot.
type packedOps []domain.Op

// packOps returns operations in binary.
func packOps(ops []domain.Op) []byte {
	b := make([]byte, 0, 6*len(ops))
	for _, o := range ops {
		b = binary.AppendVarint(b, int64(o.Kind))
		b = binary.AppendVarint(b, int64(o.FromK))
		b = binary.AppendVarint(b, int64(o.FromI))
		b = binary.AppendVarint(b, int64(o.ToK))
		b = binary.AppendVarint(b, int64(o.ToI))
		b = binary.AppendVarint(b, int64(o.Count))
	}
	return b
}

// UnmarshalJSON reads the JSON string of packed operations (packOps).
func (p *packedOps) UnmarshalJSON(data []byte) error {
	b, err := unquoteBase64(data)
	if err != nil {
		return err
	}
	r := varintReader{b: b}
	out := make([]domain.Op, 0, len(b)/6) // an operation takes 6 bytes or more
	for len(r.b) > 0 {
		o := domain.Op{
			Kind:  domain.OpKind(r.small(0, 0xFF)),
			FromK: domain.PileKind(r.small(0, 0xFF)),
			FromI: int8(r.small(-0x80, 0x7F)),
			ToK:   domain.PileKind(r.small(0, 0xFF)),
			ToI:   int8(r.small(-0x80, 0x7F)),
			Count: int16(r.small(-0x8000, 0x7FFF)),
		}
		if r.err != nil {
			return r.err
		}
		out = append(out, o)
	}
	*p = out
	return nil
}

// appendQuotedBase64 appends raw as a JSON string of its standard base64,
// which needs no escaping.
func appendQuotedBase64(b, raw []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// unquoteBase64 decodes a JSON string of standard base64.
func unquoteBase64(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return nil, errors.New("snapshot: packed record: want a JSON string")
	}
	b, err := base64.StdEncoding.AppendDecode(nil, data[1:len(data)-1])
	if err != nil {
		return nil, fmt.Errorf("snapshot: packed record: %w", err)
	}
	return b, nil
}

// varintReader reads the varints of a packed record; the first fault
// sticks in err and every later read returns 0.
type varintReader struct {
	b   []byte
	err error
}

// int reads a signed varint that fits an int.
func (r *varintReader) int() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 || int64(int(v)) != v {
		r.err = errors.New("snapshot: packed record: bad signed varint")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// uint reads an unsigned varint.
func (r *varintReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("snapshot: packed record: bad unsigned varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// small reads a signed varint in [lo, hi].
func (r *varintReader) small(lo, hi int) int {
	v := r.int()
	if r.err == nil && (v < lo || v > hi) {
		r.err = fmt.Errorf("snapshot: packed record: %d out of [%d, %d]", v, lo, hi)
		return 0
	}
	return v
}
