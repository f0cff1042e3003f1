package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// leanTarget is where one lean client sends its moves: a move route and
// the bearer token that may use it.
type leanTarget struct {
	Path, Token string
}

// leanResult is what a lean run measured.
type leanResult struct {
	Clients  int
	Measured time.Duration // the counted part (after the warm-up)
	OK       int64         // 200 answers counted
	Total    int64         // 200 answers, warm-up included
	Errors   int64         // other answers and transport errors, warm-up included
	Hist     *hdrhistogram.Histogram
}

// PerSecond is counted 200 answers per second.
func (r *leanResult) PerSecond() float64 {
	if r.Measured <= 0 {
		return 0
	}
	return float64(r.OK) / r.Measured.Seconds()
}

// Quantile is the q-th percentile (0..100) of the counted latencies.
func (r *leanResult) Quantile(q float64) time.Duration {
	return time.Duration(r.Hist.ValueAtQuantile(q)) * time.Microsecond
}

// leanBody is the one request body of a lean run: a draw, always legal
// in a relaxed game (unlimited passes).
var leanBody = []byte(`{"type":"draw"}`)

// leanLoad is the cheap load generator: clients goroutines, each in a
// closed loop POSTing leanBody to its target (targets[i mod len]) as fast
// as answers come, for d, of which the first warmup is not counted. No
// JSON is decoded and no game state is kept, so the generator's own CPU
// per request is a fraction of the players' of runLoad (which read
// legal moves and views); the same generator drives the baseline and the
// product, so their figures compare. Only loopback URLs are allowed.
func leanLoad(ctx context.Context, base string, targets []leanTarget, clients int, d, warmup time.Duration) (*leanResult, error) {
	if err := loopbackURL(base); err != nil {
		return nil, err
	}
	if clients < 1 || len(targets) == 0 {
		return nil, fmt.Errorf("lean load: %d clients, %d targets", clients, len(targets))
	}
	if d <= warmup || d > maxDuration {
		return nil, fmt.Errorf("lean load: duration %s must exceed the warm-up %s and be at most %s", d, warmup, maxDuration)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: clients, MaxIdleConnsPerHost: clients, IdleConnTimeout: time.Minute}}
	start := time.Now()
	countFrom, end := start.Add(warmup), start.Add(d)
	type counts struct {
		ok, total, errors int64
		hist              *hdrhistogram.Histogram
	}
	per := make([]counts, clients)
	var wg sync.WaitGroup
	for i := range clients {
		t := targets[i%len(targets)]
		c := &per[i]
		c.hist = hdrhistogram.New(histMin, histMax, histDigits)
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+t.Path, bytes.NewReader(leanBody))
				if err != nil {
					c.errors++
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+t.Token)
				res, err := client.Do(req)
				if err != nil {
					c.errors++
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				took := time.Since(t0)
				if res.StatusCode != http.StatusOK {
					c.errors++
					continue
				}
				c.total++
				if !t0.Before(countFrom) {
					c.ok++
					_ = c.hist.RecordValue(max(took.Microseconds(), histMin))
				}
			}
		})
	}
	wg.Wait()
	client.CloseIdleConnections()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &leanResult{Clients: clients, Measured: end.Sub(countFrom), Hist: hdrhistogram.New(histMin, histMax, histDigits)}
	for _, c := range per {
		r.OK, r.Total, r.Errors = r.OK+c.ok, r.Total+c.total, r.Errors+c.errors
		r.Hist.Merge(c.hist)
	}
	return r, nil
}
