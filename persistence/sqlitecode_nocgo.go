//go:build !cgo

package persistence

// sqliteCode is 0 without cgo: the SQLite driver is then a stub whose
// Open fails (README "Two commands"), so there are no SQLite errors to
// classify.
func sqliteCode(error) int { return 0 }
