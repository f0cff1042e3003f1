package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Band is a difficulty band of a winnable deal (R7.5). Persisted and API
// words: never rename one. The solver computes them (solver.BandOf, whose
// solver.Band is this type); domain carries them.
type Band string

// The bands of R7.5, easiest first.
const (
	DifficultyEasy   Band = "easy"
	DifficultyMedium Band = "medium"
	DifficultyHard   Band = "hard"
	DifficultyExpert Band = "expert"
)

// ProvenDeal is a deal the solver proved winnable (R7.1, R7.2): the secret
// seed it is dealt from (Deal(rules, Seed), R6.1), a winning line from the
// deal under those rules (moves as Decide accepts them, already replayed
// to a win), the nodes the search expanded before it found the line, and
// the R7.5 band of that count (DifficultyEasy ... DifficultyExpert).
type ProvenDeal struct {
	Seed       uint64
	Line       []Move
	Nodes      int64
	Difficulty Band
}

// ErrDealNotReady matches every *DealNotReadyError: no proven deal was
// ready in time (R7.2). Nothing was written.
var ErrDealNotReady = errors.New("no proven winnable deal is ready yet")

// DealNotReadyError is ErrDealNotReady with the time after which a retry
// is likely to find a deal.
type DealNotReadyError struct {
	Wait time.Duration // at least a second
}

// RetryAfter is Wait, at least a second: when to ask again.
func (e *DealNotReadyError) RetryAfter() time.Duration { return max(e.Wait, time.Second) }

// Error says so, for people.
func (e *DealNotReadyError) Error() string {
	return "no proven winnable deal of these rules is ready yet; the server proves them in the background, retry shortly"
}

// Is makes a *DealNotReadyError match ErrDealNotReady.
func (e *DealNotReadyError) Is(target error) bool { return target == ErrDealNotReady }

// SecretSeed draws a secret seed from random (8 bytes, big-endian): the
// generator of every server seed, so that duels, daily deals and the
// proven deals of an app.Dealer come from the same source. Errors: random's.
func SecretSeed(random io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return 0, fmt.Errorf("domain: random source: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// EncodeLine is the canonical encoding of a winning line, the bytes its
// commitment covers (R7.2): the compact JSON array of the moves as move
// requests (MoveRequest in openapi.yaml), each an object with the keys type,
// from, to, count, pile in that order and the absent ones left out, pile
// names as the API spells them, e.g.
//
//	[{"type":"draw"},{"type":"move","from":"waste","to":"tableau/3","count":1}]
//
// An empty line is "[]".
func EncodeLine(line []Move) string {
	if len(line) == 0 {
		return "[]"
	}
	b, err := json.Marshal(line)
	if err != nil {
		panic("domain: a move does not encode: " + err.Error()) // Move has only plain fields
	}
	return string(b)
}

// DecodeLine parses EncodeLine's form (any JSON array of move requests).
// Errors: the JSON decoder's, or a pile name that is no pile.
func DecodeLine(s string) ([]Move, error) {
	var line []Move
	if err := json.Unmarshal([]byte(s), &line); err != nil {
		return nil, err
	}
	return line, nil
}

// SolutionCommitment commits to a winning line as Commitment does to a
// deal (R6.4, R7.2): "sha256:" and the lower-case hex SHA-256 of the
// canonical line (EncodeLine), a line feed and the lower-case hex of the
// game's salt (the same salt as the deal commitment, revealed with it).
func SolutionCommitment(line []Move, salt []byte) string {
	h := sha256.Sum256([]byte(EncodeLine(line) + "\n" + hex.EncodeToString(salt)))
	return "sha256:" + hex.EncodeToString(h[:])
}

// CheckSolutionCommitment reports whether commitment matches line and salt.
func CheckSolutionCommitment(commitment string, line []Move, salt []byte) bool {
	return subtle.ConstantTimeCompare([]byte(commitment), []byte(SolutionCommitment(line, salt))) == 1
}

// SolutionWins reports whether line, played through Decide from the deal
// of dealt (a game's first event, game_dealt), wins (R7.2). Every move is
// decided at the deal's time, so a time limit never runs out during the
// check. It returns why not for people ("" when it wins).
func SolutionWins(dealt Event, line []Move) (bool, string) {
	if dealt.Type != EventGameDealt || dealt.Data.Deal == nil {
		return false, "the first event is not a deal"
	}
	s := &State{}
	s.Apply(dealt)
	if s.Fault != "" {
		return false, s.Fault
	}
	for i, m := range line {
		if s.Status == StatusWon {
			return false, fmt.Sprintf("the game is won before move %d of the line", i+1)
		}
		_, after, err := Decide(s, m, dealt.OccurredAt)
		if err != nil {
			return false, fmt.Sprintf("move %d of the line (%v) is not legal: %v", i+1, m, err)
		}
		s = after
		if s.Fault != "" {
			return false, s.Fault
		}
	}
	if s.Status != StatusWon {
		return false, fmt.Sprintf("the line ends with the game %s, not won", s.Status)
	}
	return true, ""
}

// SolutionReport is the check of a winnable deal's line (R7.2): OK when the
// line wins the deal of the first event and matches the solution
// commitment published in it under the salt.
type SolutionReport struct {
	Commitment   string // the solution_commitment of the first event ("" if none)
	CommitmentOK bool   // SolutionCommitment(line, salt) is Commitment
	Wins         bool   // SolutionWins
	Problem      string // why not, for people; "" when OK
	OK           bool   // CommitmentOK and Wins
}

// CheckSolution checks line against a game's first event and salt: the
// online audit and `solitaire audit -solution` both use it.
func CheckSolution(dealt Event, line []Move, salt []byte) SolutionReport {
	r := SolutionReport{Commitment: dealt.Data.SolutionCommitment}
	switch {
	case r.Commitment == "":
		r.Problem = "the deal carries no solution commitment (not a winnable deal)"
	case !CheckSolutionCommitment(r.Commitment, line, salt):
		r.Problem = "the line does not match the solution commitment"
	default:
		r.CommitmentOK = true
	}
	var why string
	r.Wins, why = SolutionWins(dealt, line)
	if r.Problem == "" {
		r.Problem = why
	}
	r.OK = r.CommitmentOK && r.Wins
	return r
}
