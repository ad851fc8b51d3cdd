package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// LockLive checks that a session is live.
func (tx *writeTx) LockLive(ctx context.Context, sessionID string) error {
	return requireLive(ctx, tx, sessionID)
}

// Lease reads the lease held on a session.
func (tx *writeTx) Lease(ctx context.Context, sessionID string) (sa.TurnLease, error) {
	return readLease(ctx, tx, sessionID)
}

// exists reports whether a query finds a row.
func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var one int
	return storekit.Found(q.QueryRowContext(ctx, query, args...).Scan(&one), sql.ErrNoRows)
}

// ReleaseTurn gives back a lease of a session held by a runner.
func (s *Store) ReleaseTurn(ctx context.Context, sessionID, runnerID string) error {
	err := s.inWrite(ctx, func(tx *writeTx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM turn_leases WHERE session_id = ? AND runner_id = ?`, sessionID, runnerID)
		return err
	})
	if err != nil {
		return fmt.Errorf("release the turn of session %s: %w", sa.ShortID(sessionID), err)
	}
	return nil
}

// Lease returns the lease held on a session.
func (s *Store) Lease(ctx context.Context, sessionID string) (sa.TurnLease, error) {
	return readLease(ctx, s.reader, sessionID)
}

func readLease(ctx context.Context, q querier, sessionID string) (sa.TurnLease, error) {
	var (
		l        sa.TurnLease
		acquired int64
	)
	err := q.QueryRowContext(ctx, `SELECT session_id, runner_id, holder, task_id, acquired_at FROM turn_leases WHERE session_id = ?`, sessionID).
		Scan(&l.SessionID, &l.RunnerID, &l.Holder, &l.TaskID, &acquired)
	if err := storekit.ReadError(err, sql.ErrNoRows, "lease of session", sessionID); err != nil {
		return sa.TurnLease{}, err
	}
	l.AcquiredAt = fromNanos(acquired)
	return l, nil
}
