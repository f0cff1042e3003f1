package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// samePayload fails t unless EncodePayload writes d as json.Marshal
// does, and reports whether plainPayload wrote it.
func samePayload(t *testing.T, what string, d EventData) bool {
	t.Helper()
	want, werr := json.Marshal(d)
	got, ok := plainPayload(&d)
	switch {
	case ok && werr != nil:
		t.Fatalf("%s: plainPayload wrote %s where json.Marshal fails: %v", what, got, werr)
	case ok && !bytes.Equal(got, want):
		t.Fatalf("%s: plainPayload differs from json.Marshal\n got %s\nwant %s", what, got, want)
	}
	if enc, err := EncodePayload(Event{Data: d}); (err != nil) != (werr != nil) || !bytes.Equal(enc, want) {
		t.Fatalf("%s: EncodePayload %s, %v; want %s, %v", what, enc, err, want, werr)
	}
	return ok
}

// TestPlainPayloadIsJSONMarshal holds the event payloads' own writer
// (plainPayload) to json.Marshal, byte for byte, since the payload's
// bytes are what the log stores and the hash chain covers: every event of
// random games of every variant, with and without undo (R2.5), and a
// plain move's payload with each field of EventData set alone, so that a
// field added to EventData makes plainPayload fall back or fails here.
func TestPlainPayloadIsJSONMarshal(t *testing.T) {
	events, plain := 0, 0
	for _, v := range Variants() {
		for _, o := range []Options{{}, {Undo: ptr(true)}} {
			for seed := uint64(1); seed <= 5; seed++ {
				_, log := playRandom(t, v.ID, seed, 300, o)
				for _, e := range log {
					events++
					if samePayload(t, v.ID+" "+string(e.Type), e.Data) {
						plain++
					}
				}
			}
		}
	}
	if plain*2 < events {
		t.Fatalf("plainPayload wrote %d of %d payloads, want most", plain, events)
	}

	from, _ := ParsePileRef("tableau/3")
	to, _ := ParsePileRef("foundation/1")
	base := EventData{V: PayloadVersion, Move: 12, From: from, To: to, Count: 1, Cards: []Card{Card(5)}}
	if !samePayload(t, "a card move", base) {
		t.Fatal("a plain card move went to json.Marshal")
	}
	typ := reflect.TypeFor[EventData]()
	for i := range typ.NumField() {
		d := base
		d.Cards = []Card{Card(5)}
		setNonZero(reflect.ValueOf(&d).Elem().Field(i))
		samePayload(t, "with "+typ.Field(i).Name, d)
	}
}

// setNonZero sets v to a non-zero value of its type: true, 3, "x<y", a
// pointer to a zero value, a slice of one element set alike, a struct with
// its fields set alike.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.String:
		v.SetString("x<y")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setNonZero(s.Index(0))
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setNonZero(v.Field(i))
			}
		}
	default:
		panic("setNonZero: " + v.Kind().String())
	}
}
