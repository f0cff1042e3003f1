package migrations

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// placement is where a table lives in a Citus cluster (docs/scaling.md):
// distributed by a column (sharded, colocated by it), or a reference table
// (small, copied to every node).
type placement struct {
	reference bool
	column    string // the distribution column, if not reference
}

// key is a primary key or a unique constraint or index.
type key struct {
	table   string
	columns []string
}

// schema is what the PostgreSQL migrations declare, as far as Citus cares.
type schema struct {
	tables     map[string][]string // table -> columns
	keys       map[string]key      // constraint or index name -> key
	placements map[string]placement
	exceptions map[string]string // key name -> why it may leave out the distribution column
}

var (
	reCreateTable = regexp.MustCompile(`(?is)^CREATE TABLE (?:IF NOT EXISTS )?(\w+)\s*\((.*)\)\s*(?:STRICT)?$`)
	reUniqueIndex = regexp.MustCompile(`(?is)^CREATE UNIQUE INDEX (?:IF NOT EXISTS )?(\w+) ON (\w+)\s*(?:USING \w+\s*)?\(([^)]*)\)`)
	reAddKey      = regexp.MustCompile(`(?is)^ALTER TABLE (\w+) ADD (?:CONSTRAINT (\w+) )?(PRIMARY KEY|UNIQUE)\s*\(([^)]*)\)`)
	reAddColumn   = regexp.MustCompile(`(?is)^ALTER TABLE (\w+) ADD COLUMN (?:IF NOT EXISTS )?(\w+)(.*)$`)
	reDropCons    = regexp.MustCompile(`(?is)^ALTER TABLE (\w+) DROP CONSTRAINT (?:IF EXISTS )?(\w+)`)
	reDropIndex   = regexp.MustCompile(`(?is)^DROP INDEX (?:IF EXISTS )?(\w+)`)
	reDropTable   = regexp.MustCompile(`(?is)^DROP TABLE (?:IF EXISTS )?(\w+)`)
	reTableKey    = regexp.MustCompile(`(?is)^(?:CONSTRAINT (\w+) )?(PRIMARY KEY|UNIQUE)\s*\(([^)]*)\)`)
	rePlacement   = regexp.MustCompile(`(?m)^--\s*citus:\s*(\w+)\s+(reference|distributed by (\w+))\s*$`)
	reException   = regexp.MustCompile(`(?m)^--\s*citus-exception:\s*(\w+)\s+(\S.*)$`)
)

// parseSchema reads the Up sections of files (name -> SQL) in name order.
func parseSchema(files map[string]string) (*schema, error) {
	s := &schema{tables: map[string][]string{}, keys: map[string]key{}, placements: map[string]placement{},
		exceptions: map[string]string{}}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		text := files[name]
		for _, m := range rePlacement.FindAllStringSubmatch(text, -1) {
			s.placements[m[1]] = placement{reference: m[2] == "reference", column: m[3]}
		}
		for _, m := range reException.FindAllStringSubmatch(text, -1) {
			s.exceptions[m[1]] = m[2]
		}
		up, _, _ := strings.Cut(text, "-- +goose Down")
		if _, after, ok := strings.Cut(up, "-- +goose Up"); ok {
			up = after
		}
		for _, stmt := range statements(up) {
			if err := s.apply(stmt); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return s, nil
}

// statements splits SQL into statements without comments, whitespace
// collapsed.
func statements(sql string) []string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		line, _, _ = strings.Cut(line, "--")
		b.WriteString(line + " ")
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.Join(strings.Fields(st), " "); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// columnsOf splits a column list "a, b DESC" into names.
func columnsOf(list string) []string {
	var out []string
	for _, c := range strings.Split(list, ",") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, strings.Trim(f[0], `"`))
		}
	}
	return out
}

// splitTop splits s at commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func (s *schema) apply(stmt string) error {
	if m := reCreateTable.FindStringSubmatch(stmt); m != nil {
		table := m[1]
		for _, part := range splitTop(m[2]) {
			if k := reTableKey.FindStringSubmatch(part); k != nil {
				s.addKey(table, k[1], k[2], columnsOf(k[3]))
				continue
			}
			f := strings.Fields(part)
			if len(f) == 0 || slices.Contains([]string{"CONSTRAINT", "CHECK", "FOREIGN", "EXCLUDE"}, strings.ToUpper(f[0])) {
				continue
			}
			col := strings.Trim(f[0], `"`)
			s.tables[table] = append(s.tables[table], col)
			upper := strings.ToUpper(part)
			if strings.Contains(upper, "PRIMARY KEY") {
				s.addKey(table, "", "PRIMARY KEY", []string{col})
			} else if regexp.MustCompile(`\bUNIQUE\b`).MatchString(upper) {
				s.addKey(table, table+"_"+col+"_key", "UNIQUE", []string{col})
			}
		}
		return nil
	}
	if m := reUniqueIndex.FindStringSubmatch(stmt); m != nil {
		s.keys[m[1]] = key{table: m[2], columns: columnsOf(m[3])}
		return nil
	}
	if m := reAddKey.FindStringSubmatch(stmt); m != nil {
		s.addKey(m[1], m[2], m[3], columnsOf(m[4]))
		return nil
	}
	if m := reAddColumn.FindStringSubmatch(stmt); m != nil {
		s.tables[m[1]] = append(s.tables[m[1]], m[2])
		if up := strings.ToUpper(m[3]); strings.Contains(up, "PRIMARY KEY") || strings.Contains(up, " UNIQUE") {
			return fmt.Errorf("%s: declare keys with ADD CONSTRAINT, not in ADD COLUMN, so they have a name", stmt)
		}
		return nil
	}
	if m := reDropCons.FindStringSubmatch(stmt); m != nil {
		delete(s.keys, m[2])
		return nil
	}
	if m := reDropIndex.FindStringSubmatch(stmt); m != nil {
		delete(s.keys, m[1])
		return nil
	}
	if m := reDropTable.FindStringSubmatch(stmt); m != nil {
		delete(s.tables, m[1])
		for n, k := range s.keys {
			if k.table == m[1] {
				delete(s.keys, n)
			}
		}
	}
	return nil
}

// addKey records a key under PostgreSQL's default name when it has none.
func (s *schema) addKey(table, name, kind string, cols []string) {
	if name == "" {
		if strings.EqualFold(kind, "PRIMARY KEY") {
			name = table + "_pkey"
		} else {
			name = table + "_" + strings.Join(cols, "_") + "_key"
		}
	}
	s.keys[name] = key{table: table, columns: cols}
}

// problems lists every breach of the rule in migrations/README.md.
func (s *schema) problems() []string {
	var out []string
	for table, cols := range s.tables {
		p, ok := s.placements[table]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("table %s has no placement: add `-- citus: %s distributed by game_id` (or `reference` for a small table) to its migration", table, table))
		case !p.reference && !slices.Contains(cols, p.column):
			out = append(out, fmt.Sprintf("table %s is distributed by %s, which it does not have", table, p.column))
		}
	}
	for name, k := range s.keys {
		p, ok := s.placements[k.table]
		if !ok || p.reference || slices.Contains(k.columns, p.column) {
			continue
		}
		if _, excepted := s.exceptions[name]; excepted {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s) of table %s, distributed by %s, leaves %s out: Citus can enforce only keys that include the distribution column (or add `-- citus-exception: %s <why, and where it goes under Citus>`)",
			name, strings.Join(k.columns, ", "), k.table, p.column, p.column, name))
	}
	for name := range s.exceptions {
		if _, ok := s.keys[name]; !ok {
			out = append(out, fmt.Sprintf("citus-exception %s names no key of the schema", name))
		}
	}
	for table := range s.placements {
		if _, ok := s.tables[table]; !ok {
			out = append(out, fmt.Sprintf("placement of %s, a table the migrations do not create", table))
		}
	}
	sort.Strings(out)
	return out
}

// TestCitusReady: every table of the PostgreSQL migrations is either
// distributed by a column (games by id; events, snapshots by game_id) or
// a reference table, and every primary key and unique constraint or index
// of a distributed table includes its distribution column, unless an
// exception names it with a reason (migrations/README.md). It reads every
// file, so a new migration must place its tables.
func TestCitusReady(t *testing.T) {
	files := map[string]string{}
	err := fs.WalkDir(FS, "postgres", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") {
			return err
		}
		b, err := fs.ReadFile(FS, path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSchema(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"games", "events", "snapshots"} {
		if p := s.placements[table]; p.reference {
			t.Errorf("%s must be distributed, not a reference table", table)
		}
	}
	if len(s.tables) < 5 {
		t.Fatalf("read only %d tables: %v", len(s.tables), s.tables)
	}
	for _, p := range s.problems() {
		t.Errorf("%s\n(the rule: migrations/README.md)", p)
	}
}

// TestCitusCheckFails: the check finds a table without a placement, a key
// without the distribution column, a stale exception, and a key dropped
// and added again.
func TestCitusCheckFails(t *testing.T) {
	s, err := parseSchema(map[string]string{"00001_a.sql": `-- +goose Up
-- citus: moves distributed by game_id
-- citus: notes reference
-- citus-exception: gone_key no longer exists
CREATE TABLE moves (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    game_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    CONSTRAINT moves_n UNIQUE (game_id, n)
);
CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT UNIQUE);
CREATE TABLE loose (id TEXT PRIMARY KEY);
CREATE UNIQUE INDEX moves_by_n ON moves (n) WHERE n > 0;
-- +goose Down
DROP TABLE moves;`, "00002_b.sql": `-- +goose Up
ALTER TABLE moves DROP CONSTRAINT moves_pkey;
ALTER TABLE moves ADD CONSTRAINT moves_pkey PRIMARY KEY (game_id, id);`})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.problems(), "\n")
	for _, want := range []string{"table loose has no placement", "moves_by_n (n) of table moves", "citus-exception gone_key"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	for _, clean := range []string{"moves_pkey", "moves_n", "notes"} {
		if strings.Contains(got, clean+" ") {
			t.Errorf("a key that keeps the rule was reported (%s):\n%s", clean, got)
		}
	}
}
