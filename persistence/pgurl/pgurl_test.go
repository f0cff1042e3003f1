package pgurl

import (
	"strings"
	"testing"
)

func TestWithDatabase(t *testing.T) {
	got, err := WithDatabase("postgres://u:p@h:5/old?sslmode=disable", "new_db")
	if err != nil || got != "postgres://u:p@h:5/new_db?sslmode=disable" {
		t.Errorf("WithDatabase = %q, %v", got, err)
	}
	if _, err := WithDatabase("host=h dbname=x", "y"); err == nil {
		t.Error("WithDatabase accepted a keyword DSN")
	}
	if _, err := WithDatabase("postgres://u:secret@h/x\x7f", "y"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URL: %v", err)
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("postgres://u:secret@h:5/db"); got != "postgres://u:xxxxx@h:5/db" {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact("postgres://u:secret@h/x\x7f"); strings.Contains(got, "secret") {
		t.Errorf("Redact of an unparsable URL = %q", got)
	}
}

func TestRandomName(t *testing.T) {
	a, b := RandomName("p_", 6), RandomName("p_", 6)
	if len(a) != 2+12 || !strings.HasPrefix(a, "p_") || a == b {
		t.Errorf("RandomName = %q, %q", a, b)
	}
}
