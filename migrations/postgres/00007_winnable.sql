-- Winnable deals (RULES R7.2, R7.5): whether a game, a duel or a daily deal
-- was dealt from a deal the solver proved winnable; the winning line in its
-- canonical encoding (domain.EncodeLine), secret like the salt until the
-- deal may be revealed (R6.4, R6.6), '' for a random deal; the game's
-- commitment to it (domain.SolutionCommitment); and the deal's difficulty
-- band ('' for a random deal). Statistics and leaderboards filter games on
-- winnable.

-- +goose Up
ALTER TABLE games ADD COLUMN winnable BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE games ADD COLUMN solution TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN solution_commitment TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN difficulty TEXT NOT NULL DEFAULT '';
ALTER TABLE duels ADD COLUMN winnable BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE duels ADD COLUMN solution TEXT NOT NULL DEFAULT '';
ALTER TABLE duels ADD COLUMN difficulty TEXT NOT NULL DEFAULT '';
ALTER TABLE daily_deals ADD COLUMN winnable BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE daily_deals ADD COLUMN solution TEXT NOT NULL DEFAULT '';
ALTER TABLE daily_deals ADD COLUMN difficulty TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE daily_deals DROP COLUMN difficulty;
ALTER TABLE daily_deals DROP COLUMN solution;
ALTER TABLE daily_deals DROP COLUMN winnable;
ALTER TABLE duels DROP COLUMN difficulty;
ALTER TABLE duels DROP COLUMN solution;
ALTER TABLE duels DROP COLUMN winnable;
ALTER TABLE games DROP COLUMN difficulty;
ALTER TABLE games DROP COLUMN solution_commitment;
ALTER TABLE games DROP COLUMN solution;
ALTER TABLE games DROP COLUMN winnable;
