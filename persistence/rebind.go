package persistence

import (
	"strconv"
	"strings"
)

// Rebind writes statement q, given with ? placeholders, in the store's
// dialect: $1, $2, ... on PostgreSQL, unchanged on SQLite. It is for
// statements run on database/sql directly: the append's own reads
// (headAt), tests and tools (gorm rebinds its statements itself). Every ? counts, also one inside
// a quoted string.
func (s *Store) Rebind(q string) string {
	if s.dialect != DialectPostgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
