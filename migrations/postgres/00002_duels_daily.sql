-- Duels, daily deals, time limits and rankings. All *_at columns
-- are BIGINT milliseconds since the Unix epoch, UTC, as in 00001.

-- +goose Up

-- A same-deal duel (RULES R6.3): the secret seed and salt every joined game
-- is dealt from. seed and salt are revealed only once ended_at is set.
CREATE TABLE duels (
    id          TEXT    COLLATE "C" PRIMARY KEY,
    variant     TEXT    NOT NULL,
    rules       JSONB   NOT NULL,              -- domain.Rules as resolved
    options     JSONB   NOT NULL,              -- domain.Options as the creator gave them
    ranked      BOOLEAN NOT NULL,
    created_by  TEXT    NOT NULL,              -- player id
    seed        TEXT    NOT NULL,              -- uint64 in decimal
    salt        BYTEA   NOT NULL,              -- 32 bytes
    commitment  TEXT    NOT NULL,              -- domain.Commitment(deal, salt)
    created_at  BIGINT  NOT NULL,
    deadline_at BIGINT  NOT NULL,              -- joining closes; running games are resigned
    seats       INTEGER NOT NULL DEFAULT 0,    -- seats taken; bumped under the row lock by each join
    ended_at    BIGINT                         -- NULL until the duel has ended
);

-- The sweeper: duels past their deadline that have not ended.
CREATE INDEX duels_open_deadline ON duels (deadline_at) WHERE ended_at IS NULL;

-- A seat in a duel: taken (under the duel's row lock) before the game is
-- dealt, so a duel cannot end between the check and the deal. One per
-- player and duel. The seat's game is the games row with this duel_id and
-- owner.
CREATE TABLE duel_seats (
    duel_id   TEXT   NOT NULL REFERENCES duels (id),
    player    TEXT   NOT NULL,
    taken_at  BIGINT NOT NULL,
    PRIMARY KEY (duel_id, player)
);

-- The daily deal of a variant and UTC date: every player gets this seed and
-- salt. Created by the first player of the day (INSERT ... ON CONFLICT DO
-- NOTHING: racing first players agree on one row).
CREATE TABLE daily_deals (
    variant     TEXT   NOT NULL,
    day         TEXT   NOT NULL,               -- "2006-01-02", UTC
    seed        TEXT   NOT NULL,               -- uint64 in decimal
    salt        BYTEA  NOT NULL,
    commitment  TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (variant, day)
);

-- The draw count of a game (RULES R3: statistics and rankings are kept per
-- variant and draw), from its resolved rules.
ALTER TABLE games ADD COLUMN draw INTEGER GENERATED ALWAYS AS ((rules->>'draw')::integer) STORED;

-- When a game's time limit runs out (RULES R5.3): a limited clock starts at
-- creation (R5.2), so the deadline is created_at + time_limit_s seconds;
-- NULL without a limit. domain.State.Deadline computes the same.
ALTER TABLE games ADD COLUMN deadline_at BIGINT GENERATED ALWAYS AS (
    CASE WHEN (rules->>'time_limit_s')::bigint > 0
         THEN created_at + (rules->>'time_limit_s')::bigint * 1000 END) STORED;

-- The sweeper: games in progress past their deadline, earliest first.
CREATE INDEX games_due ON games (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;
-- The sweeper: daily games still running after their day.
CREATE INDEX games_daily_open ON games (daily_date) WHERE status = 'in_progress' AND daily_date <> '';
-- Leaderboards: ranked wins per variant and draw, by finishing time.
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
