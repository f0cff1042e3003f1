package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// getText GETs a URL and returns its status and body.
func getText(t *testing.T, url string) (int, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// waitLog waits until the server's logs hold a line with msg.
func waitLog(t *testing.T, p *serverProcess, msg string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(p.logs.String(), `"msg":"`+msg+`"`) {
			return
		}
	}
	t.Fatalf("no %q in the server's logs:\n%s", msg, p.logs.String())
}

// TestLogSurvivesKill runs the real binary with a sequencer that runs only
// at start-up, ends games, and kills the process (SIGKILL) before the
// sequencer's next round: the games' projections were committed with
// their last events, so the restarted server appends every one of them,
// each exactly once, and a further restart adds none. The key (on SQLite
// the file beside the database) is the same across restarts.
func TestLogSurvivesKill(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			env := []string{"SOLITAIRE_ADDR=127.0.0.1:0", "SOLITAIRE_LOG_LEVEL=debug", "SOLITAIRE_LOG_EVERY=24h",
				"SOLITAIRE_RATE_LIMIT=0"}
			if backend == "postgres" {
				env = append(env, "DATABASE_URL="+pgtest.DSN(t))
			} else {
				env = append(env, "SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "s.db"))
			}
			p := startServerProcess(t, bin, env...)
			waitLog(t, p, "log sequenced") // the start-up round is over
			_, key := getText(t, p.base+"/v1/log/key")
			client := &http.Client{Timeout: 20 * time.Second}
			var pl struct{ Token string }
			if s, err := jsonCall(client, "POST", p.base+"/v1/players", "", nil, map[string]string{"name": "p"}, &pl); s != 201 {
				t.Fatalf("new player: %d %v", s, err)
			}
			const n = 5
			var ids []string
			for range n {
				var g struct{ ID string }
				if s, err := jsonCall(client, "POST", p.base+"/v1/games", pl.Token, nil, map[string]string{"variant": "klondike"}, &g); s != 201 {
					t.Fatalf("new game: %d %v", s, err)
				}
				if s, err := jsonCall(client, "POST", p.base+"/v1/games/"+g.ID+"/moves", pl.Token, nil, map[string]string{"type": "resign"}, nil); s != 200 {
					t.Fatalf("resign: %d %v", s, err)
				}
				ids = append(ids, g.ID)
			}
			for _, id := range ids {
				if s, b := getText(t, p.base+"/v1/games/"+id+"/proof"); s != http.StatusNotFound || !bytes.Contains(b, []byte("not_logged")) {
					t.Fatalf("proof before the sequencer: %d %s", s, b)
				}
			}
			if err := p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-p.done

			for restart := range 2 {
				p = startServerProcess(t, bin, env...)
				waitLog(t, p, "log sequenced")
				if _, k := getText(t, p.base+"/v1/log/key"); !bytes.Equal(k, key) {
					t.Fatalf("restart %d: key %s, was %s", restart, k, key)
				}
				v, err := note.NewVerifier(strings.TrimSpace(string(key)))
				if err != nil {
					t.Fatal(err)
				}
				_, msg := getText(t, p.base+"/v1/log/checkpoint")
				nt, err := note.Open(msg, note.VerifierList(v))
				if err != nil {
					t.Fatalf("checkpoint: %v\n%s", err, msg)
				}
				c, err := app.ParseCheckpoint([]byte(nt.Text))
				if err != nil || c.Size != n {
					t.Fatalf("restart %d: checkpoint %+v, %v; want %d leaves (none lost, none twice)", restart, c, err, n)
				}
				_, data := getText(t, p.base+fmt.Sprintf("/v1/log/tile/8/data/000.p/%d", n))
				seen := map[string]int{}
				for _, line := range bytes.SplitAfter(data, []byte("\n")) {
					if len(line) == 0 {
						continue
					}
					l, err := app.ParseLeaf(line)
					if err != nil {
						t.Fatal(err)
					}
					seen[l.GameID]++
				}
				for _, id := range ids {
					if seen[id] != 1 {
						t.Fatalf("restart %d: game %s has %d leaves, want 1", restart, id, seen[id])
					}
					var pr struct {
						LeafIndex int64    `json:"leaf_index"`
						Leaf      string   `json:"leaf"`
						Proof     []string `json:"proof"`
					}
					if s, err := jsonCall(client, "GET", p.base+"/v1/games/"+id+"/proof", "", nil, nil, &pr); s != 200 {
						t.Fatalf("proof: %d %v", s, err)
					}
					leaf, _ := base64.StdEncoding.DecodeString(pr.Leaf)
					var proof tlog.RecordProof
					for _, h := range pr.Proof {
						x, _ := tlog.ParseHash(h)
						proof = append(proof, x)
					}
					if err := tlog.CheckRecord(proof, c.Size, c.Root, pr.LeafIndex, tlog.RecordHash(leaf)); err != nil {
						t.Fatalf("proof of %s: %v", id, err)
					}
				}
				if err := p.cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				<-p.done
			}
		})
	}
}

// The log's configuration: the SQLite default keeps its key beside the
// database, and names a new one after the listen address when that is a
// loopback address; PostgreSQL without a key uses the database's; a key
// and a key file at once, intervals out of range, and an origin that is a
// URL with its scheme or trailing slash, or no key name, are refused.
func TestLoadLogConfig(t *testing.T) {
	c, err := loadConfig(env(map[string]string{"SOLITAIRE_SQLITE_PATH": "/data/s.db"}))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.tlog.open; o.KeyFile != "/data/s.db.logkey" || !o.CreateKeyFile || o.Key != "" || c.tlog.every != time.Second ||
		o.Origin != "" || o.DefaultOrigin != "127.0.0.1:8080/v1/log" {
		t.Errorf("SQLite defaults: %+v every %v", o, c.tlog.every)
	}
	for addr, want := range map[string]string{"localhost:9000": "localhost:9000/v1/log", "[::1]:80": "[::1]:80/v1/log",
		":8080": "", "0.0.0.0:8080": "", "192.0.2.1:8080": "", "cards.example:8080": ""} {
		c, err := loadConfig(env(map[string]string{"SOLITAIRE_ADDR": addr}))
		if err != nil || c.tlog.open.DefaultOrigin != want {
			t.Errorf("SOLITAIRE_ADDR=%s: default origin %q, %v; want %q", addr, c.tlog.open.DefaultOrigin, err, want)
		}
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": "postgres://x", "SOLITAIRE_LOG_ORIGIN": "games.example/log",
		"SOLITAIRE_LOG_EVERY": "250ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.tlog.open; o.KeyFile != "" || o.CreateKeyFile || o.Origin != "games.example/log" || o.DefaultOrigin != "" ||
		c.tlog.every != 250*time.Millisecond {
		t.Errorf("PostgreSQL: %+v every %v", o, c.tlog.every)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_LOG_KEY_FILE": "/etc/k"}))
	if err != nil || c.tlog.open.KeyFile != "/etc/k" || c.tlog.open.CreateKeyFile {
		t.Errorf("key file: %+v, %v", c.tlog.open, err)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_LOG_KEY": "PRIVATE+KEY+x", "SOLITAIRE_LOG_KEY_FILE": "/etc/k"},
		{"SOLITAIRE_LOG_EVERY": "10ms"},
		{"SOLITAIRE_LOG_EVERY": "48h"},
		{"SOLITAIRE_LOG_EVERY": "soon"},
		{"SOLITAIRE_LOG_ORIGIN": "https://games.example/v1/log"},
		{"SOLITAIRE_LOG_ORIGIN": "games.example/v1/log/"},
		{"SOLITAIRE_LOG_ORIGIN": "games example"},
		{"SOLITAIRE_LOG_ORIGIN": "games+example"},
	} {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// startRun runs the server (run) with vars until the test ends, and
// returns its base URL, or the error it stopped with before listening.
func startRun(t *testing.T, vars map[string]string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(vars), io.Discard, func(a net.Addr) { addrs <- a }) }()
	select {
	case a := <-addrs:
		t.Cleanup(func() { cancel(); <-done })
		return "http://" + a.String(), nil
	case err := <-done:
		cancel()
		return "", err
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the server did not start")
		return "", nil
	}
}

// keyName is the name of the log key a server publishes (GET /v1/log/key).
func keyName(t *testing.T, base string) string {
	t.Helper()
	_, key := getText(t, base+"/v1/log/key")
	name, _, _ := strings.Cut(string(key), "+")
	return name
}

// The log's origin is chosen, never guessed from the host name: a new key
// on PostgreSQL, or on the embedded database listening beyond loopback,
// needs SOLITAIRE_LOG_ORIGIN, and the server refuses to start without it
// (persistence.ErrNoOrigin), keeping no key; on the embedded database on a
// loopback address, as the README's first command starts it, the new key
// is named after the log's prefix there (SOLITAIRE_ADDR/v1/log). A key
// that exists keeps its name, whatever the configuration says later.
func TestLogOrigin(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		vars := map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "DATABASE_URL": pgtest.DSN(t)}
		_, err := startRun(t, vars)
		if !errors.Is(err, persistence.ErrNoOrigin) || !strings.Contains(err.Error(), "SOLITAIRE_LOG_ORIGIN") {
			t.Fatalf("a new log on PostgreSQL without an origin: %v; want a refusal naming SOLITAIRE_LOG_ORIGIN", err)
		}
		vars["SOLITAIRE_LOG_ORIGIN"] = "games.example/v1/log"
		base, err := startRun(t, vars)
		if err != nil || keyName(t, base) != "games.example/v1/log" {
			t.Fatalf("with SOLITAIRE_LOG_ORIGIN: %v", err)
		}
		delete(vars, "SOLITAIRE_LOG_ORIGIN") // the key kept in the database names the log
		if base, err := startRun(t, vars); err != nil || keyName(t, base) != "games.example/v1/log" {
			t.Fatalf("a second server without SOLITAIRE_LOG_ORIGIN: %v", err)
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "s.db")
		_, err := startRun(t, map[string]string{"SOLITAIRE_ADDR": "0.0.0.0:0", "SOLITAIRE_SQLITE_PATH": db})
		if !errors.Is(err, persistence.ErrNoOrigin) {
			t.Fatalf("a new log listening on every interface without an origin: %v; want ErrNoOrigin", err)
		}
		if _, err := os.Stat(db + ".logkey"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the refused start left a key file (%v)", err)
		}
		base, err := startRun(t, map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "SOLITAIRE_SQLITE_PATH": db})
		if err != nil || keyName(t, base) != "127.0.0.1:0/v1/log" {
			t.Fatalf("the embedded database on loopback: %v", err)
		}
		base, err = startRun(t, map[string]string{"SOLITAIRE_ADDR": "localhost:0", "SOLITAIRE_SQLITE_PATH": db})
		if err != nil || keyName(t, base) != "127.0.0.1:0/v1/log" {
			t.Fatalf("restarted on another address, the key file's name: %v", err)
		}
		other := filepath.Join(t.TempDir(), "o.db")
		base, err = startRun(t, map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "SOLITAIRE_SQLITE_PATH": other,
			"SOLITAIRE_LOG_ORIGIN": "cards.example/v1/log"})
		if err != nil || keyName(t, base) != "cards.example/v1/log" {
			t.Fatalf("with SOLITAIRE_LOG_ORIGIN: %v", err)
		}
	})
}
