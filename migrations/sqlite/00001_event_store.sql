-- The event store, SQLite edition of
-- postgres/00001_event_store.sql: same tables, columns and constraints.
-- All *_at columns are INTEGER milliseconds since the Unix epoch, UTC.
-- STRICT tables make SQLite check column types as PostgreSQL does.

-- +goose Up
CREATE TABLE players (
    id          TEXT    PRIMARY KEY NOT NULL,
    name        TEXT    NOT NULL,
    token_hash  BLOB    NOT NULL UNIQUE,  -- SHA-256 of the bearer token
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE games (
    id          TEXT    PRIMARY KEY NOT NULL,
    variant     TEXT    NOT NULL,
    rules       TEXT    NOT NULL,             -- JSON of domain.Rules as resolved
    options     TEXT    NOT NULL,             -- JSON of domain.Options as given
    owner       TEXT    NOT NULL,
    ranked      INTEGER NOT NULL,             -- 0 or 1
    seed        TEXT    NOT NULL DEFAULT '0', -- uint64 in decimal: INTEGER is signed 64-bit
    has_seed    INTEGER NOT NULL,             -- 0 or 1
    salt        BLOB    NOT NULL,
    commitment  TEXT    NOT NULL,
    duel_id     TEXT    NOT NULL DEFAULT '',
    daily_date  TEXT    NOT NULL DEFAULT '',  -- "2006-01-02" or ''
    created_at  INTEGER NOT NULL,
    -- projection of the state after event number version
    status      TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 1),
    moves       INTEGER NOT NULL,
    score       INTEGER,                      -- NULL for scoring none
    elapsed_ms  INTEGER NOT NULL,
    finished_at INTEGER,                      -- NULL while in progress
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX games_owner_created ON games (owner, created_at DESC, id DESC);
CREATE INDEX games_created ON games (created_at DESC, id DESC);
CREATE INDEX games_variant_status ON games (variant, status);
CREATE INDEX games_duel ON games (duel_id) WHERE duel_id <> '';
CREATE UNIQUE INDEX games_daily_once ON games (owner, variant, daily_date) WHERE daily_date <> '';

CREATE TABLE events (
    position    INTEGER PRIMARY KEY AUTOINCREMENT, -- global order, never reused
    game_id     TEXT    NOT NULL REFERENCES games (id),
    version     INTEGER NOT NULL CHECK (version >= 1),
    type        TEXT    NOT NULL,
    payload     BLOB    NOT NULL, -- exact bytes covered by hash
    occurred_at INTEGER NOT NULL,
    prev_hash   BLOB    NOT NULL,
    hash        BLOB    NOT NULL,
    CONSTRAINT events_game_version UNIQUE (game_id, version)
) STRICT;

CREATE TABLE snapshots (
    game_id     TEXT    NOT NULL REFERENCES games (id),
    version     INTEGER NOT NULL,
    format      INTEGER NOT NULL,
    event_hash  BLOB    NOT NULL,
    state       BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (game_id, version)
) STRICT;

CREATE TABLE idempotency_keys (
    owner       TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint BLOB    NOT NULL,
    status      INTEGER NOT NULL,
    body        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
) STRICT;

CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE snapshots;
DROP TABLE events;
DROP TABLE games;
DROP TABLE players;
