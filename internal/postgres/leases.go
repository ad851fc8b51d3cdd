package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// LockLive checks that a session is live, locking its row as Append does.
func (tx *writeTx) LockLive(ctx context.Context, sessionID string) error {
	_, err := liveSession(ctx, tx, sessionID, lockAppend)
	return err
}

// Lease reads the lease held on a session. A statement of its own, after
// the session's lock: read committed takes a new snapshot for it, which
// sees the lease a previous holder of the lock committed.
func (tx *writeTx) Lease(ctx context.Context, sessionID string) (sa.TurnLease, error) {
	return readLease(ctx, tx, sessionID)
}

// ReleaseTurn gives back a lease of a session held by a runner.
func (s *Store) ReleaseTurn(ctx context.Context, sessionID, runnerID string) error {
	if !storekit.Storable(sessionID) || !storekit.Storable(runnerID) {
		return nil // no such lease can be stored
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM turn_leases WHERE session_id = $1 AND runner_id = $2`, sessionID, runnerID); err != nil {
		return fmt.Errorf("release the turn of session %s: %w", sa.ShortID(sessionID), err)
	}
	return nil
}

// Lease returns the lease held on a session.
func (s *Store) Lease(ctx context.Context, sessionID string) (sa.TurnLease, error) {
	return readLease(ctx, s.pool, sessionID)
}

func readLease(ctx context.Context, q querier, sessionID string) (sa.TurnLease, error) {
	if !storekit.Storable(sessionID) {
		return sa.TurnLease{}, fmt.Errorf("lease of session %s: %w", sessionID, sa.ErrNotFound)
	}
	var (
		l        sa.TurnLease
		acquired int64
	)
	err := q.QueryRow(ctx, `SELECT session_id, runner_id, holder, task_id, acquired_at FROM turn_leases WHERE session_id = $1`, sessionID).
		Scan(&l.SessionID, &l.RunnerID, binTo{&l.Holder}, &l.TaskID, &acquired)
	if err := storekit.ReadError(err, pgx.ErrNoRows, "lease of session", sessionID); err != nil {
		return sa.TurnLease{}, err
	}
	l.AcquiredAt = fromNanos(acquired)
	return l, nil
}
