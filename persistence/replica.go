package persistence

import (
	"context"
	"sync/atomic"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
)

// replica is the read pool of Config.ReadURL (a standby, or a pooler in
// front of standbys) and its counters. Reads that may come from it never
// show less than the primary had when the read began (read your writes):
// a game's events are read there only when the standby's games row has
// the version the primary's has (rows and events commit together, so the
// standby then has every event up to it), and a board only when the
// standby has replayed the primary's WAL up to the primary's position
// when asked. Otherwise the read goes to the primary.
type replica struct {
	db             *gorm.DB // nil without Config.ReadURL
	served, behind atomic.Int64
}

// ReadStats counts the reads that could go to the read replica
// (Config.ReadURL): Served by it, and Behind, sent to the primary
// because the replica had not yet replayed what the primary had (or did
// not answer). Both stay 0 without a replica.
type ReadStats struct {
	Served int64
	Behind int64
}

// ReadStats reports the read replica's counters.
func (s *Store) ReadStats() ReadStats {
	return ReadStats{Served: s.replica.served.Load(), Behind: s.replica.behind.Load()}
}

// replicaEvents reads game id's events after after (up to limit, 0: all)
// from the replica, if it has every event the primary has: ok false
// sends the caller to the primary (no replica, the replica behind or
// failing, an unknown game: the primary's answer is the one that counts).
func (s *Store) replicaEvents(ctx context.Context, id string, after, limit int) (recs []domain.RecordedEvent, version int, ok bool) {
	if s.replica.db == nil {
		return nil, 0, false
	}
	want, err := s.gameVersion(s.db.WithContext(ctx), id)
	if err != nil {
		return nil, 0, false
	}
	rdb := s.replica.db.WithContext(ctx)
	have, err := s.gameVersion(rdb, id)
	if err != nil || have < want {
		s.replica.behind.Add(1)
		return nil, 0, false
	}
	recs, err = readEvents(rdb, id, after, want, limit)
	if err != nil {
		s.replica.behind.Add(1)
		return nil, 0, false
	}
	s.replica.served.Add(1)
	return recs, want, true
}

// boardDB is where a board is read: the replica if it has replayed the
// primary's WAL up to the primary's position now (pg_current_wal_lsn on
// the primary, pg_last_wal_replay_lsn on the standby; a replica that is
// not in recovery, a primary itself, counts as caught up), else the
// primary.
func (s *Store) boardDB(ctx context.Context) *gorm.DB {
	if s.replica.db == nil {
		return s.db.WithContext(ctx)
	}
	var primaryLSN string
	if err := s.db.WithContext(ctx).Raw(`SELECT pg_current_wal_lsn()::text`).Row().Scan(&primaryLSN); err != nil {
		return s.db.WithContext(ctx)
	}
	rdb := s.replica.db.WithContext(ctx)
	var caughtUp bool
	err := rdb.Raw(`SELECT NOT pg_is_in_recovery() OR COALESCE(pg_last_wal_replay_lsn() >= ?::pg_lsn, false)`,
		primaryLSN).Row().Scan(&caughtUp)
	if err != nil || !caughtUp {
		s.replica.behind.Add(1)
		return s.db.WithContext(ctx)
	}
	s.replica.served.Add(1)
	return rdb
}
