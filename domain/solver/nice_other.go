//go:build !linux

package solver

// lowerPriority does nothing where threads have no priority of their own.
func lowerPriority() {}
