package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStartCmdTimerSlack checks that a process startCmd starts has the
// timer slack asked for and that one started without it keeps this
// process's own; then, where this process may read its other threads'
// slack (CAP_SYS_NICE: the kernel lets a task read only its own without
// it), that no thread of this process keeps the child's.
func TestStartCmdTimerSlack(t *testing.T) {
	runtime.LockOSThread() // PR_GET_TIMERSLACK reads the calling thread's
	own, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("PR_GET_TIMERSLACK: %v", err)
	}
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
	t.Run("no thread keeps it", func(t *testing.T) {
		// The thread that started the child gets its own slack back
		// soon after the start.
		deadline := time.Now().Add(5 * time.Second)
		for {
			kept := threadsWithSlack(t, "1500000")
			if kept == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d threads of this process still have the child's timer slack", kept)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// threadsWithSlack counts this process's threads whose timer slack is ns.
// A thread that has ended meanwhile is not counted; without the right to
// read another thread's slack the check cannot be made, and t is skipped
// with the reason (CI runs as root).
func threadsWithSlack(t *testing.T, ns string) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, fs.ErrPermission):
			t.Skipf("reading another thread's timer slack needs CAP_SYS_NICE: %v", err)
		case err != nil:
			t.Fatal(err)
		}
		if strings.TrimSpace(string(b)) == ns {
			n++
		}
	}
	return n
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
