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

// PutLease writes a lease, replacing the one on its session.
func (tx *writeTx) PutLease(ctx context.Context, l sa.TurnLease) error {
	return tx.putLease(ctx, l, ` ON CONFLICT (session_id) DO UPDATE SET runner_id = excluded.runner_id,
		holder = excluded.holder, task_id = excluded.task_id, acquired_at = excluded.acquired_at`)
}

// InsertLease writes the lease of a task's run on its new session.
func (tx *writeTx) InsertLease(ctx context.Context, l sa.TurnLease) error {
	return tx.putLease(ctx, l, "")
}

func (tx *writeTx) putLease(ctx context.Context, l sa.TurnLease, onConflict string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO turn_leases (session_id, runner_id, holder, task_id, acquired_at)
		VALUES (?, ?, ?, ?, ?)`+onConflict, l.SessionID, l.RunnerID, l.Holder, l.TaskID, nanos(l.AcquiredAt))
	return err
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
