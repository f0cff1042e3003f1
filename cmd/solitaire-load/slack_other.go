//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"time"
)

// startCmd starts cmd. A timer slack (slack > 0) is a Linux setting
// (prctl PR_SET_TIMERSLACK): elsewhere it is an error.
func startCmd(cmd *exec.Cmd, slack time.Duration) error {
	if slack > 0 {
		return errors.New("-timer-slack is Linux only")
	}
	return cmd.Start()
}

// checkTimerSlack refuses a timer slack (slack != 0) before any run
// starts: elsewhere than on Linux there is none to set.
func checkTimerSlack(slack time.Duration) error {
	if slack != 0 {
		return errors.New("-timer-slack is Linux only")
	}
	return nil
}
