-- A move's statement does less work in PostgreSQL (BENCHMARKS.md "A move's
-- statement"):
--
-- games.draw and games.deadline_at become plain columns, written once by
-- the game's INSERT (persistence.Store.Create) with the values their
-- expressions give: the draw count of the rules, and created_at plus the
-- time limit in ms (NULL without one). PostgreSQL reads a STORED generated
-- column's expression again for every UPDATE of the row, even one that
-- leaves its inputs alone: on every move. rules and created_at never
-- change after the INSERT, so the values stay what the expressions give.
-- DROP EXPRESSION keeps every row's value and the indexes. draw becomes
-- NOT NULL (every rule set has a draw count), so that a server of an
-- older build, whose INSERT names neither column, fails to create a game
-- rather than leave one out of the boards and the expiry; stop servers of
-- older builds before one of this build starts.
--
-- events.game_id has no foreign key to games. Every event is written by a
-- statement that selects its games row under the version check
-- (persistence/batch.go) or by the transaction that inserts that row
-- (Create), and no games row is ever deleted, so an event cannot name a
-- game that does not exist; the key's check costs a row lock and a query
-- of its own on every insert. SQLite keeps its key: there the check is
-- one B-tree lookup in the same process.
--
-- events_position goes: no query reads events by position (every read is
-- a game's, by game_id and version, the primary key), and every insert
-- writes an entry to it. The identity column stays unique by
-- construction.

-- +goose Up
ALTER TABLE games ALTER COLUMN draw DROP EXPRESSION;
ALTER TABLE games ALTER COLUMN deadline_at DROP EXPRESSION;
ALTER TABLE games ALTER COLUMN draw SET NOT NULL;
ALTER TABLE events DROP CONSTRAINT events_game_id_fkey;
DROP INDEX events_position;

-- +goose Down
CREATE INDEX events_position ON events (position);
ALTER TABLE events ADD CONSTRAINT events_game_id_fkey FOREIGN KEY (game_id) REFERENCES games (id);
DROP INDEX games_leaderboard;
DROP INDEX games_due;
ALTER TABLE games DROP COLUMN deadline_at;
ALTER TABLE games DROP COLUMN draw;
ALTER TABLE games ADD COLUMN draw INTEGER GENERATED ALWAYS AS ((rules->>'draw')::integer) STORED;
ALTER TABLE games ADD COLUMN deadline_at BIGINT GENERATED ALWAYS AS (
    CASE WHEN (rules->>'time_limit_s')::bigint > 0
         THEN created_at + (rules->>'time_limit_s')::bigint * 1000 END) STORED;
CREATE INDEX games_due ON games (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;
CREATE INDEX games_leaderboard ON games (variant, draw, finished_at) WHERE ranked AND status = 'won';
