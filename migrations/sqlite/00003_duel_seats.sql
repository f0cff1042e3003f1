-- SQLite edition of postgres/00003_duel_seats.sql.
-- Duels with a number of seats (RULES R6.6): joining closes once max_players
-- seats are taken (or at the deadline), and the duel closes at its deadline
-- or once every seat holds a game that has ended. Duels made before this
-- migration get the default of two seats.

-- +goose Up
ALTER TABLE duels ADD COLUMN max_players INTEGER NOT NULL DEFAULT 2;

-- +goose Down
ALTER TABLE duels DROP COLUMN max_players;
