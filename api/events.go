package api

import (
	"math"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
)

// ndjsonBatch is how many events one store read fetches while streaming.
const ndjsonBatch = 500

// events serves a game's log: a JSON page, or with Accept:
// application/x-ndjson every event after `after` streamed one per line.
//
//	@Summary		Read a game's events
//	@Description	The game's log, oldest first: a page of `limit` events after version `after`.
//	@Description	With `Accept: application/x-ndjson` the whole log after `after` is streamed instead, one Event per line (that media type is text; its x-itemSchema is the schema of one line).
//	@Description	Each event carries its hash chain links; in the NDJSON form data is the stored payload byte for byte (the JSON page may compact it), so the NDJSON export of a game that has ended is exactly what the offline tool verifies (`solitaire audit FILE`).
//	@Description	While the game is in progress its game_dealt event is redacted (RULES R6.4), so the chain verifies only once the game has ended. A game on a shared deal (a duel or a daily deal) stays redacted after it ends, until its competition closes (R6.6).
//	@Tags			games
//	@Produce		json
//	@Produce		application/x-ndjson
//	@Security		BearerAuth
//	@Param			id		path		string	true	"game id"
//	@Param			after	query		int		false	"only events with a higher version"	minimum(0)	default(0)
//	@Param			limit	query		int		false	"page size (JSON only)"	minimum(1)	maximum(500)	default(50)
//	@Success		200		{object}	EventPage
//	@Failure		400		{object}	Problem	"bad parameter"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		404		{object}	Problem	"no such game, or not yours"
//	@Failure		500		{object}	Problem
//	@ID		listEvents
//	@Router			/v1/games/{id}/events [get]
func (s *server) events(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	after, err := intQuery(c, "after", 0, 0, math.MaxInt32)
	if err != nil {
		return s.fail(c, err)
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return s.fail(c, err)
	}
	ctx := c.Request.Context()
	game, st, err := s.readable(ctx, playerOf(c).ID, id)
	if err != nil {
		return s.fail(c, err)
	}
	// Redaction follows the game read before the events: if it ends (or
	// its competition closes) in between, the page is redacted needlessly,
	// never the other way.
	reveal, _, err := s.cfg.Games.Reveal(ctx, game)
	if err != nil {
		return s.fail(c, err)
	}
	view := viewOf(reveal, st)
	if c.NegotiateFormat(mimeJSON, mimeNDJSON) == mimeNDJSON {
		s.streamEvents(c, id, after, view)
		return reply{} // written
	}
	recs, err := s.cfg.Games.Log(ctx, id, after, limit+1)
	if err != nil {
		return s.fail(c, err)
	}
	page := EventPage{Events: []Event{}}
	if len(recs) > limit {
		recs = recs[:limit]
		next := recs[len(recs)-1].Version
		page.NextAfter = &next
	}
	for _, r := range recs {
		page.Events = append(page.Events, newEvent(r, view))
	}
	return s.jsonReply(http.StatusOK, page)
}

// streamEvents writes every event after `after` as NDJSON, reading the
// store in batches. Once the first line is out the status is sent, so a
// later failure can only end the stream early (and is logged).
func (s *server) streamEvents(c *gin.Context, id string, after int, view logView) {
	ctx := c.Request.Context()
	w := c.Writer
	started := false
	for {
		recs, err := s.cfg.Games.Log(ctx, id, after, ndjsonBatch)
		if err != nil {
			if !started {
				s.write(c, s.fail(c, err))
				return
			}
			s.log.ErrorContext(ctx, "events stream cut short", "request_id", requestIDOf(c), "err", err)
			return
		}
		if !started {
			w.Header().Set("Content-Type", mimeNDJSON)
			w.WriteHeader(http.StatusOK)
			started = true
		}
		for _, r := range recs {
			line, err := newEvent(r, view).line()
			if err != nil {
				s.log.ErrorContext(ctx, "events stream cut short", "request_id", requestIDOf(c), "err", err)
				return
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return // the client went away
			}
			after = r.Version
		}
		w.Flush()
		if len(recs) < ndjsonBatch {
			return
		}
	}
}

// moveEvents renders the records a move appended (as Store.Append
// returned them, hashes included) as the game's events are rendered (view).
func moveEvents(recs []domain.RecordedEvent, view logView) []Event {
	out := make([]Event, 0, len(recs))
	for _, r := range recs {
		out = append(out, newEvent(r, view))
	}
	return out
}
