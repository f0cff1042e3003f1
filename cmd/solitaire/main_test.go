package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// playLog plays a game of variant by random legal moves, preferring
// foundation moves, autocomplete, take-backs and (where allowed) undos so
// that the log holds every kind of event, and returns its NDJSON export.
func playLog(t *testing.T, variant string, seed uint64, o domain.Options) ([]byte, *domain.State) {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	salt := bytes.Repeat([]byte{byte(seed)}, 32)
	deal := domain.Deal(r, seed)
	s := &domain.State{}
	log := []domain.Event{domain.DealtEvent(r, deal, domain.Commitment(deal, salt), t0)}
	s.Apply(log[0])
	rng := rand.New(rand.NewPCG(seed, 1))
	now := t0
	for i := 0; i < 400 && s.Status == domain.StatusInProgress; i++ {
		now = now.Add(200 * time.Millisecond)
		legal := domain.LegalMoves(s)
		m := legal[rng.IntN(len(legal))]
		for _, x := range legal {
			if x.Type == domain.MoveAutocomplete || (x.To.Kind == domain.Foundation && rng.IntN(2) == 0) {
				m = x
				break
			}
		}
		if m.Type == domain.MoveResign && i < 399 {
			m = legal[0]
		}
		evs, _, err := domain.Decide(s, m, now)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for _, e := range evs {
			s.Apply(e)
		}
		log = append(log, evs...)
	}
	if s.Status == domain.StatusInProgress {
		evs, _, _ := domain.Decide(s, domain.Move{Type: domain.MoveResign}, now)
		s.Apply(evs[0])
		log = append(log, evs...)
	}
	recs, err := domain.Record("game-"+variant, domain.GenesisHash, log)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(domain.Export(r))
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), s
}

func runTool(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditEveryVariant(t *testing.T) {
	dir := t.TempDir()
	for _, v := range domain.Variants() {
		for seed := uint64(1); seed <= 3; seed++ {
			data, s := playLog(t, v.ID, seed, domain.Options{Undo: ptr(true)})
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.ndjson", v.ID, seed))
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			salt := strings.Repeat(fmt.Sprintf("%02x", seed), 32)
			code, out, errs := runTool("audit", file, "-salt", salt)
			if code != 0 || !strings.Contains(out, "commitment: ok") {
				t.Fatalf("%s seed %d: exit %d\n%s%s", v.ID, seed, code, out, errs)
			}
			if !strings.Contains(out, "final:      "+string(s.Status)) {
				t.Fatalf("%s: final status missing:\n%s", v.ID, out)
			}
			code, out, _ = runTool("audit", file, "-salt", strings.Repeat("ab", 32))
			if code != 1 || !strings.Contains(out, "MISMATCH") {
				t.Fatalf("%s: wrong salt passed: %d %s", v.ID, code, out)
			}
		}
	}
}

// Any single changed byte of an exported log is reported as a break at
// the version of the line it is in (every one of them detected).
func TestAuditDetectsEverySingleByteTamper(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(42, 42))
	tried := 0
	for _, v := range domain.Variants() {
		data, _ := playLog(t, v.ID, 7, domain.Options{Undo: ptr(true)})
		lines := bytes.SplitAfter(data, []byte{'\n'})
		lines = lines[:len(lines)-1] // the empty tail after the last newline
		for k := 0; k < 60; k++ {
			li := rng.IntN(len(lines))
			line := lines[li]
			pos := rng.IntN(len(line) - 1) // never the newline
			tampered := make([][]byte, len(lines))
			copy(tampered, lines)
			changed := append([]byte(nil), line...)
			old := changed[pos]
			for changed[pos] == old || changed[pos] == '\n' {
				changed[pos] = byte(rng.IntN(256))
			}
			tampered[li] = changed
			file := filepath.Join(dir, "t.ndjson")
			if err := os.WriteFile(file, bytes.Join(tampered, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runTool("audit", file, "-json")
			var rep struct {
				FirstBroken int `json:"first_broken"`
			}
			_ = json.Unmarshal([]byte(out), &rep)
			if code != 1 || rep.FirstBroken != li+1 {
				t.Fatalf("%s: byte %d of line %d changed %q -> %q: exit %d, first broken %d\n%s%s",
					v.ID, pos, li+1, old, changed[pos], code, rep.FirstBroken, out, errs)
			}
			tried++
		}
	}
	t.Logf("%d single-byte tampers, all detected at their version", tried)
}

func TestReplayPrintsBoardAtVersion(t *testing.T) {
	data, _ := playLog(t, "klondike", 1, domain.Options{})
	file := filepath.Join(t.TempDir(), "k.ndjson")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runTool("replay", file, "-at", "1")
	if code != 0 || !strings.Contains(out, "version 1  moves 0") || !strings.Contains(out, "stock 24") ||
		!strings.Contains(out, "tableau/6  ## ## ## ## ## ##") {
		t.Fatalf("replay -at 1: exit %d\n%s%s", code, out, errs)
	}
	if code, _, _ := runTool("replay", file, "-at", "99999"); code != 2 {
		t.Fatalf("replay past the end: exit %d, want 2", code)
	}
	if code, _, _ := runTool("bogus"); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	if code, _, _ := runTool("audit", filepath.Join(t.TempDir(), "missing")); code != 2 {
		t.Fatalf("missing file: exit %d, want 2", code)
	}
}

func ptr[T any](v T) *T { return &v }
