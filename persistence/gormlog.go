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

// gormLogger sends gorm's messages to slog. Statements with their values
// (which may include secret seeds and token hashes) are logged only at
// debug level; a slow statement is a warning without its text.
type gormLogger struct{ log *slog.Logger }

func newGormLogger(l *slog.Logger) logger.Interface { return gormLogger{l} }

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
