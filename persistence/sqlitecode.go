//go:build cgo

package persistence

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// sqliteCode is the extended result code of the SQLite error in err's
// chain (its low byte is the primary code), or 0 when there is none. The
// driver (mattn/go-sqlite3) returns its Error as a value, not a pointer.
func sqliteCode(err error) int {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return 0
	}
	if se.ExtendedCode != 0 {
		return int(se.ExtendedCode)
	}
	return int(se.Code)
}
