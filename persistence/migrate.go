package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/openpatience/solitaire/migrations"
)

// migrate applies the pending migrations of the dialect's directory in
// package migrations with goose. On PostgreSQL with sessionLock an
// advisory session lock makes servers that start together apply them
// once; a transaction pooler cannot hold one (the lock would stay on
// whichever server connection took it), so behind one it is left out.
func migrate(ctx context.Context, db *sql.DB, dialect string, sessionLock bool, log *slog.Logger) error {
	sub, err := fs.Sub(migrations.FS, dialect)
	if err != nil {
		return fmt.Errorf("persistence: migrate: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSlog(log), goose.WithDisableGlobalRegistry(true)}
	gd := goose.DialectSQLite3
	if dialect == DialectPostgres {
		gd = goose.DialectPostgres
	}
	if dialect == DialectPostgres && sessionLock {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("persistence: migrate: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gd, db, sub, opts...)
	if err != nil {
		return fmt.Errorf("persistence: migrate: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("persistence: migrate: %w", err)
	}
	for _, r := range res {
		log.Info("persistence: migration applied", "dialect", dialect,
			"version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	return nil
}
