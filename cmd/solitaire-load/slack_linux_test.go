package main

import (
	"bytes"
	"errors"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadSlack is the calling thread's timer slack in nanoseconds; the
// caller holds its thread (runtime.LockOSThread).
func threadSlack(t *testing.T) int {
	t.Helper()
	ns, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatalf("PR_GET_TIMERSLACK: %v", err)
	}
	return ns
}

// TestStartCmdTimerSlack checks that a process startCmd starts has the
// timer slack asked for, and that one started without it keeps this
// process's own.
func TestStartCmdTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	own := threadSlack(t)
	runtime.UnlockOSThread()
	run := func(slack time.Duration) string {
		t.Helper()
		var out bytes.Buffer
		cmd := exec.Command("cat", "/proc/self/timerslack_ns")
		cmd.Stdout = &out
		if err := startCmd(cmd, slack); err != nil {
			t.Fatalf("startCmd(%s): %v", slack, err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("cat: %v", err)
		}
		return strings.TrimSpace(out.String())
	}
	if got := run(1500 * time.Microsecond); got != "1500000" {
		t.Errorf("with 1.5ms: the child's timer slack is %q ns, want 1500000", got)
	}
	if got, want := run(0), strconv.Itoa(own); got != want {
		t.Errorf("without: the child's timer slack is %q ns, want this process's %q", got, want)
	}
}

// TestWithSlackPutsTheSlackBack checks, on the test's own locked thread,
// that withSlack runs fn with the slack asked for and then gives the
// thread its own slack back, when fn fails too: so the thread startCmd
// forks from goes back to the pool as it was.
func TestWithSlackPutsTheSlackBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own := threadSlack(t)
	boom := errors.New("boom")
	for _, fnErr := range []error{nil, boom} {
		during := 0
		restored, err := withSlack(1500*time.Microsecond, func() error {
			during = threadSlack(t)
			return fnErr
		})
		if during != 1500000 {
			t.Errorf("fn ran with %d ns of slack, want 1500000", during)
		}
		if !restored || !errors.Is(err, fnErr) || (fnErr == nil && err != nil) {
			t.Errorf("withSlack = %v, %v; want true, %v", restored, err, fnErr)
		}
		if after := threadSlack(t); after != own {
			t.Errorf("the thread's slack is %d ns after withSlack, want its own %d", after, own)
		}
	}
}

// TestCheckTimerSlack checks that a negative -timer-slack is refused
// before any run, and 0 and a positive one are taken.
func TestCheckTimerSlack(t *testing.T) {
	if err := checkTimerSlack(-time.Millisecond); err == nil {
		t.Error("-1ms taken")
	}
	for _, d := range []time.Duration{0, time.Millisecond} {
		if err := checkTimerSlack(d); err != nil {
			t.Errorf("%s refused: %v", d, err)
		}
	}
}
