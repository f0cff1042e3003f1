package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"golang.org/x/mod/sumdb/note"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// boardEntry is one entry of GET /v1/leaderboards/{variant}
// (api.LeaderboardEntry), with what verify-leaderboard checks.
type boardEntry struct {
	Rank       int    `json:"rank"`
	PlayerID   string `json:"player_id"`
	GameID     string `json:"game_id"`
	Score      *int   `json:"score"`
	ElapsedMS  int64  `json:"elapsed_ms"`
	Moves      int    `json:"moves"`
	FinishedAt string `json:"finished_at"`
}

// verifyLeaderboard (solitaire verify-leaderboard URL VARIANT -key KEY
// [-token T] [-query Q] [-board FILE]) checks every entry of a leaderboard against the
// transparency log (docs/transparency.md "Boards"): the checkpoint's
// signature with the key; per entry, the game's export (chain and rules
// replayed, as audit does), its leaf (the canonical record of that log,
// naming the entry's player) and the leaf's inclusion in the checkpoint's
// tree; that the entry's result (won, score, moves, time, end) is the
// replayed log's; and that the ranks are the ones those results give
// (app.RankStandings). Exit 0 when every entry holds, 1 otherwise.
func verifyLeaderboard(args []string, stdout, stderr io.Writer) int {
	fs := newKeyedFlags("verify-leaderboard", stderr)
	boardFile := fs.String("board", "", "check this saved board (the JSON of GET /v1/leaderboards/{variant}) instead of fetching it")
	query := fs.String("query", "", "the board's query, e.g. draw=3&winnable=true&period=day")
	token := fs.String("token", os.Getenv("SOLITAIRE_TOKEN"), "any player's bearer token, to read the games' logs (default $SOLITAIRE_TOKEN)")
	pos, verifier, code := fs.parse(args, 2, nil)
	if code != 0 {
		return code
	}
	base, variant := pos[0], pos[1]
	q, err := url.ParseQuery(*query)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: -query: %v\n", err)
		return 2
	}
	var raw []byte
	if *boardFile != "" {
		raw, err = os.ReadFile(*boardFile)
	} else {
		raw, err = fetch(base, "", q, "v1", "leaderboards", variant)
	}
	var board struct {
		Entries []boardEntry `json:"entries"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &board)
	}
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: the board: %v\n", err)
		return 1
	}
	cp, err := fetch(base, "", nil, "v1", "log", "checkpoint")
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 1
	}
	c, err := openCheckpoint(cp, verifier)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: checkpoint: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "board %s: %d entries; checkpoint ok (%s, %d leaves)\n", variant, len(board.Entries), c.Origin, c.Size)
	ok := true
	replayed := make([]app.Game, 0, len(board.Entries))
	for _, e := range board.Entries {
		g, problem := checkEntry(base, *token, e, cp, c.Size, verifier)
		if problem != "" {
			ok = false
			fmt.Fprintf(stdout, "rank %d, game %s: FAILED: %s\n", e.Rank, e.GameID, problem)
			continue
		}
		replayed = append(replayed, g)
		fmt.Fprintf(stdout, "rank %d, game %s: ok (won in %d moves, %d ms)\n", e.Rank, e.GameID, g.Moves, g.ElapsedMS)
	}
	if ok {
		for i, st := range app.RankStandings(replayed) {
			if e := board.Entries[i]; st.GameID != e.GameID || st.Rank != e.Rank {
				ok = false
				fmt.Fprintf(stdout, "order: FAILED: the results rank game %s %d at place %d; the board has game %s, rank %d\n",
					st.GameID, st.Rank, i+1, e.GameID, e.Rank)
			}
		}
	}
	if !ok {
		return 1
	}
	fmt.Fprintf(stdout, "every entry is in the log with the result the board shows\n")
	return 0
}

// checkEntry checks one board entry against its game's export and leaf
// (see verifyLeaderboard). It returns the game as its replayed log gives
// it (owner, result), or why the entry does not hold.
func checkEntry(base, token string, e boardEntry, cp []byte, size int64, v note.Verifier) (app.Game, string) {
	export, err := fetchAs(base, token, "application/x-ndjson", nil, "v1", "games", e.GameID, "events")
	if err != nil {
		return app.Game{}, err.Error()
	}
	recs, err := readLog("-", bytes.NewReader(export))
	if err != nil {
		return app.Game{}, "the export: " + err.Error()
	}
	a := domain.Audit(e.GameID, recs, nil)
	if a.DealHidden || a.FirstBroken() != 0 || a.State == nil {
		return app.Game{}, fmt.Sprintf("the log does not verify (deal hidden %v, chain broken at %d, rules at %d: %s)",
			a.DealHidden, a.ChainBrokenAt, a.ReplayBrokenAt, a.ReplayProblem)
	}
	var p logProof
	b, err := fetch(base, "", url.Values{"tree_size": {strconv.FormatInt(size, 10)}}, "v1", "games", e.GameID, "proof")
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return app.Game{}, "the proof: " + err.Error()
	}
	if leafOK, msg := checkLeaf(e.GameID, e.PlayerID, recs, a, p); !leafOK {
		return app.Game{}, "leaf: " + msg
	}
	if inclOK, msg, _ := checkInclusion(p, cp, v); !inclOK {
		return app.Game{}, "inclusion: " + msg
	}
	g := app.Game{ID: e.GameID, Owner: e.PlayerID}
	g.Project(a.State)
	end := ""
	if g.FinishedAt != nil {
		end = domain.FormatTime(*g.FinishedAt)
	}
	sameScore := (g.Score == nil) == (e.Score == nil) && (g.Score == nil || *g.Score == *e.Score)
	if g.Status != domain.StatusWon || !sameScore || g.Moves != e.Moves || g.ElapsedMS != e.ElapsedMS || end != e.FinishedAt {
		return app.Game{}, fmt.Sprintf("the board says won, score %s, %d moves, %d ms, ended %s; the log gives %s, score %s, %d moves, %d ms, ended %s",
			scoreOf(e.Score), e.Moves, e.ElapsedMS, e.FinishedAt, g.Status, scoreOf(g.Score), g.Moves, g.ElapsedMS, end)
	}
	return g, ""
}

func scoreOf(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}
