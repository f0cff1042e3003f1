-- The transparency log of finished games, SQLite edition of
-- postgres/00004_tlog.sql: same tables, columns and constraints.

-- +goose Up
CREATE TABLE tlog_leaves (
    idx         INTEGER PRIMARY KEY NOT NULL CHECK (idx >= 0),
    game_id     TEXT    NOT NULL UNIQUE REFERENCES games (id),
    record      BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE tlog_hashes (
    idx   INTEGER PRIMARY KEY NOT NULL CHECK (idx >= 0),
    hash  BLOB    NOT NULL CHECK (length(hash) = 32)
) STRICT;

CREATE TABLE tlog_state (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    size        INTEGER NOT NULL CHECK (size >= 0),
    root        BLOB    NOT NULL,
    checkpoint  BLOB    NOT NULL,
    signed_at   INTEGER NOT NULL,
    signer_key  TEXT    NOT NULL DEFAULT ''
) STRICT;
INSERT INTO tlog_state (id, size, root, checkpoint, signed_at) VALUES (1, 0, X'', X'', 0);

ALTER TABLE games ADD COLUMN log_index INTEGER;
CREATE INDEX games_unlogged ON games (finished_at, id) WHERE finished_at IS NOT NULL AND log_index IS NULL;

-- +goose Down
DROP INDEX games_unlogged;
ALTER TABLE games DROP COLUMN log_index;
DROP TABLE tlog_state;
DROP TABLE tlog_hashes;
DROP TABLE tlog_leaves;
