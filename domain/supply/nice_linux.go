package supply

import "syscall"

// lowerPriority sets the calling thread's nice value to 10 (Linux threads
// have their own), so the supply's proofs yield to requests.
func lowerPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}
