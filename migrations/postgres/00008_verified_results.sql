-- Results a board may show (docs/transparency.md "Boards"): each leaf's
-- result as the replayed log gives it (status, score, moves, events, the
-- end and the playing time, ms), written with the leaf; a games row that
-- records another result than its leaf counts on no board. Leaves made
-- before this migration take the result of their games row as it is now.
-- games.flagged_at: when the sequencer found the row differing from its
-- replayed log, or its log not replaying, or the re-check found the row
-- changed after its leaf (ms); NULL otherwise.

-- +goose Up
ALTER TABLE tlog_leaves ADD COLUMN status TEXT;
ALTER TABLE tlog_leaves ADD COLUMN score INTEGER;
ALTER TABLE tlog_leaves ADD COLUMN moves INTEGER;
ALTER TABLE tlog_leaves ADD COLUMN events INTEGER;
ALTER TABLE tlog_leaves ADD COLUMN ended_at BIGINT;
ALTER TABLE tlog_leaves ADD COLUMN elapsed_ms BIGINT;
UPDATE tlog_leaves SET
    status = (SELECT g.status FROM games g WHERE g.id = tlog_leaves.game_id),
    score = (SELECT g.score FROM games g WHERE g.id = tlog_leaves.game_id),
    moves = (SELECT g.moves FROM games g WHERE g.id = tlog_leaves.game_id),
    events = (SELECT g.version FROM games g WHERE g.id = tlog_leaves.game_id),
    ended_at = (SELECT g.finished_at FROM games g WHERE g.id = tlog_leaves.game_id),
    elapsed_ms = (SELECT g.elapsed_ms FROM games g WHERE g.id = tlog_leaves.game_id);
ALTER TABLE games ADD COLUMN flagged_at BIGINT;

-- +goose Down
ALTER TABLE games DROP COLUMN flagged_at;
ALTER TABLE tlog_leaves DROP COLUMN elapsed_ms;
ALTER TABLE tlog_leaves DROP COLUMN ended_at;
ALTER TABLE tlog_leaves DROP COLUMN events;
ALTER TABLE tlog_leaves DROP COLUMN moves;
ALTER TABLE tlog_leaves DROP COLUMN score;
ALTER TABLE tlog_leaves DROP COLUMN status;
