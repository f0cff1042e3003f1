package app

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

func testLeafGame() *Game {
	end := time.Date(2026, 11, 29, 12, 0, 0, 5_000_000, time.UTC)
	score := 120
	v, _ := domain.LookupVariant("klassik")
	return &Game{ID: "g1", Variant: "klassik", Rules: v.Defaults, DealSecret: DealSecret{Commitment: "sha256:ab"}, Owner: "p1",
		Projection: Projection{Status: domain.StatusWon, Version: 42, Moves: 40, Score: &score, FinishedAt: &end}}
}

// The leaf record is one line of JSON with its keys sorted at every depth
// (the rules too), and reads back only in exactly that form.
func TestLeafCanonical(t *testing.T) {
	head := bytes.Repeat([]byte{0xab}, 32)
	l, err := LeafOf(testLeafGame(), head)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeLeaf(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"commitment":"sha256:ab","ended_at":"2026-11-29T12:00:00.005Z","events":42,"game_id":"g1",` +
		`"head":"` + strings.Repeat("ab", 32) + `","moves":40,"owner":"p1","rules":{"autocomplete":`
	if !bytes.HasPrefix(b, []byte(want)) || !bytes.HasSuffix(b, []byte(`"score":120,"status":"won","v":1,"variant":"klassik"}`+"\n")) ||
		bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("leaf:\n%s", b)
	}
	got, err := ParseLeaf(b)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("ParseLeaf = %+v, %v", got, err)
	}
	for _, bad := range [][]byte{
		bytes.Replace(b, []byte(`{"commitment"`), []byte(`{ "commitment"`), 1),                    // white space
		bytes.TrimSuffix(b, []byte("\n")),                                                         // no newline
		bytes.Replace(b, []byte(`"v":1`), []byte(`"v":2`), 1),                                     // another format
		bytes.Replace(b, []byte(`"moves":40`), []byte(`"moves":40,"seed":"1"`), 1),                // an unknown key
		bytes.Replace(b, []byte(`"moves":40,"owner":"p1"`), []byte(`"owner":"p1","moves":40`), 1), // key order
	} {
		if _, err := ParseLeaf(bad); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	running := testLeafGame()
	running.Status, running.FinishedAt = domain.StatusInProgress, nil
	if _, err := LeafOf(running, head); !errors.Is(err, ErrNotEnded) {
		t.Errorf("leaf of a game in progress: %v", err)
	}
	if _, err := LeafOf(testLeafGame(), head[:31]); err == nil {
		t.Error("a head of 31 bytes was accepted")
	}
}

// The checkpoint body is the C2SP tlog-checkpoint: origin, size, base64
// root, each line ending in a newline; extension lines are ignored.
func TestCheckpointText(t *testing.T) {
	c := Checkpoint{Origin: "example.com/log", Size: 7, Root: [32]byte{1, 2, 3}}
	text := c.Text()
	if want := "example.com/log\n7\nAQIDAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"; string(text) != want {
		t.Fatalf("Text = %q, want %q", text, want)
	}
	if got, err := ParseCheckpoint(append(text, "extension\n"...)); err != nil || got != c {
		t.Fatalf("ParseCheckpoint = %+v, %v", got, err)
	}
	for _, bad := range []string{
		"", "example.com/log\n7\n", "\n7\nAQID\n", "o\n07\nAQIDAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"o\n-1\nAQIDAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", "o\n7\nAQID\n", "o\n7\nAQIDAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	} {
		if _, err := ParseCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
