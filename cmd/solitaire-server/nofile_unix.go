//go:build unix

package main

import "syscall"

// openFileLimit is the process's soft RLIMIT_NOFILE (the Go runtime has
// already raised it to the hard limit at start-up), 0 if unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
