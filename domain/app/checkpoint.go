package app

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Checkpoint is the body of a transparency log's signed checkpoint, in the
// C2SP tlog-checkpoint format (https://c2sp.org/tlog-checkpoint): the
// log's origin, the number of leaves and the RFC 6962 root hash of the
// tree of that size. The signature around it is a signed note
// (https://c2sp.org/signed-note), made and checked by
// golang.org/x/mod/sumdb/note.
type Checkpoint struct {
	Origin string   // the log's name, e.g. "solitaire.example/v1/log" (its URL prefix without the scheme); no newline
	Size   int64    // leaves in the tree, 0 or more
	Root   [32]byte // RFC 6962 §2.1 hash of the tree (SHA-256 of "" for size 0)
}

// Text is the checkpoint body: three lines, each ending in "\n": the
// origin, the size in decimal, the root hash in standard base64.
func (c Checkpoint) Text() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
}

// ParseCheckpoint reads a checkpoint body (the text of a signed note once
// its signature is checked). Extension lines after the third are allowed
// by the format and ignored. Errors: fewer than three lines, an empty
// origin, a size that is not canonical decimal, a root that is not 32
// bytes of base64.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if bytes.Count(text, []byte("\n")) < 3 || !bytes.HasSuffix(text, []byte("\n")) {
		return Checkpoint{}, errors.New("checkpoint: want origin, size and root hash lines")
	}
	lines := strings.SplitN(string(text), "\n", 4)
	var c Checkpoint
	c.Origin = lines[0]
	if c.Origin == "" {
		return Checkpoint{}, errors.New("checkpoint: empty origin")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint: size %q is not a whole number", lines[1])
	}
	c.Size = n
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return Checkpoint{}, fmt.Errorf("checkpoint: root %q is not 32 bytes of base64", lines[2])
	}
	copy(c.Root[:], root)
	return c, nil
}
