package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

const benchUsage = `usage: solitaire solve-bench [-variant ID] [-draw 1|3] [-n DEALS] [-seed0 N] [-budget DURATION]
       [-nodes N] [-out FILE.ndjson] [-redo FILE.ndjson] [-ks FILE] [-summarize FILE.ndjson[,FILE.ndjson...]]
`

// benchDeal is one line of solve-bench's -out file.
type benchDeal struct {
	Seed    uint64         `json:"seed"`
	Verdict solver.Verdict `json:"verdict"`
	Nodes   int64          `json:"nodes"`
	CPUMS   float64        `json:"cpu_ms"`
	WallMS  float64        `json:"wall_ms"`
	Moves   int            `json:"moves,omitempty"`
}

// solveBench is `solitaire solve-bench`: the solver over the seeded deals
// seed0..seed0+n-1 (R6.1) of a variant, one deal at a time on one locked OS
// thread, printing the share decided, the winnable share with its 95 %
// interval, and percentiles of the CPU time per deal (the thread's own,
// from getrusage RUSAGE_THREAD, so other processes on a loaded machine do
// not count) and of the wall time. With -redo it solves again only the
// deals an earlier run left unknown, with a larger budget: the search is
// deterministic, so merging the two files (-summarize a,b) gives the
// figures of one run with the larger budget. The time budget is on that same CPU
// clock, so load on the machine slows a run down but does not turn deals
// into unknowns; the node budget's default is high enough never to bind
// first. With -ks it writes the deals instead, in
// the deck format of ShootMe's Klondike-Solver (one deal per line), for a
// side-by-side run.
func solveBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("solve-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gf := addGameFlags(fs)
	n := fs.Int("n", 1000, "number of deals")
	seed0 := fs.Uint64("seed0", 1, "first seed")
	budget := fs.Duration("budget", 10*time.Second, "time budget per deal, in CPU time of the solving thread")
	nodes := fs.Int64("nodes", 1<<40, "node budget per deal")
	outFile := fs.String("out", "", "write one JSON line per deal here")
	ksFile := fs.String("ks", "", "write the deals in Klondike-Solver's deck format to this file and stop")
	summarize := fs.String("summarize", "", "print the figures of -out files (comma-separated; a later file's deal replaces an earlier one's of the same seed; a run cut short included) and stop")
	redo := fs.String("redo", "", "solve again only the unknown deals of this -out file (with -budget), writing them to -out")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 0 || *n < 1 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	r, err := gf.rules("", domain.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 2
	}
	if *summarize != "" {
		deals, err := mergeBenchDeals(strings.Split(*summarize, ","))
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 2
		}
		// An -out file records the deals only: the rules and budget
		// printed are the flags', and the load of the run is not known.
		fmt.Fprintln(stdout, "rules and budget as given by the flags (an -out file records the deals only)")
		fmt.Fprint(stdout, benchSummary(r, deals, *budget, "", ""))
		return 0
	}
	if *ksFile != "" {
		if err := writeKSDeals(*ksFile, r, *seed0, *n); err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 2
		}
		return 0
	}
	var out *bufio.Writer
	if *outFile != "" {
		f, err := os.Create(*outFile)
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 2
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
	}
	seeds := make([]uint64, *n)
	for k := range seeds {
		seeds[k] = *seed0 + uint64(k)
	}
	if *redo != "" {
		before, err := readBenchDeals(*redo)
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 2
		}
		seeds = seeds[:0]
		for _, d := range before {
			if d.Verdict == solver.Unknown {
				seeds = append(seeds, d.Seed)
			}
		}
		if len(seeds) == 0 {
			fmt.Fprintln(stdout, "no unknown deal to solve again")
			return 0
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	load0 := loadAvg()
	var deals []benchDeal
	for _, seed := range seeds {
		s, err := dealt(r, domain.Deal(r, seed))
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: seed %d: %v\n", seed, err)
			return 1
		}
		c0 := threadCPU()
		res := solver.Solve(context.Background(), s, solver.Budget{Nodes: *nodes, Time: *budget, Clock: threadCPU})
		d := benchDeal{Seed: seed, Verdict: res.Verdict, Nodes: res.Nodes, CPUMS: ms(threadCPU() - c0),
			WallMS: ms(res.Elapsed), Moves: len(res.Line)}
		deals = append(deals, d)
		if out != nil {
			b, _ := json.Marshal(d)
			out.Write(append(b, '\n'))
			out.Flush() // a run cut short keeps every deal done
		}
	}
	fmt.Fprint(stdout, benchSummary(r, deals, *budget, load0, loadAvg()))
	return 0
}

// mergeBenchDeals reads -out files in order; a deal of a later file
// replaces the deal of the same seed from an earlier one (a -redo run over
// the unknowns of the first), in the first file's order.
func mergeBenchDeals(names []string) ([]benchDeal, error) {
	var deals []benchDeal
	at := map[uint64]int{}
	for _, name := range names {
		ds, err := readBenchDeals(name)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if i, ok := at[d.Seed]; ok {
				deals[i] = d
				continue
			}
			at[d.Seed] = len(deals)
			deals = append(deals, d)
		}
	}
	if len(deals) == 0 {
		return nil, fmt.Errorf("%s: no deals", strings.Join(names, ","))
	}
	return deals, nil
}

// readBenchDeals reads an -out file.
func readBenchDeals(name string) ([]benchDeal, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var deals []benchDeal
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d benchDeal
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+1, err)
		}
		deals = append(deals, d)
	}
	return deals, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// threadCPU is the CPU time (user + system) of the calling OS thread.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the 1, 5 and 15 minute load average (/proc/loadavg), or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// benchSummary formats the figures of a run; the load line is left out
// when load0 is empty (a summary of files, whose run's load is unknown).
func benchSummary(r domain.Rules, deals []benchDeal, budget time.Duration, load0, load1 string) string {
	var b strings.Builder
	n := len(deals)
	var win, lose int
	var cpu, wall []float64
	var cpuDecided float64
	for _, d := range deals {
		switch d.Verdict {
		case solver.Winnable:
			win++
		case solver.Unwinnable:
			lose++
		}
		if d.Verdict != solver.Unknown {
			cpuDecided += d.CPUMS
		}
		cpu = append(cpu, d.CPUMS)
		wall = append(wall, d.WallMS)
	}
	slices.Sort(cpu)
	slices.Sort(wall)
	decided := win + lose
	passes := "unlimited"
	if r.Passes > 0 {
		passes = fmt.Sprint(r.Passes)
	}
	fmt.Fprintf(&b, "variant %s draw %d passes %s take-back %v: %d deals from seed %d, budget %v per deal\n",
		r.Variant, r.Draw, passes, r.TakeBack, n, deals[0].Seed, budget)
	fmt.Fprintf(&b, "decided   %d (%.2f %%), unknown %d\n", decided, 100*float64(decided)/float64(n), n-decided)
	lo, hi := wilson(win, n)
	fmt.Fprintf(&b, "winnable  %d (%.2f %%, 95 %% interval %.2f-%.2f %%; of decided %.2f %%), unwinnable %d\n",
		win, 100*float64(win)/float64(n), 100*lo, 100*hi, 100*float64(win)/float64(max(decided, 1)), lose)
	fmt.Fprintf(&b, "cpu ms    median %.2f  p90 %.2f  p99 %.2f  max %.2f  mean per decided deal %.2f\n",
		pct(cpu, 0.5), pct(cpu, 0.9), pct(cpu, 0.99), cpu[n-1], cpuDecided/float64(max(decided, 1)))
	fmt.Fprintf(&b, "wall ms   median %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
		pct(wall, 0.5), pct(wall, 0.9), pct(wall, 0.99), wall[n-1])
	if load0 != "" {
		fmt.Fprintf(&b, "load      %s at start, %s at end (1/5/15 min)\n", load0, load1)
	}
	return b.String()
}

// pct is the q-quantile of sorted xs (nearest rank).
func pct(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// wilson is the 95 % Wilson score interval of k successes in n trials.
func wilson(k, n int) (float64, float64) {
	const z = 1.959964
	p, nn := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nn)) / (1 + z*z/nn)
	h := z * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn)) / (1 + z*z/nn)
	return c - h, c + h
}

// writeKSDeals writes the one-deck deals seed0..seed0+n-1 of rules r in
// Klondike-Solver's deck format: 52 cards of three digits each (rank 01..13,
// suit 1 clubs, 2 diamonds, 3 hearts, 4 spades) in the order it deals them.
// It deals row by row (pile i's face-up card, then a face-down card to
// every later pile) and then the stock, drawn first first: the order of our
// shuffled pack (R6.1 step 5), so the pack is written as it is.
func writeKSDeals(name string, r domain.Rules, seed0 uint64, n int) error {
	if r.Decks != 1 || r.Piles != 7 {
		return fmt.Errorf("Klondike-Solver plays one deck on 7 piles; %s has %d decks, %d piles", r.Variant, r.Decks, r.Piles)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for k := 0; k < n; k++ {
		for _, c := range domain.ShuffledPack(seed0+uint64(k), 1) {
			fmt.Fprintf(w, "%02d%d", c.Rank(), int(c.Suit())+1)
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
