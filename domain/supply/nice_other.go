//go:build !linux

package supply

// lowerPriority does nothing where threads have no priority of their own.
func lowerPriority() {}
