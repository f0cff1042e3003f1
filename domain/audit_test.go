package domain

import (
	"bytes"
	"strings"
	"testing"
)

// record chains a log as the store would.
func record(t testing.TB, id string, log []Event) []RecordedEvent {
	t.Helper()
	recs, err := Record(id, GenesisHash, log)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestAuditRandomGamesAreClean(t *testing.T) {
	for _, v := range Variants() {
		for seed := uint64(1); seed <= 3; seed++ {
			_, log := playRandom(t, v.ID, seed, 300, Options{Undo: ptr(true)})
			a := Audit("g1", record(t, "g1", log), nil)
			if !a.ChainOK || !a.ReplayOK || a.FirstBroken() != 0 {
				t.Fatalf("%s seed %d: %+v", v.ID, seed, a)
			}
		}
	}
}

// R6.4: the commitment made at creation checks against the revealed deal
// and salt, and fails for another salt or deal.
func TestR6_4AuditCommitment(t *testing.T) {
	r, _, _ := variants[0].Resolve(Options{})
	deal := Deal(r, 99)
	salt := bytes.Repeat([]byte{7}, 32)
	first := DealtEvent(r, deal, Commitment(deal, salt), t0)
	recs := record(t, "g", []Event{first})
	if a := Audit("g", recs, salt); a.CommitmentOK == nil || !*a.CommitmentOK {
		t.Fatalf("commitment should verify: %+v", a)
	}
	if a := Audit("g", recs, bytes.Repeat([]byte{8}, 32)); a.CommitmentOK == nil || *a.CommitmentOK {
		t.Fatal("commitment verified with the wrong salt")
	}
}

// A log whose chain was recomputed after breaking a rule (a forged move)
// still fails the audit at that version: the rules are re-decided.
func TestAuditDetectsForgedMoveWithValidChain(t *testing.T) {
	_, log := playRandom(t, "klondike", 3, 60, Options{})
	// Drop a follow-up (an auto flip) or, failing that, change a draw's count.
	forged := append([]Event(nil), log...)
	at := 0
	for i, e := range forged {
		if e.Type == EventCardFlipped && e.Data.Auto {
			forged = append(forged[:i:i], forged[i+1:]...)
			for k := i; k < len(forged); k++ {
				forged[k].Version--
			}
			at = e.Version
			break
		}
	}
	if at == 0 {
		t.Fatal("test game had no auto flip; pick another seed")
	}
	a := Audit("g", record(t, "g", forged), nil)
	if !a.ChainOK {
		t.Fatal("recomputed chain should verify")
	}
	if a.ReplayOK || a.ReplayBrokenAt == 0 || a.ReplayBrokenAt > at {
		t.Fatalf("forged log passed or broke late: %+v (dropped auto flip at %d)", a, at)
	}
}

// Changing any stored byte breaks the chain at that version.
func TestAuditTamperedByte(t *testing.T) {
	_, log := playRandom(t, "relaxed", 5, 80, Options{})
	for v := 1; v <= len(log); v += 7 {
		recs := record(t, "g", log)
		p := recs[v-1].Payload
		tampered := append([]byte(nil), p...)
		tampered[len(tampered)/2] ^= 0x01
		recs[v-1].Payload = tampered
		a := Audit("g", recs, nil)
		if a.ChainOK || a.ChainBrokenAt != v || a.FirstBroken() != v {
			t.Fatalf("tamper at %d: chain broken at %d, first broken %d", v, a.ChainBrokenAt, a.FirstBroken())
		}
	}
}

// Import takes back only what Export writes: the same hash in upper-case
// hex, or the same instant in another RFC 3339 form, decodes to the same
// value, so a file changed that way would pass the audit unless Import
// refuses it (an export is audited byte for byte).
func TestImportRefusesOtherSpellings(t *testing.T) {
	_, log := playRandom(t, "relaxed", 5, 20, Options{})
	recs := record(t, "g", log)
	for _, r := range recs {
		x := Export(r)
		if back, err := Import(x); err != nil || !bytes.Equal(back.Hash, r.Hash) || back.Version != r.Version {
			t.Fatalf("event %d: the export does not import back: %v", r.Version, err)
		}
	}
	x := Export(recs[3])
	cases := map[string]ExportedEvent{}
	if y := x; strings.ContainsAny(y.Hash, "abcdef") {
		y.Hash = strings.ToUpper(y.Hash)
		cases["hash in upper case"] = y
	}
	if y := x; strings.ContainsAny(y.PrevHash, "abcdef") {
		y.PrevHash = strings.ToUpper(y.PrevHash)
		cases["prev_hash in upper case"] = y
	}
	y := x
	y.OccurredAt = strings.TrimSuffix(y.OccurredAt, "Z") + "+00:00"
	cases["occurred_at with +00:00"] = y
	y = x
	y.OccurredAt = strings.Replace(y.OccurredAt, ".", ".0", 1) // one more digit of the same instant
	cases["occurred_at with a fourth fraction digit"] = y
	if len(cases) < 3 {
		t.Fatalf("only %d cases: the hashes have no hex letter", len(cases))
	}
	for name, c := range cases {
		if _, err := Import(c); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
}
