package storekit

import (
	"context"
	"errors"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// LeaseTx is what a store's write transaction offers AcquireTurn, each in
// the store's SQL.
type LeaseTx interface {
	// LockLive checks that a session is live, holding it (where the store
	// locks rows) so that writes of it on any process go one at a time.
	LockLive(ctx context.Context, sessionID string) error
	// IsTask reports whether id is a task's id (and so its session's).
	IsTask(ctx context.Context, id string) (bool, error)
	// Lease reads the lease held on a session (ErrNotFound when none is).
	Lease(ctx context.Context, sessionID string) (sa.TurnLease, error)
	// RunnerRegistered reports whether a runner is still registered.
	RunnerRegistered(ctx context.Context, id string) (bool, error)
	// PutLease writes a lease, replacing the one on its session if
	// replace is set.
	PutLease(ctx context.Context, l sa.TurnLease, replace bool) error
}

// CheckTurnLease refuses a lease request without a session and a runner,
// or with ids no store can hold.
func CheckTurnLease(l sa.TurnLease) error {
	if l.SessionID == "" || l.RunnerID == "" {
		return fmt.Errorf("%w: a turn lease needs a session and a runner", sa.ErrInvalid)
	}
	if !Storable(l.RunnerID) || !Storable(l.TaskID) {
		return fmt.Errorf("%w: a turn lease's runner and task ids are printable text", sa.ErrInvalid)
	}
	return nil
}

// acquireTurn takes a session's turn lease in tx: the session must be
// live, a task's session is taken only for that task, a lease held by a
// registered runner refuses (BusyError), and one whose runner is gone is
// taken over.
func acquireTurn(ctx context.Context, tx LeaseTx, l sa.TurnLease, now time.Time) (sa.TurnLease, error) {
	if err := tx.LockLive(ctx, l.SessionID); err != nil {
		return sa.TurnLease{}, err
	}
	if l.TaskID != l.SessionID {
		isTask, err := tx.IsTask(ctx, l.SessionID)
		if err != nil {
			return sa.TurnLease{}, fmt.Errorf("read task %s: %w", l.SessionID, err)
		}
		if isTask {
			return sa.TurnLease{}, &sa.TaskSessionError{SessionID: l.SessionID}
		}
	}
	held, err := tx.Lease(ctx, l.SessionID)
	switch {
	case err == nil:
		alive, err := tx.RunnerRegistered(ctx, held.RunnerID)
		if err != nil {
			return sa.TurnLease{}, fmt.Errorf("read runner %s: %w", held.RunnerID, err)
		}
		if alive {
			return sa.TurnLease{}, &sa.BusyError{Lease: held}
		}
		// Its runner is gone: the lease is free.
	case !errors.Is(err, sa.ErrNotFound):
		return sa.TurnLease{}, err
	}
	l.AcquiredAt = now
	if err := tx.PutLease(ctx, l, true); err != nil {
		return sa.TurnLease{}, fmt.Errorf("write lease: %w", err)
	}
	return l, nil
}

// TurnError is the error AcquireTurn's caller gets: refusals as they are
// (they name the session), other failures saying which turn was taken.
func TurnError(sessionID string, err error) error {
	var busy *sa.BusyError
	var taskSession *sa.TaskSessionError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &busy), errors.As(err, &taskSession), errors.Is(err, sa.ErrNotFound):
		return err
	}
	return fmt.Errorf("take the turn of session %s: %w", sa.ShortID(sessionID), err)
}
