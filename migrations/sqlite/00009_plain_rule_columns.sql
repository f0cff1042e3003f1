-- games.draw and games.deadline_at become plain columns, written once by
-- the game's INSERT (persistence.Store.Create) with the values their
-- expressions give, as on PostgreSQL (postgres/00009_plain_rule_columns.sql
-- says why), so that both databases take the same INSERT. SQLite cannot
-- drop a generated column's expression: the indexes on them go, the
-- columns are made again and filled from the same expressions, and the
-- indexes come back. events.game_id keeps its foreign key here. draw stays
-- nullable: SQLite cannot add a NOT NULL column without a default, and one
-- process owns the file, so no server of an older build writes beside it.

-- +goose Up
DROP INDEX games_leaderboard;
DROP INDEX games_due;
ALTER TABLE games DROP COLUMN deadline_at;
ALTER TABLE games DROP COLUMN draw;
ALTER TABLE games ADD COLUMN draw INTEGER;
ALTER TABLE games ADD COLUMN deadline_at INTEGER;
UPDATE games SET draw = json_extract(rules, '$.draw'),
    deadline_at = CASE WHEN json_extract(rules, '$.time_limit_s') > 0
                       THEN created_at + json_extract(rules, '$.time_limit_s') * 1000 END;
CREATE INDEX games_due ON games (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;
CREATE INDEX games_leaderboard ON games (variant, draw, finished_at) WHERE ranked AND status = 'won';

-- +goose Down
DROP INDEX games_leaderboard;
DROP INDEX games_due;
ALTER TABLE games DROP COLUMN deadline_at;
ALTER TABLE games DROP COLUMN draw;
ALTER TABLE games ADD COLUMN draw INTEGER GENERATED ALWAYS AS (json_extract(rules, '$.draw')) VIRTUAL;
ALTER TABLE games ADD COLUMN deadline_at INTEGER GENERATED ALWAYS AS (
    CASE WHEN json_extract(rules, '$.time_limit_s') > 0
         THEN created_at + json_extract(rules, '$.time_limit_s') * 1000 END) VIRTUAL;
CREATE INDEX games_due ON games (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;
CREATE INDEX games_leaderboard ON games (variant, draw, finished_at) WHERE ranked AND status = 'won';
