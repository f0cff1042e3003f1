-- The event store: games are streams, events their
-- hash-chained log, snapshots cached states. All *_at columns are BIGINT
-- milliseconds since the Unix epoch, UTC.

-- +goose Up
CREATE TABLE players (
    id          TEXT   PRIMARY KEY,
    name        TEXT   NOT NULL,
    token_hash  BYTEA  NOT NULL UNIQUE,  -- SHA-256 of the bearer token
    created_at  BIGINT NOT NULL
);

CREATE TABLE games (
    id          TEXT    COLLATE "C" PRIMARY KEY, -- byte order, as SQLite: list cursors compare ids
    variant     TEXT    NOT NULL,
    rules       JSONB   NOT NULL,             -- domain.Rules as resolved
    options     JSONB   NOT NULL,             -- domain.Options as the client gave them
    owner       TEXT    NOT NULL,
    ranked      BOOLEAN NOT NULL,
    seed        TEXT    NOT NULL DEFAULT '0', -- uint64 in decimal: BIGINT cannot hold it
    has_seed    BOOLEAN NOT NULL,
    salt        BYTEA   NOT NULL,
    commitment  TEXT    NOT NULL,
    duel_id     TEXT    NOT NULL DEFAULT '',
    daily_date  TEXT    NOT NULL DEFAULT '',  -- "2006-01-02" or ''
    created_at  BIGINT  NOT NULL,
    -- projection of the state after event number version
    status      TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 1),
    moves       INTEGER NOT NULL,
    score       INTEGER,                      -- NULL for scoring none
    elapsed_ms  BIGINT  NOT NULL,
    finished_at BIGINT,                       -- NULL while in progress
    updated_at  BIGINT  NOT NULL
);

-- GET /v1/games: the caller's games, newest first (keyset on created_at, id).
CREATE INDEX games_owner_created ON games (owner, created_at DESC, id DESC);
-- Listings without an owner, same order.
CREATE INDEX games_created ON games (created_at DESC, id DESC);
-- Leaderboards and statistics per variant and outcome.
CREATE INDEX games_variant_status ON games (variant, status);
-- Duel standings.
CREATE INDEX games_duel ON games (duel_id) WHERE duel_id <> '';
-- One daily game per player, variant and day, even under racing requests.
CREATE UNIQUE INDEX games_daily_once ON games (owner, variant, daily_date) WHERE daily_date <> '';

CREATE TABLE events (
    position    BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- global order
    game_id     TEXT    NOT NULL REFERENCES games (id),
    version     INTEGER NOT NULL CHECK (version >= 1),
    type        TEXT    NOT NULL,
    payload     BYTEA   NOT NULL, -- exact bytes covered by hash; never JSONB
    occurred_at BIGINT  NOT NULL,
    prev_hash   BYTEA   NOT NULL,
    hash        BYTEA   NOT NULL,
    CONSTRAINT events_game_version UNIQUE (game_id, version)
);

CREATE TABLE snapshots (
    game_id     TEXT    NOT NULL REFERENCES games (id),
    version     INTEGER NOT NULL,
    format      INTEGER NOT NULL, -- encoding of state; other formats are ignored
    event_hash  BYTEA   NOT NULL, -- hash of event number version when taken
    state       BYTEA   NOT NULL, -- the snapshot document (persistence/snapshotcodec.go)
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (game_id, version)
);

CREATE TABLE idempotency_keys (
    owner       TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint BYTEA   NOT NULL,
    status      INTEGER NOT NULL,
    body        BYTEA   NOT NULL,
    created_at  BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (owner, key)
);

CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE snapshots;
DROP TABLE events;
DROP TABLE games;
DROP TABLE players;
