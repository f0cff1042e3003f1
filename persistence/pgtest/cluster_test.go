package pgtest

import (
	"testing"
)

// TestClusterCrash: a cluster of the test's own can be crashed (immediate
// stop) and started again, and a committed row survives the crash.
func TestClusterCrash(t *testing.T) {
	t.Parallel()
	c := NewCluster(t)
	db, err := connect(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c.Crash()
	if db, err := connect(c.URL); err == nil {
		db.Close()
		t.Fatal("the cluster answers after Crash")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	db, err = connect(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT n FROM t`).Scan(&n); err != nil || n != 42 {
		t.Fatalf("after the crash: %d, %v", n, err)
	}
}
