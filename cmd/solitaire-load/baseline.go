package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// baselineSchema is the baseline's one table: a row per accepted request.
const baselineSchema = `CREATE TABLE IF NOT EXISTS baseline_moves (
	id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	game_id TEXT   NOT NULL,
	type    TEXT   NOT NULL,
	at      BIGINT NOT NULL
)`

// baselineMove is the body the baseline accepts: a move's type, as the
// product's move request has it.
type baselineMove struct {
	Type string `json:"type" binding:"required"`
}

// baselineHandler is the same-stack baseline of a move (compare): the
// cheapest honest HTTP API on the product's stack, gin and pgx, with no
// domain at all. POST /v1/games/{id}/moves with a bearer token (not
// looked up) and a JSON body with a type inserts one row in its own
// transaction (one commit per request) and answers 200 with the row's id;
// a body without a type is 400, a request without a token 401. It is the
// floor a move of the product is compared with (compare).
//
// With dbWork > 0 its statement first counts dbWork rows of
// generate_series in PostgreSQL, in the same statement and round trip:
// the handler's work stays the same (one more parameter, boxed once)
// while its statement takes longer (about 0.1 ms per 1,000 rows here),
// as a move's heavier statement does. compare -baseline-db-work measures
// with it whether a request's server CPU at one client grows with the
// time its statement takes.
func baselineHandler(pool *pgxpool.Pool, dbWork int) http.Handler {
	insert, args := baselineStatement(dbWork)
	var work any = dbWork
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST("/v1/games/:id/moves", func(c *gin.Context) {
		if len(c.GetHeader("Authorization")) < len("Bearer x") {
			c.JSON(http.StatusUnauthorized, gin.H{"code": "unauthorized"})
			return
		}
		var m baselineMove
		if err := c.ShouldBindJSON(&m); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"code": "invalid_body", "detail": err.Error()})
			return
		}
		var (
			id  int64
			row pgx.Row
		)
		if args == 4 {
			row = pool.QueryRow(c.Request.Context(), insert, c.Param("id"), m.Type, time.Now().UnixMilli(), work)
		} else { // the baseline's own call, unchanged by the option
			row = pool.QueryRow(c.Request.Context(), insert, c.Param("id"), m.Type, time.Now().UnixMilli())
		}
		err := row.Scan(&id)
		if err != nil {
			c.JSON(http.StatusServiceUnavailable, gin.H{"code": "database_unavailable"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"game_id": c.Param("id"), "id": id, "type": m.Type})
	})
	r.GET("/readyz", func(c *gin.Context) { c.Status(http.StatusOK) })
	return r
}

// baselineStatement is baselineHandler's statement for dbWork and how
// many of its arguments (game id, type, time in ms, dbWork) it takes.
func baselineStatement(dbWork int) (string, int) {
	if dbWork > 0 {
		return `INSERT INTO baseline_moves (game_id, type, at)
			SELECT $1, $2, $3 FROM (SELECT count(*) FROM generate_series(1, $4::integer)) AS work RETURNING id`, 4
	}
	return `INSERT INTO baseline_moves (game_id, type, at) VALUES ($1, $2, $3) RETURNING id`, 3
}

// maxDBWork bounds -db-work: a million rows take PostgreSQL about a
// tenth of a second, far past any move's statement.
const maxDBWork = 1_000_000

// runBaseline serves baselineHandler on addr (loopback only) with a pool
// of maxConns connections to dbURL until ctx is done; the table is made
// if missing. dbWork (0..maxDBWork) is baselineHandler's. listening is
// called with the bound address (nil: not).
func runBaseline(ctx context.Context, addr, dbURL string, maxConns, dbWork int, listening func(net.Addr)) error {
	if dbWork < 0 || dbWork > maxDBWork {
		return fmt.Errorf("db work %d: want 0..%d rows", dbWork, maxDBWork)
	}
	if err := loopbackPG(dbURL); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fmt.Errorf("addr %q: want a loopback host:port", addr)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(maxConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, baselineSchema); err != nil {
		return fmt.Errorf("baseline schema: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: baselineHandler(pool, dbWork), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil).WithAttrs(nil), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if listening != nil {
		listening(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
