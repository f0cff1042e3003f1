-- Idempotency keys written with the events they answer: a move's or a
-- create's key is stored in the same transaction as its events, naming the
-- game and the versions it appended, so that a retry after a crash or a
-- lost answer finds it and is answered from the log (RELIABILITY.md "Outages").
-- Rows with game_id '' keep a whole response in body.

-- +goose Up
ALTER TABLE idempotency_keys ADD COLUMN game_id TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN first_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN last_version INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN last_version;
ALTER TABLE idempotency_keys DROP COLUMN first_version;
ALTER TABLE idempotency_keys DROP COLUMN game_id;
