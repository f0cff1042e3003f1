package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStartCmdTimerSlack checks that a process startCmd starts has the
// timer slack asked for, that one started without it keeps this
// process's own, and that no thread of this process keeps the slack.
func TestStartCmdTimerSlack(t *testing.T) {
	own, err := os.ReadFile("/proc/self/timerslack_ns")
	if err != nil {
		t.Fatalf("this kernel shows no timer slack: %v", err)
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
	if got, want := run(0), strings.TrimSpace(string(own)); got != want {
		t.Errorf("without: the child's timer slack is %q ns, want this process's %q", got, want)
	}
	// The thread that started the child gets its own slack back, soon
	// after the start.
	deadline := time.Now().Add(5 * time.Second)
	for {
		kept := threadsWithSlack(t, "1500000")
		if kept == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of this process still have the child's timer slack", kept)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// threadsWithSlack counts this process's threads whose timer slack is ns.
func threadsWithSlack(t *testing.T, ns string) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns")
		if err == nil && strings.TrimSpace(string(b)) == ns {
			n++
		}
	}
	return n
}
