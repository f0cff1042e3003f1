-- The transparency log of finished games (docs/transparency.md): an
-- RFC 6962 Merkle tree with one leaf per ended game, its stored hashes in
-- the layout of golang.org/x/mod/sumdb/tlog, and the latest signed
-- checkpoint. All *_at columns are BIGINT milliseconds since the Unix
-- epoch, UTC, as in 00001.

-- +goose Up

-- One leaf per ended game, numbered from 0 in the order the sequencer
-- appended them. record is the canonical leaf record (domain.EncodeLeaf),
-- the exact bytes the leaf hash covers; never rewritten.
CREATE TABLE tlog_leaves (
    idx         BIGINT PRIMARY KEY CHECK (idx >= 0),
    game_id     TEXT   COLLATE "C" NOT NULL UNIQUE REFERENCES games (id),
    record      BYTEA  NOT NULL,
    created_at  BIGINT NOT NULL
);

-- The tree's stored hashes, at tlog.StoredHashIndex(level, n): every
-- complete subtree's hash, leaves included (the Go checksum database's
-- scheme). Inclusion and consistency proofs and hash tiles read them.
CREATE TABLE tlog_hashes (
    idx   BIGINT PRIMARY KEY CHECK (idx >= 0),
    hash  BYTEA  NOT NULL CHECK (length(hash) = 32)
);

-- The tree's head: one row (id 1), locked by the sequencer for the length
-- of an append, so one writer at a time across server processes. size and
-- root are the tree the checkpoint signs; checkpoint is the signed note
-- ('' before the first leaf). signer_key holds a key the server generated
-- because none was configured (PostgreSQL only, README "Configuration");
-- '' when the key comes from configuration.
CREATE TABLE tlog_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    size        BIGINT  NOT NULL CHECK (size >= 0),
    root        BYTEA   NOT NULL,
    checkpoint  BYTEA   NOT NULL,
    signed_at   BIGINT  NOT NULL,
    signer_key  TEXT    NOT NULL DEFAULT ''
);
INSERT INTO tlog_state (id, size, root, checkpoint, signed_at) VALUES (1, 0, ''::bytea, ''::bytea, 0);

-- The leaf index of an ended game, set by the sequencer in the transaction
-- that appends the leaf; NULL while the game waits for one (or runs).
ALTER TABLE games ADD COLUMN log_index BIGINT;
-- The sequencer's queue: ended games without a leaf, in appending order.
CREATE INDEX games_unlogged ON games (finished_at, id) WHERE finished_at IS NOT NULL AND log_index IS NULL;

-- +goose Down
DROP INDEX games_unlogged;
ALTER TABLE games DROP COLUMN log_index;
DROP TABLE tlog_state;
DROP TABLE tlog_hashes;
DROP TABLE tlog_leaves;
