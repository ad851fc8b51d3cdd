package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
)

// AcquireTurn takes a session's turn lease, in one transaction: the
// session must be live, a task's session is taken only for that task, and
// a lease held by a runner that is no longer registered is taken over.
//
// The session's row is locked first (as Append locks it), so acquires of
// one session on any node run one after the other: each reads the lease
// the previous one committed.
func (s *Store) AcquireTurn(ctx context.Context, l sa.TurnLease) (sa.TurnLease, error) {
	if l.SessionID == "" || l.RunnerID == "" {
		return sa.TurnLease{}, fmt.Errorf("%w: a turn lease needs a session and a runner", sa.ErrInvalid)
	}
	if !storable(l.RunnerID) || !storable(l.TaskID) {
		return sa.TurnLease{}, fmt.Errorf("%w: a turn lease's runner and task ids are printable text", sa.ErrInvalid)
	}
	err := s.inWrite(ctx, func(tx *writeTx) error {
		if _, err := liveSession(ctx, tx, l.SessionID, lockAppend); err != nil {
			return err
		}
		if l.TaskID != l.SessionID {
			var one int
			err := tx.QueryRow(ctx, `SELECT 1 FROM tasks WHERE id = $1`, l.SessionID).Scan(&one)
			switch {
			case err == nil:
				return &sa.TaskSessionError{SessionID: l.SessionID}
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("read task %s: %w", l.SessionID, err)
			}
		}
		// A statement of its own, after the lock: read committed takes a
		// new snapshot for it, which sees the lease a previous holder of
		// the lock committed.
		held, err := readLease(ctx, tx, l.SessionID)
		switch {
		case err == nil:
			var alive int
			err := tx.QueryRow(ctx, `SELECT 1 FROM runners WHERE id = $1`, held.RunnerID).Scan(&alive)
			if err == nil {
				return &sa.BusyError{Lease: held}
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("read runner %s: %w", held.RunnerID, err)
			}
			// Its runner is gone: the lease is free.
		case !errors.Is(err, sa.ErrNotFound):
			return err
		}
		l.AcquiredAt = tx.now
		_, err = tx.Exec(ctx, `INSERT INTO turn_leases (session_id, runner_id, holder, task_id, acquired_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (session_id) DO UPDATE SET runner_id = excluded.runner_id, holder = excluded.holder,
				task_id = excluded.task_id, acquired_at = excluded.acquired_at`,
			l.SessionID, l.RunnerID, bin(l.Holder), l.TaskID, nanos(l.AcquiredAt))
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
	if !storable(sessionID) || !storable(runnerID) {
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
	if !storable(sessionID) {
		return sa.TurnLease{}, fmt.Errorf("lease of session %s: %w", sessionID, sa.ErrNotFound)
	}
	var (
		l        sa.TurnLease
		acquired int64
	)
	err := q.QueryRow(ctx, `SELECT session_id, runner_id, holder, task_id, acquired_at FROM turn_leases WHERE session_id = $1`, sessionID).
		Scan(&l.SessionID, &l.RunnerID, binTo{&l.Holder}, &l.TaskID, &acquired)
	if errors.Is(err, pgx.ErrNoRows) {
		return sa.TurnLease{}, fmt.Errorf("lease of session %s: %w", sessionID, sa.ErrNotFound)
	}
	if err != nil {
		return sa.TurnLease{}, fmt.Errorf("read lease of session %s: %w", sessionID, err)
	}
	l.AcquiredAt = fromNanos(acquired)
	return l, nil
}
