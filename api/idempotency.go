package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// IdempotencyKeyHeader names the retry key of a POST (RELIABILITY.md
// "Outages").
const IdempotencyKeyHeader = "Idempotency-Key"

// maxIdempotencyKey is the longest key accepted, in bytes.
const maxIdempotencyKey = 255

// IdempotencyTTL is how long a kept response is replayed (README "Limits":
// 24 h).
const IdempotencyTTL = 24 * time.Hour

// IdempotencyStore keeps responses by (owner, key) (app.IdempotencyRecord;
// the record's Fingerprint here is the SHA-256 of the request's method, path
// and body, and Body a kept reply, opaque to the store). persistence.Store
// implements it.
type IdempotencyStore interface {
	// GetIdempotency returns the record of (owner, key) that has not
	// expired at now, or domain.ErrNotFound.
	GetIdempotency(ctx context.Context, owner, key string, now time.Time) (*app.IdempotencyRecord, error)
	// PutIdempotency stores r; domain.ErrConflict if (owner, key) exists.
	PutIdempotency(ctx context.Context, r app.IdempotencyRecord) error
}

// kept is what a record's Body holds: the reply, headers included, so a
// replay is the same response byte for byte.
type kept struct {
	ContentType string            `json:"content_type"`
	Header      map[string]string `json:"header,omitempty"`
	Body        []byte            `json:"body"` // exact bytes (base64 in JSON)
}

// replayedHeaders are the reply headers a replay repeats.
var replayedHeaders = []string{"ETag", "Location"}

// fingerprint identifies a request for Idempotency-Key: SHA-256 of the
// method, the path and the body, separated by newlines.
func fingerprint(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + "\n" + path + "\n"))
	h.Write(body)
	return h.Sum(nil)
}

// keepable reports whether a reply is final for its request and so is
// kept: successes, and refusals that depend only on the body or on a game
// that has ended. Not kept: server errors, lost races (409 conflict) and
// 412, which depends on If-Match, a header outside the fingerprint; a retry
// of those runs again.
func keepable(r reply) bool {
	switch {
	case r.status >= 200 && r.status < 300:
		return true
	case r.status == http.StatusBadRequest, r.status == http.StatusUnprocessableEntity:
		return r.code != CodeIdempotencyKeyReused
	case r.status == http.StatusConflict:
		return r.code == CodeIllegalMove
	}
	return false
}

// idempotent runs a POST handler under the retry rule of an
// Idempotency-Key, a retry with the same key and request gets the first
// answer again without running the handler (so nothing is appended
// twice); the same key with another request gets 422
// idempotency_key_reused.
//
// A handler whose effect is one write through app.Games (a move, a
// game's creation) passes the request's app.Receipt to it
// (receiptOf): the store writes the key with the events, in the same
// transaction, so no crash or lost connection can leave a move applied
// and its key unwritten, and a retry is answered from the log. Any other
// keepable reply (a refusal, or a handler that writes otherwise) is
// stored after it. Requests with the same key are serialized in this
// process; across processes the store's unique key decides which request
// is written.
func (s *server) idempotent(h func(c *gin.Context, body []byte) reply) gin.HandlerFunc {
	return s.keyed(h, false)
}

// idempotentWrite is idempotent for a handler whose every effect is one
// write through app.Games that carries the receipt (receiptOf):
// it runs the handler first and looks the key up only when that write did
// not go through, so a keyed move costs no query more than one without a
// key. That is as safe as looking first: a write that commits has stored
// the receipt, so no request with the key was written before it (a write
// whose key is taken fails, app.ErrReceiptTaken, and writes nothing);
// any other answer is replaced by the stored one if the key has a record.
func (s *server) idempotentWrite(h func(c *gin.Context, body []byte) reply) gin.HandlerFunc {
	return s.keyed(h, true)
}

// keyed is idempotent (optimistic false) and idempotentWrite (true).
func (s *server) keyed(h func(c *gin.Context, body []byte) reply, optimistic bool) gin.HandlerFunc {
	return s.handle(func(c *gin.Context) reply {
		body, err := s.readBody(c)
		if err != nil {
			return s.fail(c, err)
		}
		keys, sent := c.Request.Header[http.CanonicalHeaderKey(IdempotencyKeyHeader)]
		if !sent {
			return h(c, body)
		}
		if len(keys) != 1 || keys[0] == "" || len(keys[0]) > maxIdempotencyKey || !validText(keys[0]) {
			return s.fail(c, badParam(IdempotencyKeyHeader, "Idempotency-Key must be one value of 1..255 characters"))
		}
		key, owner := keys[0], playerOf(c).ID
		fp := fingerprint(c.Request.Method, c.Request.URL.Path, body)
		unlock := s.locks.lock(owner + "\x00" + key)
		defer unlock()

		ctx := c.Request.Context()
		lookUp := func() (reply, bool) {
			rec, err := s.cfg.Idempotency.GetIdempotency(ctx, owner, key, s.now())
			switch {
			case err == nil:
				return s.replay(c, rec, fp), true
			case !errors.Is(err, domain.ErrNotFound):
				return s.fail(c, err), true
			}
			return reply{}, false
		}
		if !optimistic {
			if r, found := lookUp(); found {
				return r
			}
		}

		now := domain.Millis(s.now())
		receipt := &app.Receipt{Owner: owner, Key: key, Fingerprint: fp, CreatedAt: now, ExpiresAt: now.Add(IdempotencyTTL)}
		c.Set(ctxReceipt, receipt)
		r := h(c, body)
		if _, written := c.Get(ctxReceiptPassed); written && r.status >= 200 && r.status < 300 {
			return r // the receipt went in with the write (or r replays the key's record)
		}
		if optimistic {
			if r, found := lookUp(); found {
				return r
			}
		}
		if !keepable(r) {
			return r
		}
		k := kept{ContentType: r.contentType, Body: r.body}
		for _, name := range replayedHeaders {
			if v := r.get(name); v != "" {
				if k.Header == nil {
					k.Header = map[string]string{}
				}
				k.Header[name] = v
			}
		}
		stored, err := json.Marshal(k)
		if err == nil {
			err = s.cfg.Idempotency.PutIdempotency(ctx, app.IdempotencyRecord{Owner: owner, Key: key, Fingerprint: fp,
				Status: r.status, Body: stored, CreatedAt: now, ExpiresAt: now.Add(IdempotencyTTL)})
		}
		if err != nil && !errors.Is(err, domain.ErrConflict) {
			// Nothing was appended (a refusal) or the handler wrote on its
			// own; only a retry's replay is lost. Answer it.
			s.log.ErrorContext(ctx, "keeping idempotent response", "request_id", requestIDOf(c), "err", err)
		}
		return r
	})
}

// Gin context keys of the receipt of a request's Idempotency-Key: set by
// idempotent; ctxReceiptPassed once a handler has passed it to its write.
const (
	ctxReceipt       = "solitaire.receipt"
	ctxReceiptPassed = "solitaire.receipt_passed"
)

// receiptOf is the receipt of request c's Idempotency-Key, nil if it sent
// none, for the one write through app.Games that is the request's
// effect (app.Games.Play's receipt, app.NewGame.Receipt); taking it
// marks it passed.
func receiptOf(c *gin.Context) *app.Receipt {
	v, ok := c.Get(ctxReceipt)
	if !ok {
		return nil
	}
	c.Set(ctxReceiptPassed, true)
	return v.(*app.Receipt)
}

// replayKey answers a request whose write found its receipt's key taken
// (app.ErrReceiptTaken: another process wrote a request with the same
// key first) with what that key's record says.
func (s *server) replayKey(c *gin.Context) reply {
	r, _ := c.Get(ctxReceipt)
	receipt, _ := r.(*app.Receipt)
	if receipt == nil { // only for a bug: without a receipt nothing is taken
		return s.fail(c, errors.New("api: receipt taken, but the request sent none"))
	}
	rec, err := s.cfg.Idempotency.GetIdempotency(c.Request.Context(), receipt.Owner, receipt.Key, s.now())
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) { // expired in between: a lost race, to be retried
			err = domain.ErrConflict
		}
		return s.fail(c, err)
	}
	return s.replay(c, rec, receipt.Fingerprint)
}

// replay answers with a kept reply, if rec is of the request fingerprinted
// fp (else 422 idempotency_key_reused).
func (s *server) replay(c *gin.Context, rec *app.IdempotencyRecord, fp []byte) reply {
	if !bytes.Equal(rec.Fingerprint, fp) {
		return s.fail(c, &requestError{status: http.StatusUnprocessableEntity, code: CodeIdempotencyKeyReused,
			param: IdempotencyKeyHeader, detail: "this Idempotency-Key was used with another request"})
	}
	if rec.GameID != "" {
		return s.replayFromLog(c, rec).with("Idempotent-Replayed", "true")
	}
	var k kept
	if err := json.Unmarshal(rec.Body, &k); err != nil {
		return s.fail(c, err)
	}
	r := reply{status: rec.Status, contentType: k.ContentType, body: k.Body}
	for name, v := range k.Header {
		r = r.with(name, v)
	}
	if k.ContentType == mimeProblem {
		var p Problem
		if json.Unmarshal(k.Body, &p) == nil {
			r.code = p.Code
		}
	}
	return r.with("Idempotent-Replayed", "true")
}

// replayFromLog renders again the answer to the request whose receipt rec
// is: the game as it was after rec.LastVersion, and for a move the events
// it appended, exactly as moveReply and createReply rendered them the first
// time (they depend only on the log up to that version).
func (s *server) replayFromLog(c *gin.Context, rec *app.IdempotencyRecord) reply {
	ctx := c.Request.Context()
	g, st, err := s.cfg.Games.StateAt(ctx, rec.Owner, rec.GameID, rec.LastVersion)
	if err != nil {
		return s.fail(c, err)
	}
	if rec.FirstVersion == 1 {
		return s.createReply(c, g, st)
	}
	n := rec.LastVersion - rec.FirstVersion + 1
	recs, err := s.cfg.Games.Log(ctx, rec.GameID, rec.FirstVersion-1, n)
	if err == nil && len(recs) != n {
		err = fmt.Errorf("api: game %s: %d events of versions %d..%d in the log", rec.GameID, len(recs), rec.FirstVersion, rec.LastVersion)
	}
	if err != nil {
		return s.fail(c, err)
	}
	return s.moveReply(c, g, st, recs, false)
}

// keyLocks serializes requests that share an idempotency key.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes the lock of key and returns its release.
func (l *keyLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}
