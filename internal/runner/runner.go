// Package runner is a process's liveness as the store knows it: its
// registration as a runner, the heartbeat that keeps it marked alive, the
// turn leases it takes on sessions (reclaiming those of runners that are
// gone), and the clean-up after runners that died (Reconcile). The task
// manager and the runtime both take leases through it.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/proc"
)

// Defaults of the liveness checks. Every heartbeat also reconciles, so a
// runner that stops beating is found dead, and its tasks ended, within
// StaleAfter plus one heartbeat: 25 s by default (one heartbeat when its
// process is seen to be gone).
const (
	DefaultHeartbeat  = 5 * time.Second
	DefaultStaleAfter = 20 * time.Second
)

// Queue is the runner of a task that waits in a shared job queue: nobody's
// yet, so no reconcile ends it.
const Queue = "queue"

// Store is the part of the store a runner uses.
type Store interface {
	sa.Runners
	sa.Leases
	ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error)
}

// Interrupt ends an active task whose runner is gone, with its
// notification; check, run on the task as it is in the ending's
// transaction, refuses when what was judged of it no longer holds.
type Interrupt func(ctx context.Context, t sa.Task, check func(cur *sa.Task) error) error

// Options configure a Runner.
type Options struct {
	Store Store
	// ID is the id to register as (empty: a new one).
	ID string
	// Heartbeat is how often the runner marks itself alive; a runner not
	// seen for StaleAfter is taken for dead (defaults when 0).
	Heartbeat, StaleAfter time.Duration
	// Interrupt ends the tasks of runners found dead.
	Interrupt Interrupt
}

// Runner is this process, registered as a runner. It is safe for
// concurrent use.
type Runner struct {
	store     Store
	self      sa.Runner
	beat      time.Duration
	stale     time.Duration
	interrupt Interrupt
	// alive is when the runner last marked itself alive in the store
	// (Unix nanoseconds).
	alive atomic.Int64

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// NewID makes a new runner id.
func NewID() string { return "runner-" + sa.NewID() }

// Register records the runner in the store, ends the tasks of runners
// that are gone, and starts the heartbeat. Close stops it.
func Register(ctx context.Context, opts Options) (*Runner, error) {
	if opts.Store == nil || opts.Interrupt == nil {
		return nil, errors.New("runner: a store and an interrupt are needed")
	}
	host, _ := os.Hostname()
	id := opts.ID
	if id == "" {
		id = NewID()
	}
	r := &Runner{store: opts.Store, self: sa.Runner{ID: id, Host: host, PID: os.Getpid()},
		beat: orDefault(opts.Heartbeat, DefaultHeartbeat), stale: orDefault(opts.StaleAfter, DefaultStaleAfter),
		interrupt: opts.Interrupt, stop: make(chan struct{}), done: make(chan struct{})}
	if err := r.store.RegisterRunner(ctx, r.self); err != nil {
		return nil, fmt.Errorf("register runner: %w", err)
	}
	r.alive.Store(time.Now().UnixNano())
	if _, err := r.Reconcile(ctx); err != nil {
		r.store.RemoveRunner(context.WithoutCancel(ctx), r.self.ID) //nolint:errcheck // best effort
		return nil, fmt.Errorf("reconcile runners: %w", err)
	}
	go r.heartbeat()
	return r, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ID is the runner's id.
func (r *Runner) ID() string { return r.self.ID }

// Close stops the heartbeat and removes the runner, which frees the
// leases it still holds.
func (r *Runner) Close(ctx context.Context) error {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
	return r.store.RemoveRunner(context.WithoutCancel(ctx), r.self.ID)
}

// heartbeat keeps the runner marked alive and, at each beat, ends the
// tasks of runners that died while this one runs (a reconcile is two
// reads when nobody died).
func (r *Runner) heartbeat() {
	defer close(r.done)
	tick := time.NewTicker(r.beat)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		ctx := context.Background()
		_ = r.markAlive(ctx)
		_, _ = r.Reconcile(ctx)
	}
}

// markAlive marks the runner alive in the store, registering it again if
// another process took it for dead (a long pause?): its tasks were then
// ended and its runs told so.
func (r *Runner) markAlive(ctx context.Context) error {
	err := r.store.TouchRunner(ctx, r.self.ID)
	if errors.Is(err, sa.ErrNotFound) {
		err = r.store.RegisterRunner(ctx, r.self)
	}
	if err == nil {
		r.alive.Store(time.Now().UnixNano())
	}
	return err
}

// EnsureAlive makes sure the runner is registered before it takes work:
// after a long pause (no mark for longer than a heartbeat) another
// process may have taken it for dead and removed it. Marked within a
// heartbeat, it is known alive: no write.
func (r *Runner) EnsureAlive(ctx context.Context) error {
	if time.Since(time.Unix(0, r.alive.Load())) <= r.beat {
		return nil
	}
	return r.markAlive(ctx)
}

// Backdate sets when the runner last marked itself alive, as a process
// paused for a while would have it.
func (r *Runner) Backdate(at time.Time) { r.alive.Store(at.UnixNano()) }

// Alive: seen recently, and, on this machine, its process exists and is
// not a zombie (a killed process its parent has not reaped yet).
func Alive(r sa.Runner, host string, stale time.Duration) bool {
	if time.Since(r.SeenAt) > stale {
		return false
	}
	if r.Host == host && r.PID > 0 {
		return proc.Alive(r.PID)
	}
	return true
}

// alive reports whether a registered runner is alive, as Reconcile judges
// it; a runner no longer registered is not.
func (r *Runner) runnerAlive(ctx context.Context, id string) bool {
	runners, err := r.store.Runners(ctx)
	if err != nil {
		return true // cannot tell: do not take it for dead
	}
	for _, other := range runners {
		if other.ID == id {
			return Alive(other, r.self.Host, r.stale)
		}
	}
	return false
}
