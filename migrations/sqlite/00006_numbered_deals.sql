-- Numbered deals (RULES R6.7): the deal a game was created from, in
-- canonical form ("pysolfc:12345"), '' for every other game.

-- +goose Up
ALTER TABLE games ADD COLUMN deal TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE games DROP COLUMN deal;
