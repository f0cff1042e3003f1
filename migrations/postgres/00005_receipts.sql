-- Idempotency keys written with the events they answer: a move's or a
-- create's key is stored in the same transaction as its events, naming the
-- game and the versions it appended, so that a retry after a crash or a
-- lost answer finds it and is answered from the log (RELIABILITY.md "Outages").
-- Rows with game_id '' keep a whole response in body.
--
-- And a schema ready for Citus (docs/scaling.md): the events' primary key
-- includes the game, as every key of a table distributed by game must;
-- the global position stays an identity column, unique by construction,
-- with a plain index for readers in log order.
-- (00009 drops that index: no query reads events by position.)
--
-- Placement of every table, read by migrations/citus_test.go (see
-- migrations/README.md):
-- citus: players reference
-- citus: games distributed by id
-- citus: events distributed by game_id
-- citus: snapshots distributed by game_id
-- An Idempotency-Key is unique per player across all games (the key on
-- another game's path is 422 idempotency_key_reused), and a create's key is
-- looked up before its game exists, so the records live with their owner:
-- citus: idempotency_keys distributed by owner
-- citus: duels reference
-- citus: duel_seats reference
-- citus: daily_deals reference
-- The transparency log (00004) is one global, append-only sequence by
-- leaf index that one sequencer writes, not a per-game stream: under Citus
-- its tables stay whole on the coordinator (tlog_leaves' foreign key to
-- games then goes, docs/scaling.md):
-- citus: tlog_leaves reference
-- citus: tlog_hashes reference
-- citus: tlog_state reference
-- citus-exception: games_daily_once one daily game per player, variant and day spans games; under Citus it moves to a table distributed by owner

-- +goose Up
ALTER TABLE idempotency_keys ADD COLUMN game_id TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN first_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN last_version INTEGER NOT NULL DEFAULT 0;

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events DROP CONSTRAINT events_game_version;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (game_id, version);
CREATE INDEX events_position ON events (position);

-- +goose Down
DROP INDEX events_position;
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD CONSTRAINT events_game_version UNIQUE (game_id, version);
ALTER TABLE events ADD PRIMARY KEY (position);
ALTER TABLE idempotency_keys DROP COLUMN last_version;
ALTER TABLE idempotency_keys DROP COLUMN first_version;
ALTER TABLE idempotency_keys DROP COLUMN game_id;
