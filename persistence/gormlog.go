package persistence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// slowQuery is the duration past which a statement is logged as a warning.
const slowQuery = 500 * time.Millisecond

// gormLogger sends gorm's messages to slog. Statements are logged at
// debug level as their text with placeholders, never with the values
// bound to them: those include seeds, salts, token hashes and deals, which
// no log may show (RULES R6.4; a log leaves the server). A slow statement
// is a warning without its text.
type gormLogger struct{ log *slog.Logger }

func newGormLogger(l *slog.Logger) logger.Interface { return gormLogger{l} }

// ParamsFilter drops a statement's values before gorm renders it for
// Trace (gorm.ParamsFilter, the hook of gorm's own ParameterizedQueries
// option): the text keeps its placeholders ($1, ?).
func (gormLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

var _ gorm.ParamsFilter = gormLogger{}

// gorm's Scan runs a query under its own recorder logger and hands the
// recorded text to ours; the recorder asks this filter, so its text too
// is without values. No other gorm user shares this process's gorm.
func init() {
	logger.RecorderParamsFilter = func(_ context.Context, sql string, _ ...any) (string, []any) {
		return sql, nil
	}
}

// LogMode is a no-op: the level is the slog handler's.
func (g gormLogger) LogMode(logger.LogLevel) logger.Interface { return g }

// Info logs at debug level: gorm's informational messages are noise here.
func (g gormLogger) Info(ctx context.Context, msg string, args ...any) {
	g.log.DebugContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Warn logs a gorm warning.
func (g gormLogger) Warn(ctx context.Context, msg string, args ...any) {
	g.log.WarnContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Error logs a gorm error.
func (g gormLogger) Error(ctx context.Context, msg string, args ...any) {
	g.log.ErrorContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Trace is called after every statement; see gormLogger.
func (g gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	d := time.Since(begin)
	if d >= slowQuery {
		g.log.WarnContext(ctx, "persistence: slow statement", "duration", d)
	}
	if !g.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	stmt, rows := fc()
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		g.log.DebugContext(ctx, "persistence: statement failed", "sql", stmt, "duration", d, "err", err)
		return
	}
	g.log.DebugContext(ctx, "persistence: statement", "sql", stmt, "rows", rows, "duration", d)
}
