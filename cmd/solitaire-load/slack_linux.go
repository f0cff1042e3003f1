package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// startCmd starts cmd; with slack > 0 its process gets that timer slack
// (prctl PR_SET_TIMERSLACK, in nanoseconds). A new process takes the
// timer slack of the thread that forked it and keeps it across execve, and
// every thread it makes inherits it, so cmd is started from a locked
// thread set to slack (withSlack). Should putting the thread's own slack
// back fail, the thread stays locked and ends with its goroutine, so no
// other goroutine of this tool runs with the slack.
func startCmd(cmd *exec.Cmd, slack time.Duration) error {
	if slack <= 0 {
		return cmd.Start()
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := withSlack(slack, cmd.Start)
		started <- err
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	return <-started
}

// withSlack runs fn with the calling thread's timer slack set to slack,
// then puts the thread's own slack back; the caller must hold the thread
// (runtime.LockOSThread). It reports whether the thread's slack is its
// own again (also when setting it failed: then fn did not run) and
// returns fn's error or the failure to set the slack.
func withSlack(slack time.Duration, fn func() error) (restored bool, err error) {
	was, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return true, fmt.Errorf("timer slack: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack.Nanoseconds()), 0, 0, 0); err != nil {
		return true, fmt.Errorf("timer slack %s: %w", slack, err)
	}
	err = fn()
	return unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(was), 0, 0, 0) == nil, err
}

// checkTimerSlack refuses a negative timer slack before any run starts.
func checkTimerSlack(slack time.Duration) error {
	if slack < 0 {
		return fmt.Errorf("-timer-slack %s: want 0 or more", slack)
	}
	return nil
}
