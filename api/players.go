package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// NewPlayer asks for a player: a display name of 1..64 characters, with
// at least one visible character and no control or format characters
// (validName).
type NewPlayer struct {
	Name string `json:"name" minLength:"1" maxLength:"64" example:"Ada"`
} // @name NewPlayer

// PlayerCreated is a new player and its bearer token. The token is shown
// only here, once: the server keeps only its SHA-256.
type PlayerCreated struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Token string `json:"token" example:"3q2-7wAAAAC…"`
} // @name PlayerCreated

// tokenBytes is the size of a bearer token before base64url: 32 random
// bytes, 43 characters.
const tokenBytes = 32

// hashToken is what the store keeps of a token: its SHA-256.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// validName reports whether name may be a display name: 1..64
// characters, valid UTF-8, no control characters (Cc), no format
// characters (Cf: zero-width spaces, bidirectional overrides) but the
// zero-width joiner and the tag characters of emoji sequences and flags,
// and at least one visible character (visible). Names appear on shared
// standings, where an invisible name, or one whose text a bidirectional
// override shows reversed, would pass itself off as another player's.
func validName(name string) bool {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > 64 {
		return false
	}
	seen := false
	for _, r := range name {
		switch {
		case r == utf8.RuneError || unicode.IsControl(r):
			return false
		case unicode.Is(unicode.Cf, r) && r != '\u200d' && (r < 0xe0020 || r > 0xe007f):
			return false
		}
		seen = seen || visible(r)
	}
	return seen
}

// visible reports whether r shows as a mark of its own: a letter, digit,
// punctuation or symbol that Unicode does not call ignorable (the Hangul
// fillers are letters that show nothing) and not the blank Braille
// pattern. Spaces, combining marks and variation selectors alone show
// nothing, or only on another character.
func visible(r rune) bool {
	return unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S) &&
		!unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) && r != '\u2800'
}

// createPlayer registers a player and returns its token.
//
//	@Summary		Create a player
//	@Description	Registers a player and returns its bearer token, once. Needs no auth.
//	@Tags			players
//	@Accept			json
//	@Produce		json
//	@Param			player	body		NewPlayer	true	"the player"
//	@Success		201		{object}	PlayerCreated
//	@Failure		400		{object}	Problem	"malformed body, or no name"
//	@Failure		413		{object}	Problem	"body too large"
//	@Failure		415		{object}	Problem	"body not JSON"
//	@Failure		422		{object}	Problem	"invalid name"
//	@Failure		500		{object}	Problem
//	@ID		createPlayer
//	@Router			/v1/players [post]
func (s *server) createPlayer(c *gin.Context) reply {
	var req NewPlayer
	if err := s.readJSON(c, &req); err != nil {
		return s.fail(c, err)
	}
	if req.Name == "" {
		return s.fail(c, invalidBody("name", "name is required"))
	}
	if !validName(req.Name) {
		return s.fail(c, badField("name", "name must be 1..64 characters, at least one of them visible, without control or format characters"))
	}
	var raw [tokenBytes + 16]byte
	if _, err := io.ReadFull(s.cfg.Random, raw[:]); err != nil {
		return s.fail(c, err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw[:tokenBytes])
	p := &app.Player{ID: hex.EncodeToString(raw[tokenBytes:]), Name: req.Name, TokenHash: hashToken(token),
		CreatedAt: domain.Millis(s.now())}
	if err := s.cfg.Players.CreatePlayer(c.Request.Context(), p); err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusCreated, PlayerCreated{ID: p.ID, Name: p.Name, Token: token})
}

// auth requires a valid bearer token (BearerAuth in openapi.yaml) and keeps the player
// in the context. Missing or unknown tokens get 401 with WWW-Authenticate
// (RFC 6750 §3).
func (s *server) auth(c *gin.Context) {
	const challenge = `Bearer realm="solitaire"`
	scheme, token, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		r := s.fail(c, &requestError{status: http.StatusUnauthorized, code: CodeUnauthorized,
			param: "Authorization", detail: "send Authorization: Bearer <token>; POST /v1/players gives a token"})
		s.write(c, r.with("WWW-Authenticate", challenge))
		c.Abort()
		return
	}
	p, err := s.cfg.Players.PlayerByTokenHash(c.Request.Context(), hashToken(strings.TrimSpace(token)))
	if errors.Is(err, domain.ErrNotFound) {
		r := s.fail(c, &requestError{status: http.StatusUnauthorized, code: CodeUnauthorized,
			param: "Authorization", detail: "the bearer token is not valid"})
		s.write(c, r.with("WWW-Authenticate", challenge+`, error="invalid_token"`))
		c.Abort()
		return
	}
	if err != nil {
		s.write(c, s.fail(c, err))
		c.Abort()
		return
	}
	c.Set(ctxPlayer, p)
	c.Next()
}

// playerOf is the authenticated player, nil before auth.
func playerOf(c *gin.Context) *app.Player {
	p, _ := c.Get(ctxPlayer)
	pl, _ := p.(*app.Player)
	return pl
}
