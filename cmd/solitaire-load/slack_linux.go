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
// thread set to slack, whose own slack is then put back. Should that
// fail, the thread stays locked and ends with its goroutine, so no other
// goroutine of this tool runs with the slack.
func startCmd(cmd *exec.Cmd, slack time.Duration) error {
	if slack <= 0 {
		return cmd.Start()
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		was, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err == nil {
			err = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack.Nanoseconds()), 0, 0, 0)
		}
		if err != nil {
			started <- fmt.Errorf("timer slack %s: %w", slack, err)
			return
		}
		started <- cmd.Start()
		if unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(was), 0, 0, 0) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-started
}

// checkTimerSlack refuses a negative timer slack before any run starts.
func checkTimerSlack(slack time.Duration) error {
	if slack < 0 {
		return fmt.Errorf("-timer-slack %s: want 0 or more", slack)
	}
	return nil
}
