package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
)

// leaseRetries bounds how often Lease looks again at a lease it may take
// over; leaseWait is how long it waits, each time, for an earlier run of
// the same task to give its session back.
const (
	leaseRetries = 50
	leaseWait    = 100 * time.Millisecond
)

// Lease takes a session's turn lease for this runner and returns the
// function that gives it back (once; later calls do nothing). A lease
// held by a runner that is gone (its process died, or it stopped beating)
// is reclaimed: that runner is removed, which frees its leases, and its
// tasks end as interrupted. A task's run (taskID set) waits briefly for
// an earlier run of the same task that is still ending here.
func (r *Runner) Lease(ctx context.Context, sessionID, holder, taskID string) (release func(), err error) {
	want := sa.TurnLease{SessionID: sessionID, RunnerID: r.self.ID, Holder: holder, TaskID: taskID}
	for attempt := 0; ; attempt++ {
		_, err := r.store.AcquireTurn(ctx, want)
		var busy *sa.BusyError
		if !errors.As(err, &busy) {
			if err != nil {
				return nil, err
			}
			return r.Releaser(ctx, sessionID), nil
		}
		if attempt >= leaseRetries {
			return nil, err
		}
		held := busy.Lease
		switch {
		case held.RunnerID != r.self.ID && !r.runnerAlive(ctx, held.RunnerID):
			// Reconcile removes the dead runner, and its leases with it.
			if _, rerr := r.Reconcile(ctx); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
		case taskID != "" && held.TaskID == taskID && held.RunnerID == r.self.ID:
			select {
			case <-time.After(leaseWait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		default:
			return nil, err
		}
	}
}

// Releaser returns the function that gives back this runner's lease of a
// session, once (later calls do nothing).
func (r *Runner) Releaser(ctx context.Context, sessionID string) func() {
	var once sync.Once
	return func() {
		once.Do(func() { _ = r.store.ReleaseTurn(context.WithoutCancel(ctx), sessionID, r.self.ID) })
	}
}
