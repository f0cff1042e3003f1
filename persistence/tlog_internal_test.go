package persistence

import (
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// Appending k leaves to a tree of n, and hashing the new root, read no
// stored hash from before the append but the frontier's: the sequencer
// fetches those in one query and nothing else.
func TestFrontierSuffices(t *testing.T) {
	all := map[int64]tlog.Hash{}
	full := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			h, ok := all[x]
			if !ok {
				return nil, fmt.Errorf("hash %d not stored", x)
			}
			out[i] = h
		}
		return out, nil
	})
	record := func(i int64) []byte { return fmt.Appendf(nil, "leaf %d\n", i) }
	roots, err := treeRoots(340, record)
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(0); n < 300; n++ {
		for k := int64(1); k <= 40; k++ {
			known := map[int64]tlog.Hash{}
			for _, x := range frontier(n) {
				known[x] = all[x]
			}
			r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
				out := make([]tlog.Hash, len(idx))
				for i, x := range idx {
					h, ok := known[x]
					if !ok {
						return nil, fmt.Errorf("n=%d k=%d: hash %d is not in the frontier", n, k, x)
					}
					out[i] = h
				}
				return out, nil
			})
			for m := n; m < n+k; m++ {
				hs, err := tlog.StoredHashes(m, record(m), r)
				if err != nil {
					t.Fatal(err)
				}
				for i, h := range hs {
					known[tlog.StoredHashCount(m)+int64(i)] = h
				}
			}
			got, err := tlog.TreeHash(n+k, r)
			if err != nil {
				t.Fatal(err)
			}
			// The tree of n+k built with every hash at hand agrees.
			if got != roots[n+k] {
				t.Fatalf("n=%d k=%d: root %v, want %v", n, k, got, roots[n+k])
			}
		}
		hs, err := tlog.StoredHashes(n, record(n), full)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			all[tlog.StoredHashCount(n)+int64(i)] = h
		}
	}
}

// treeRoots are the roots of the trees of the first 0..n records, built
// leaf by leaf with every hash at hand.
func treeRoots(n int64, record func(int64) []byte) ([]tlog.Hash, error) {
	all := map[int64]tlog.Hash{}
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = all[x]
		}
		return out, nil
	})
	roots := make([]tlog.Hash, n+1)
	for m := int64(0); m <= n; m++ {
		root, err := tlog.TreeHash(m, r)
		if err != nil {
			return nil, err
		}
		roots[m] = root
		hs, err := tlog.StoredHashes(m, record(m), r)
		if err != nil {
			return nil, err
		}
		for i, h := range hs {
			all[tlog.StoredHashCount(m)+int64(i)] = h
		}
	}
	return roots, nil
}
