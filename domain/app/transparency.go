package app

import (
	"context"
	"errors"
)

// Errors of a TransparencyLog.
var (
	// ErrNotLogged: the game has no leaf yet: it is in progress, or it
	// ended moments ago and the sequencer has not appended it (it does
	// within about a second; retry).
	ErrNotLogged = errors.New("the game has no leaf in the log yet")
	// ErrBadTreeSize: a proof was asked for a tree the log does not have
	// (size 0, beyond the latest checkpoint, not containing the leaf, or
	// an old size above the new one).
	ErrBadTreeSize = errors.New("no such tree size")
	// ErrNoTile: a tile path that is malformed or names a tile beyond the
	// tree of the latest checkpoint.
	ErrNoTile = errors.New("no such tile")
)

// LeafProof is a game's leaf and the RFC 6962 §2.1.1 inclusion proof (the
// audit path) that the tree of TreeSize leaves contains it.
type LeafProof struct {
	GameID     string
	Index      int64      // the leaf's index in the log, 0-based
	Record     []byte     // the canonical leaf record (EncodeLeaf), whose RFC 6962 leaf hash is proven
	TreeSize   int64      // leaves in the tree the proof is against
	Proof      [][32]byte // sibling hashes from the leaf up, at most ⌈log2 TreeSize⌉
	Checkpoint []byte     // the latest signed checkpoint (a signed note)
}

// ConsistencyProof is the RFC 6962 §2.1.2 proof that the tree of Old
// leaves is a prefix of the tree of New leaves, with both roots.
type ConsistencyProof struct {
	Old, New         int64
	OldRoot, NewRoot [32]byte
	Proof            [][32]byte
}

// TransparencyLog is the public, append-only log of finished games
// (docs/transparency.md): one leaf per ended game in an RFC 6962 Merkle
// tree, signed checkpoints (C2SP tlog-checkpoint), tiles (C2SP tlog-tiles,
// and the Go checksum database's layout of height 8) and proofs. It says nothing about who
// may read a game: a caller asks Games.Get first (RULES R6.4, R6.6).
type TransparencyLog interface {
	// Checkpoint is the latest signed checkpoint, a signed note.
	Checkpoint(ctx context.Context) ([]byte, error)
	// VerifierKey is the note verifier key of the checkpoints' signer.
	VerifierKey() string
	// Tile is the tile at path, relative to the tile root, and whether it
	// is complete (immutable): C2SP tlog-tiles ("0/001", "entries/000.p/5",
	// ...) or the Go checksum database's layout ("8/0/001",
	// "8/data/000.p/5", ...). Errors: ErrNoTile.
	Tile(ctx context.Context, path string) (data []byte, full bool, err error)
	// Proof is game gameID's leaf with its inclusion proof in the tree of
	// treeSize leaves (0: the latest). Errors: ErrNotLogged, ErrBadTreeSize.
	Proof(ctx context.Context, gameID string, treeSize int64) (*LeafProof, error)
	// Consistency proves the tree of oldSize leaves a prefix of the tree
	// of newSize (0 < oldSize <= newSize <= latest). Errors: ErrBadTreeSize.
	Consistency(ctx context.Context, oldSize, newSize int64) (*ConsistencyProof, error)
}
