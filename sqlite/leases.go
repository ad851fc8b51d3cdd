package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sa "github.com/superagents/superagents"
)

// AcquireTurn takes a session's turn lease, in one write transaction: the
// session must be live, a task's session is taken only for that task, and
// a lease held by a runner that is no longer registered is taken over.
func (s *Store) AcquireTurn(ctx context.Context, l sa.TurnLease) (sa.TurnLease, error) {
	if l.SessionID == "" || l.RunnerID == "" {
		return sa.TurnLease{}, fmt.Errorf("%w: a turn lease needs a session and a runner", sa.ErrInvalid)
	}
	err := s.inWrite(ctx, func(tx *writeTx) error {
		if err := requireLive(ctx, tx, l.SessionID); err != nil {
			return err
		}
		if l.TaskID != l.SessionID {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, l.SessionID).Scan(&one)
			switch {
			case err == nil:
				return &sa.TaskSessionError{SessionID: l.SessionID}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("read task %s: %w", l.SessionID, err)
			}
		}
		held, err := readLease(ctx, tx, l.SessionID)
		switch {
		case err == nil:
			var alive int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM runners WHERE id = ?`, held.RunnerID).Scan(&alive)
			if err == nil {
				return &sa.BusyError{Lease: held}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read runner %s: %w", held.RunnerID, err)
			}
			// Its runner is gone: the lease is free.
		case !errors.Is(err, sa.ErrNotFound):
			return err
		}
		l.AcquiredAt = tx.now
		_, err = tx.ExecContext(ctx, `INSERT INTO turn_leases (session_id, runner_id, holder, task_id, acquired_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET runner_id = excluded.runner_id, holder = excluded.holder,
				task_id = excluded.task_id, acquired_at = excluded.acquired_at`,
			l.SessionID, l.RunnerID, l.Holder, l.TaskID, nanos(l.AcquiredAt))
		if err != nil {
			return fmt.Errorf("write lease: %w", err)
		}
		return nil
	})
	var busy *sa.BusyError
	var taskSession *sa.TaskSessionError
	switch {
	case errors.As(err, &busy), errors.As(err, &taskSession), errors.Is(err, sa.ErrNotFound):
		return sa.TurnLease{}, err // they name the session already
	case err != nil:
		return sa.TurnLease{}, fmt.Errorf("take the turn of session %s: %w", sa.ShortID(l.SessionID), err)
	}
	return l, nil
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

// releaseTaskLease gives back the lease a task's run holds on its session
// (see sa.Tasks.FinishTask).
func releaseTaskLease(ctx context.Context, tx *writeTx, taskID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM turn_leases WHERE session_id = ? AND task_id = ?`, taskID, taskID); err != nil {
		return fmt.Errorf("release the task's lease: %w", err)
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
	if errors.Is(err, sql.ErrNoRows) {
		return sa.TurnLease{}, fmt.Errorf("lease of session %s: %w", sessionID, sa.ErrNotFound)
	}
	if err != nil {
		return sa.TurnLease{}, fmt.Errorf("read lease of session %s: %w", sessionID, err)
	}
	l.AcquiredAt = fromNanos(acquired)
	return l, nil
}
