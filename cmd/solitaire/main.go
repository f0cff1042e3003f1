// Command solitaire is the auditors' and players' tool for the solitaire
// server's game logs. It works offline on an exported NDJSON log with the
// same rules code as the server (package domain).
//
// Usage:
//
//	solitaire audit FILE [-salt HEX] [-solution AUDIT] [-json]
//	                                            verify chain, rules replay, commitment and a winnable deal's line
//	solitaire replay FILE [-at N] [-reveal]     print the board after event N (default: last)
//	solitaire export URL GAME_ID [-token T]     fetch a game's log as NDJSON to stdout
//	solitaire verify FILE -key VKEY (-proof PROOF.json | -server URL) [-checkpoint CP] [-salt HEX] [-owner ID]
//	                                            check the game against the transparency log
//	solitaire verify-log OLD NEW -key VKEY [-server URL]
//	                                            check that checkpoint NEW extends checkpoint OLD (the
//	                                            server's C2SP tlog-tiles hash tiles below URL/v1/log;
//	                                            -server is needed unless OLD is empty or both have one size)
//	solitaire verify-leaderboard URL VARIANT -key VKEY [-token T] [-query Q] [-board FILE]
//	                                            check every board entry against the log
//	solitaire solve (-seed N | -layout F | -log F) [-variant V] ...
//	                                            is it winnable (R7.1)? verdict and line as JSON
//	solitaire solve-bench [-variant V] [-draw D] [-n N] [-budget T]
//	                                            the solver over seeded deals: figures of BENCHMARKS.md
//
// FILE is "-" for standard input. Exit status: 0 all good, 1 the audit
// found a problem or the server refused, 2 bad usage or unreadable input,
// 3 the log's deal is hidden (an export of a game in progress, or of a
// sealed one: RULES R6.4, R6.6): audit checked every link it could and
// found nothing wrong, replay cannot show the board; export the game again
// once it has ended (and its competition closed).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/openpatience/solitaire/domain"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage:
  solitaire audit FILE [-salt HEX] [-solution AUDIT.json] [-json]
  solitaire replay FILE [-at N] [-reveal]
  solitaire export URL GAME_ID [-token TOKEN]
  solitaire verify FILE -key VKEY (-proof PROOF.json | -server URL [-token TOKEN]) [-checkpoint CP] [-salt HEX] [-owner ID]
  solitaire verify-log OLD NEW -key VKEY [-server URL]   (-server unless OLD is empty or both have one size)
  solitaire verify-leaderboard URL VARIANT -key VKEY [-token TOKEN] [-query draw=3&winnable=true] [-board FILE]
  solitaire solve (-seed N | -layout FILE | -log FILE [-at V]) [-variant ID] [-draw 1|3] [-budget D] [-nodes N]
  solitaire solve-bench [-variant ID] [-draw 1|3] [-n DEALS] [-seed0 N] [-budget D] [-out FILE] [-ks FILE]
exit status: 0 all good, 1 a problem found, 2 bad usage, 3 the deal is hidden (audit, replay of a game in progress)
`

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "audit":
		return audit(args[1:], stdin, stdout, stderr)
	case "replay":
		return replay(args[1:], stdin, stdout, stderr)
	case "export":
		return export(args[1:], stdout, stderr)
	case "verify":
		return verify(args[1:], stdin, stdout, stderr) // verify.go
	case "verify-log":
		return verifyLog(args[1:], stdout, stderr)
	case "verify-leaderboard":
		return verifyLeaderboard(args[1:], stdout, stderr) // leaderboard.go
	case "solve":
		return solveCmd(args[1:], stdin, stdout, stderr)
	case "solve-bench":
		return solveBench(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "solitaire: unknown command %q\n%s", args[0], usage)
	return 2
}

// parse parses flags that may come before or after the positional
// arguments and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// readSaltAndLog decodes saltHex (hex, "" for no salt) and reads the export
// named name (readLog) for the audit and verify commands; on a failure it
// says why on stderr and returns exit status 2 (bad usage), else 0.
func readSaltAndLog(saltHex, name string, stdin io.Reader, stderr io.Writer) ([]byte, []domain.RecordedEvent, int) {
	var salt []byte
	if saltHex != "" {
		var err error
		if salt, err = hex.DecodeString(saltHex); err != nil {
			fmt.Fprintf(stderr, "solitaire: -salt: %v\n", err)
			return nil, nil, 2
		}
	}
	recs, err := readLog(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %s: %v\n", name, err)
		return nil, nil, 2
	}
	return salt, recs, 0
}

// readLog reads an NDJSON export (one domain.ExportedEvent per line).
func readLog(name string, stdin io.Reader) ([]domain.RecordedEvent, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var out []domain.RecordedEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		// An unreadable line or field is kept as an event with no hash, so
		// the audit reports the chain broken there instead of giving up:
		// line k of an export is version k.
		// The export is canonical JSON (what json.Marshal of an
		// ExportedEvent writes); a line that does not re-encode to itself
		// byte for byte was changed, even where the decoder is lenient
		// (field names match case-insensitively).
		var x domain.ExportedEvent
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			out = append(out, domain.RecordedEvent{Version: line})
			continue
		}
		if canon, err := json.Marshal(x); err != nil || !bytes.Equal(canon, bytes.TrimRight(sc.Bytes(), "\r")) {
			out = append(out, domain.RecordedEvent{Version: line})
			continue
		}
		rec, err := domain.Import(x)
		if err != nil {
			rec = domain.RecordedEvent{GameID: x.GameID, Version: x.Version}
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no events in the log")
	}
	return out, nil
}

func audit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	saltHex := fs.String("salt", "", "the game's salt (hex), revealed after the end, to check the commitment")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	solFile := fs.String("solution", "", "a winnable deal's line (R7.2): GET /v1/games/{id}/audit saved as JSON, or a JSON array of move requests; its salt is used unless -salt is given")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var line []domain.Move
	if *solFile != "" {
		var auditSalt string
		if line, auditSalt, err = readSolution(*solFile); err != nil {
			fmt.Fprintf(stderr, "solitaire: -solution: %v\n", err)
			return 2
		}
		if *saltHex == "" {
			*saltHex = auditSalt
		}
	}
	salt, recs, code := readSaltAndLog(*saltHex, pos[0], stdin, stderr)
	if code != 0 {
		return code
	}
	var sol *domain.SolutionReport
	if *solFile != "" {
		r := checkSolution(recs, line, salt)
		sol = &r
	}
	gameID := recs[0].GameID
	for _, r := range recs {
		if r.GameID != "" && r.Hash != nil {
			gameID = r.GameID // the first intact line names the game
			break
		}
	}
	for i := range recs {
		if recs[i].GameID != gameID {
			recs[i].Hash = nil // a line of another game (or a changed id) breaks the chain there
		}
	}
	a := domain.Audit(gameID, recs, salt)
	if *asJSON {
		out := map[string]any{"game_id": recs[0].GameID, "events": a.Events, "head_hash": a.HeadHash, "deal_hidden": a.DealHidden,
			"chain_ok": a.ChainOK, "chain_broken_at": a.ChainBrokenAt, "replay_ok": a.ReplayOK,
			"replay_broken_at": a.ReplayBrokenAt, "replay_problem": a.ReplayProblem,
			"commitment": a.Commitment, "commitment_ok": a.CommitmentOK, "first_broken": a.FirstBroken()}
		if sol != nil {
			out["solution_commitment"], out["solution_ok"], out["solution_problem"] = sol.Commitment, sol.OK, sol.Problem
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	} else {
		writeAuditText(stdout, recs[0].GameID, a, sol, len(line))
	}
	if a.FirstBroken() != 0 || (a.CommitmentOK != nil && !*a.CommitmentOK) || (sol != nil && !sol.OK) {
		return 1
	}
	if a.DealHidden {
		return exitDealHidden
	}
	return 0
}

// writeAuditText writes audit's report a on the log of gameID for people
// (audit without -json), one line per check: the chain, the rules (both
// qualified when the deal is hidden), the commitment, the solution when
// sol is not nil (moves is the length of its line) and the final status
// when the log has moves. Write errors are ignored, as audit's are.
func writeAuditText(stdout io.Writer, gameID string, a domain.AuditReport, sol *domain.SolutionReport, moves int) {
	fmt.Fprintf(stdout, "game %s: %d events, head %s\n", gameID, a.Events, a.HeadHash)
	if a.DealHidden {
		fmt.Fprintf(stdout, "deal:       hidden until the game ends (RULES R6.4, R6.6); export it again then\n")
		fmt.Fprintf(stdout, "chain:      %s\n", verdict(a.ChainOK, a.ChainBrokenAt, "")+
			" from the deal's hash on (the deal's own hash covers the hidden cards and salt)")
		fmt.Fprintf(stdout, "rules:      not replayed (the deal is hidden)\n")
	} else {
		fmt.Fprintf(stdout, "chain:      %s\n", verdict(a.ChainOK, a.ChainBrokenAt, ""))
		fmt.Fprintf(stdout, "rules:      %s\n", verdict(a.ReplayOK, a.ReplayBrokenAt, a.ReplayProblem))
	}
	switch {
	case a.DealHidden:
		fmt.Fprintf(stdout, "commitment: not checked (the deal is hidden)\n")
	case a.CommitmentOK == nil:
		fmt.Fprintf(stdout, "commitment: not checked (give -salt)\n")
	case *a.CommitmentOK:
		fmt.Fprintf(stdout, "commitment: ok (%s)\n", a.Commitment)
	default:
		fmt.Fprintf(stdout, "commitment: MISMATCH (%s)\n", a.Commitment)
	}
	if sol != nil {
		if sol.OK {
			fmt.Fprintf(stdout, "solution:   ok, %d moves win the deal (%s)\n", moves, sol.Commitment)
		} else {
			fmt.Fprintf(stdout, "solution:   FAILED: %s\n", sol.Problem)
		}
	}
	if a.State != nil && a.State.Version > 0 {
		fmt.Fprintf(stdout, "final:      %s after %d moves\n", a.State.Status, a.State.Moves)
	}
}

// exitDealHidden is the exit status of audit and replay on a log whose
// deal is redacted (see the package comment).
const exitDealHidden = 3

// readSolution reads a winnable deal's line (R7.2) from file: the JSON of
// GET /v1/games/{id}/audit (its solution, and its salt, "" if null) or a
// bare JSON array of move requests.
func readSolution(file string) ([]domain.Move, string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		line, err := domain.DecodeLine(string(b))
		return line, "", err
	}
	var a struct {
		Solution json.RawMessage `json:"solution"`
		Salt     *string         `json:"salt"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, "", err
	}
	if len(a.Solution) == 0 || string(a.Solution) == "null" {
		return nil, "", errors.New("the audit has no solution: not a winnable deal, or its deal may not be revealed yet")
	}
	line, err := domain.DecodeLine(string(a.Solution))
	salt := ""
	if a.Salt != nil {
		salt = *a.Salt
	}
	return line, salt, err
}

// checkSolution checks line against the log's first event and salt
// (domain.CheckSolution).
func checkSolution(recs []domain.RecordedEvent, line []domain.Move, salt []byte) domain.SolutionReport {
	if len(recs) == 0 {
		return domain.SolutionReport{Problem: "empty log"}
	}
	first, err := domain.DecodeEvent(recs[0].Version, recs[0].Type, recs[0].OccurredAt, recs[0].Payload)
	if err != nil {
		return domain.SolutionReport{Problem: err.Error()}
	}
	if salt == nil {
		return domain.SolutionReport{Commitment: first.Data.SolutionCommitment, Problem: "no salt: give -salt (the commitment cannot be checked without it)"}
	}
	return domain.CheckSolution(first, line, salt)
}

func verdict(ok bool, at int, why string) string {
	if ok {
		return "ok"
	}
	s := fmt.Sprintf("BROKEN at version %d", at)
	if why != "" {
		s += ": " + why
	}
	return s
}

func replay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	at := fs.Int("at", 0, "show the game after event N (1 = the deal; default the last)")
	reveal := fs.Bool("reveal", false, "show face-down cards and the stock (only known in a finished game's log)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	recs, err := readLog(pos[0], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %s: %v\n", pos[0], err)
		return 2
	}
	n := *at
	if n == 0 {
		n = len(recs)
	}
	if n < 1 || n > len(recs) {
		fmt.Fprintf(stderr, "solitaire: -at %d: the log has versions 1..%d\n", n, len(recs))
		return 2
	}
	s := &domain.State{}
	for _, r := range recs[:n] {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 1
		}
		if e.Version == 1 && e.Data.Hidden != nil {
			fmt.Fprintf(stderr, "solitaire: the deal is hidden until the game ends (RULES R6.4, R6.6): "+
				"this export cannot be replayed; export the game again once it has ended\n")
			return exitDealHidden
		}
		s.Apply(e)
	}
	if s.Fault != "" {
		fmt.Fprintf(stderr, "solitaire: the log does not replay: %s\n", s.Fault)
		return 1
	}
	fmt.Fprint(stdout, s.Board(*reveal))
	return 0
}

func export(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	token := fs.String("token", os.Getenv("SOLITAIRE_TOKEN"), "bearer token (needed for a game in progress; default $SOLITAIRE_TOKEN)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 2 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	base, err := url.Parse(pos[0])
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		fmt.Fprintf(stderr, "solitaire: %q is not an http(s) URL\n", pos[0])
		return 2
	}
	u := base.JoinPath("v1", "games", pos[1], "events")
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 2
	}
	req.Header.Set("Accept", "application/x-ndjson")
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Fprintf(stderr, "solitaire: %s: %s\n%s\n", u, resp.Status, body)
		return 1
	}
	if _, err := io.Copy(stdout, resp.Body); err != nil {
		fmt.Fprintf(stderr, "solitaire: %v\n", err)
		return 1
	}
	return 0
}
