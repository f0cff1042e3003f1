package domain

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// pysolfcVector is one line of testdata/pysolfc-klondike.jsonl (see
// testdata/README.md for where each line comes from).
type pysolfcVector struct {
	Number    string       `json:"number"`
	Generator string       `json:"generator"`
	Source    string       `json:"source"`
	Tableau   []PileLayout `json:"tableau"`
	Stock     []Card       `json:"stock"`
}

func readPySolFCVectors(t *testing.T, file string) []pysolfcVector {
	t.Helper()
	f, err := os.Open("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pysolfcVector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v pysolfcVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v", len(out)+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("only %d vectors", len(out))
	}
	return out
}

// TestR6_7PySolFCVectors pins the numbered deals to every vector line: the
// same number gives the same tableau (face-down and face-up cards) and the
// same stock, in draw order, from the generator the line names. The shared
// vectors come first, then the edges of each generator's range as
// PySolFC's own generator library deals them.
func TestR6_7PySolFCVectors(t *testing.T) {
	vs := readPySolFCVectors(t, "pysolfc-klondike.jsonl")
	vs = append(vs, readPySolFCVectors(t, "pysolfc-klondike-edges.jsonl")...)
	for _, v := range vs {
		t.Run(v.Number, func(t *testing.T) {
			canon, n, err := ParseDeal("pysolfc:" + v.Number)
			if err != nil {
				t.Fatal(err)
			}
			if gen := map[bool]string{true: "lc31", false: "mt"}[n.LC31()]; gen != v.Generator {
				t.Errorf("generator %s, vector says %s", gen, v.Generator)
			}
			if canon != "pysolfc:"+v.Number {
				t.Errorf("canonical %q", canon)
			}
			p := n.KlondikeDeal()
			if !reflect.DeepEqual(p.Tableau, v.Tableau) {
				t.Errorf("tableau\n got %v\nwant %v", p.Tableau, v.Tableau)
			}
			if !reflect.DeepEqual(p.Stock, v.Stock) {
				t.Errorf("stock\n got %v\nwant %v", p.Stock, v.Stock)
			}
			for _, id := range []string{"klondike", "klondike-draw3", "klassik", "relaxed"} {
				rules, _, err := mustVariant(t, id).Resolve(Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Validate(rules); err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
		})
	}
}

func mustVariant(t *testing.T, id string) Variant {
	t.Helper()
	v, err := LookupVariant(id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestR6_7ParsePySolFC covers the number syntax of DEALS.md section 1:
// separators, the trailing L, the ms prefix, the generator per range and
// the edges of each range.
func TestR6_7ParsePySolFC(t *testing.T) {
	ok := []struct {
		in, canon string
		lc31      bool
	}{
		{"0", "0", true},
		{"1", "1", true},
		{"00012", "12", true},
		{"12,345", "12345", true},
		{"12 345", "12345", true},
		{"#12-3_4.5", "12345", true},
		{"12345L", "12345", true},
		{"12345L\n", "12345", true},
		{"+7", "7", true},
		{"-7", "7", true}, // "-" is a separator for PySolFC
		{"31999", "31999", true},
		{"32000", "32000", false},
		{"32001", "32001", false},
		{"4294967296", "4294967296", false},
		{"18446744073709551615", "18446744073709551615", false},
		{"18446744073709551616", "18446744073709551616", false},
		{"100000000000000000000", "100000000000000000000", false},
		{"100,000,000,000,000,000,000", "100000000000000000000", false},
		{"ms0", "ms0", true},
		{"ms5", "ms5", true},
		{"ms005", "ms5", true},
		{"ms5\n", "ms5", true},
		{"ms32000", "ms32000", true},
		{"ms2147483648", "ms2147483648", true},
		{"ms4294967296", "ms4294967296", true},
		{"ms8589934591", "ms8589934591", true},
		{"1\u00a02", "12", true},
		{"1\u30002", "12", true},
		{"１２", "12", true},                   // fullwidth digits: Python's int() reads them
		{"٣٢٠٠٠", "32000", false},            // Arabic-Indic
		{"\U0001d7d9\U0001d7ce", "10", true}, // mathematical double-struck 1 and bold 0
	}
	for _, c := range ok {
		n, err := ParsePySolFC(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if n.String() != c.canon || n.LC31() != c.lc31 {
			t.Errorf("%q: %s lc31=%v, want %s lc31=%v", c.in, n, n.LC31(), c.canon, c.lc31)
		}
		if formatTwoWords(n.Hi, n.Lo) != strings.TrimPrefix(c.canon, "ms") {
			t.Errorf("%q: value %s", c.in, formatTwoWords(n.Hi, n.Lo))
		}
	}
	bad := []string{"", " ", "L", "ms", "MS5", "ms-5", "ms 5", "ms5L", "ms8589934592", "ms99999999999999999999999",
		"100000000000000000001", "999999999999999999999", "1e5", "0x10", "12l", "five", "1L L",
		"12345LL", "\n", "+", "++1", "ms５", "½", "²", strings.Repeat("9", 300)}
	for _, in := range bad {
		if n, err := ParsePySolFC(in); err == nil {
			t.Errorf("%q: accepted as %s", in, n)
		} else if _, ok := err.(*DealError); !ok {
			t.Errorf("%q: %T", in, err)
		}
	}
	for _, in := range []string{"12345", "klondike:1", "pysolfc", "PYSOLFC:1", " pysolfc:1"} {
		if _, _, err := ParseDeal(in); err == nil {
			t.Errorf("ParseDeal(%q) accepted", in)
		}
	}
}

// TestR6_7DealIsAPermutation: for numbers all over both generators' ranges
// the deal holds every card of the pack exactly once, 28 in the tableau in
// piles of 1..7 with one face-up card each, 24 in the stock.
func TestR6_7DealIsAPermutation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 7))
	rules, _, err := mustVariant(t, "klondike").Resolve(Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(n PySolFCNumber) {
		p := n.KlondikeDeal()
		if err := p.Validate(rules); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for i, pile := range p.Tableau {
			if len(pile.Down) != i || len(pile.Up) != 1 {
				t.Fatalf("%s: pile %d is %d+%d cards", n, i, len(pile.Down), len(pile.Up))
			}
		}
		if len(p.Stock) != 24 {
			t.Fatalf("%s: stock of %d", n, len(p.Stock))
		}
	}
	edges := []string{"0", "1", "31999", "32000", "2147483647", "2147483648", "4294967295", "4294967296",
		"18446744073709551615", "18446744073709551616", "100000000000000000000",
		"ms0", "ms2147483647", "ms2147483648", "ms4294967295", "ms4294967296", "ms8589934591"}
	for _, s := range edges {
		n, err := ParsePySolFC(s)
		if err != nil {
			t.Fatal(err)
		}
		check(n)
	}
	for range 3000 {
		var s string
		switch rng.IntN(3) {
		case 0:
			s = strconv.Itoa(rng.IntN(pysolfcLCLimit))
		case 1:
			s = "ms" + strconv.FormatUint(rng.Uint64N(pysolfcMSLimit), 10)
		default:
			hi, lo := rng.Uint64N(pow20Hi+1), rng.Uint64()
			if hi == pow20Hi {
				lo %= pow20Lo + 1 // at most 10^20
			}
			s = formatTwoWords(hi, lo)
		}
		n, err := ParsePySolFC(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		check(n)
	}
}

// FuzzParsePySolFC: the parser never panics, accepts only what it can
// print back, and its canonical form parses to the same number.
func FuzzParsePySolFC(f *testing.F) {
	for _, s := range []string{"1", "12,345", "ms5", "32000", "100000000000000000000", "12345L", "ms8589934591", "", "ms", "L", "1 2 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParsePySolFC(s)
		if err != nil {
			if _, ok := err.(*DealError); !ok {
				t.Fatalf("%q: error %T", s, err)
			}
			return
		}
		back, err := ParsePySolFC(n.String())
		if err != nil || back.String() != n.String() || back.Hi != n.Hi || back.Lo != n.Lo || back.MS != n.MS {
			t.Fatalf("%q -> %s -> %v %v", s, n, back, err)
		}
		if n.Hi > pow20Hi || (n.Hi == pow20Hi && n.Lo > pow20Lo) || (n.MS && (n.Hi != 0 || n.Lo >= pysolfcMSLimit)) {
			t.Fatalf("%q: out of range %s", s, n)
		}
	})
}
