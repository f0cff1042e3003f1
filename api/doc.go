// Package api is the HTTP layer of the solitaire server: the routes of
// openapi.yaml on a gin engine, JSON in and out, errors as RFC 9457 problem
// documents, bearer-token auth, If-Match and Idempotency-Key, request ids,
// access logs and Prometheus metrics.
//
// The package depends on the domain (the rules, app.Games) and on small
// interfaces it declares itself (IdempotencyStore, a readiness func), never
// on a database; cmd/solitaire-server wires persistence into it.
//
// The swag annotations on the handlers are the source of the OpenAPI
// description: `go generate ./docs` turns them into docs/swagger.json
// (Swagger 2.0), converts that to openapi.yaml (OpenAPI 3.0) and
// regenerates the Go client in clients/go.
//
// Status codes (the one mapping is problemFor in problem.go):
//
//   - 400 the request could not be read: malformed JSON, a wrong JSON type,
//     an unknown field, a field twice, a name in the wrong case, trailing
//     data, a missing required field, a string with a NUL or invalid UTF-8,
//     a bad query, path or header value.
//   - 401 no or an unknown bearer token (with WWW-Authenticate).
//   - 404 no such game, or not the caller's while it is in progress or
//     sealed (a shared deal before its competition closes, RULES R6.6); no
//     such duel; also unknown routes and states/{version} beyond the log; a
//     game without a leaf in the transparency log yet (not_logged), a tile
//     or tree size the log does not have.
//   - 403 a hint on a shared deal's game (hints_not_allowed, RULES R7.3),
//     an analysis of a shared deal's game before its competition closes
//     (game_sealed, R6.6).
//   - 405 a known path with another method (with Allow).
//   - 409 a move on a game that has ended (reason game_over, time_expired),
//     a write that lost a race (code conflict), a new game beyond the
//     player's bound of games in progress (too_many_games), a duel that
//     is full (duel_full) or takes nobody more (duel_ended), a second game in a duel or on a day's
//     daily deal (duel_already_joined, daily_already_played; Location names
//     the game), an analysis of a game in progress (game_in_progress).
//   - 412 If-Match names a version that is not the game's.
//   - 413 a body over the limit (64 KiB by default).
//   - 415 a body that is not application/json.
//   - 422 the request was read but the rules refuse it: an illegal move
//     (reason says why), an unknown variant, an option or layout the variant
//     does not accept, winnable with a seed, layout or deal, a reused
//     Idempotency-Key.
//   - 429 too many requests from a token, or from an address without one,
//     or new players from an address (rate_limited), or live streams open
//     (too_many_streams), or solver searches beyond the caller's share of
//     the solver pool (too_many_searches); with Retry-After (README
//     "Limits").
//   - 499 client_closed_request: the client left before the answer (its
//     connection closed). Nobody reads it; it tells such requests from
//     failures in the access log and the status metric. A move cut off so
//     may have been written: read the game.
//   - 500 anything else; the body says nothing but the request id.
//   - 503 the database is unavailable (database_unavailable, with
//     Retry-After): never a 500 for an outage. /readyz says not_ready.
//     Every solver worker is busy and the queue is full, or a search was
//     given up (solver_busy, with Retry-After).
//     Also deal_not_ready, with Retry-After: no proven winnable deal
//     (RULES R7.2) was ready within the supply's short wait; nothing was
//     written, and a retry later finds one.
//
// @title                      Solitaire server API
// @version                    1.0
// @description                Play, replay and read Klondike-family solitaire games over HTTP.
// @description                Errors are application/problem+json (RFC 9457) with a stable `code` and, for a rejected move, a stable `reason`.
// @description                Hidden information (face-down cards, stock order, seed) never leaves the server while a game is in progress.
// @license.name               MIT
// @license.url                https://github.com/openpatience/solitaire/blob/main/LICENSE
// @BasePath                   /
// @tag.name                   games
// @tag.description            Deal a game, play it move by move, read its state, its log (paged, as NDJSON, or live) and its audit.
// @tag.name                   players
// @tag.description            Register a player (and get a bearer token), read your own statistics and the leaderboards.
// @tag.name                   variants
// @tag.description            The rules table: every variant and the options a game of it may set.
// @tag.name                   duels
// @tag.description            Same-deal duels (RULES R6.3): every participant gets the same cards; the seed is revealed when the duel ends.
// @tag.name                   daily
// @tag.description            The daily deal of each variant and its standings.
// @tag.name                   log
// @tag.description            The transparency log of finished games: signed checkpoints, tiles, inclusion and consistency proofs.
// @tag.name                   solver
// @tag.description            The solver (RULES R7): whether a layout is winnable and a winning line; hints and the analysis of ended games are under games.
// @tag.name                   operations
// @tag.description            Probes, metrics, the OpenAPI description and the way to its documentation page; not limited by the API's rate limit (the probes have a per-address limit of their own).
// @tag.name                   documentation
// @tag.description            The documentation page: Swagger UI and its files, served by this server alone.
// @securityDefinitions.apikey BearerAuth
// @in                         header
// @name                       Authorization
// @description                A token from POST /v1/players, sent as `Authorization: Bearer <token>`.
package api
