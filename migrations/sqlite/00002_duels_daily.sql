-- Duels, daily deals, time limits and rankings, SQLite edition of
-- postgres/00002_duels_daily.sql: same tables, columns and indexes. The
-- generated columns are VIRTUAL here (SQLite adds no STORED column to an
-- existing table); they are computed on read and indexed all the same.

-- +goose Up
CREATE TABLE duels (
    id          TEXT    PRIMARY KEY NOT NULL,
    variant     TEXT    NOT NULL,
    rules       TEXT    NOT NULL,              -- JSON of domain.Rules as resolved
    options     TEXT    NOT NULL,              -- JSON of domain.Options as given
    ranked      INTEGER NOT NULL,              -- 0 or 1
    created_by  TEXT    NOT NULL,
    seed        TEXT    NOT NULL,              -- uint64 in decimal
    salt        BLOB    NOT NULL,
    commitment  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    deadline_at INTEGER NOT NULL,
    seats       INTEGER NOT NULL DEFAULT 0,
    ended_at    INTEGER
) STRICT;

CREATE INDEX duels_open_deadline ON duels (deadline_at) WHERE ended_at IS NULL;

CREATE TABLE duel_seats (
    duel_id   TEXT    NOT NULL REFERENCES duels (id),
    player    TEXT    NOT NULL,
    taken_at  INTEGER NOT NULL,
    PRIMARY KEY (duel_id, player)
) STRICT;

CREATE TABLE daily_deals (
    variant     TEXT    NOT NULL,
    day         TEXT    NOT NULL,
    seed        TEXT    NOT NULL,
    salt        BLOB    NOT NULL,
    commitment  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (variant, day)
) STRICT;

ALTER TABLE games ADD COLUMN draw INTEGER GENERATED ALWAYS AS (json_extract(rules, '$.draw')) VIRTUAL;

ALTER TABLE games ADD COLUMN deadline_at INTEGER GENERATED ALWAYS AS (
    CASE WHEN json_extract(rules, '$.time_limit_s') > 0
         THEN created_at + json_extract(rules, '$.time_limit_s') * 1000 END) VIRTUAL;

CREATE INDEX games_due ON games (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;
CREATE INDEX games_daily_open ON games (daily_date) WHERE status = 'in_progress' AND daily_date <> '';
CREATE INDEX games_leaderboard ON games (variant, draw, finished_at) WHERE ranked AND status = 'won';

-- +goose Down
DROP INDEX games_leaderboard;
DROP INDEX games_daily_open;
DROP INDEX games_due;
ALTER TABLE games DROP COLUMN deadline_at;
ALTER TABLE games DROP COLUMN draw;
DROP TABLE daily_deals;
DROP TABLE duel_seats;
DROP TABLE duels;
