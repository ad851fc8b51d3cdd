// Package tasks is the background task manager: it launches sub-agents
// without blocking their parent, forks them with the parent's context,
// resumes finished ones, cancels, lists and reports them, and tells the
// parent when each one ends.
//
// The store is the source of truth: a task's status, progress and result
// are written there, every ending goes through Store.FinishTask (so the
// first ending wins and writes the one notification), and other processes
// learn of changes from the store's change log. A Manager runs the tasks
// it launches or resumes, or, with a Dispatch to a job queue shared by
// several nodes, those the queue hands it (Work); it registers as a
// runner and keeps itself marked alive, so that after a crash the tasks of
// a runner that is gone are ended as interrupted instead of being left
// running.
package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/config"
	"github.com/superagents/superagents/engine"
	"github.com/superagents/superagents/events"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/proc"
)

// Errors callers test for, besides the root package's ErrInvalid,
// ErrNotFound and ErrConflict.
// They are the root package's, which every way in speaks.
var (
	// ErrLimit: a configured limit refuses the request (spawn depth).
	ErrLimit = sa.ErrLimit
	// ErrExpired: the task's session was deleted, so it cannot go on.
	ErrExpired = sa.ErrExpired
	// ErrClosed: the manager is shutting down.
	ErrClosed = sa.ErrClosed
)

// Why a run's context was cancelled.
var (
	errCancelled   = errors.New("cancelled")
	errEndedAway   = errors.New("ended by another process")
	errShutdown    = errors.New("interrupted: superagents stopped before the task finished")
	errTimedOut    = errors.New("timed out")
	errInactive    = errors.New("inactive")
	errTaskEnded   = errors.New("task ended")
	interruptedMsg = "interrupted by restart: the process running it stopped before it finished"
)

// Defaults of the runner's liveness checks. Every heartbeat also
// reconciles, so a runner that stops beating is found dead, and its
// tasks ended, within StaleAfter plus one heartbeat: 25 s by default
// (one heartbeat when its process is seen to be gone).
const (
	DefaultHeartbeat  = 5 * time.Second
	DefaultStaleAfter = 20 * time.Second
	// cancelWait bounds how long Cancel waits for a run to stop.
	cancelWait = 30 * time.Second
	// defaultProgressDelay is how long after a change a run's progress
	// is stored: a task that ends sooner writes it once, with its ending.
	defaultProgressDelay = 200 * time.Millisecond
)

// Options configure a Manager.
type Options struct {
	Store  sa.Store
	Engine *engine.Engine
	Bus    *events.Bus
	Limits config.Tasks
	Fork   forkctx.Config
	// Heartbeat is how often the runner marks itself alive; a runner not
	// seen for StaleAfter is taken for dead.
	Heartbeat, StaleAfter time.Duration
	// Dispatch gets launched and resumed tasks run (nil: in this
	// process).
	Dispatch Dispatch
	// RunnerID is the id to register as (empty: a new one), for a
	// dispatch that names this process by it too.
	RunnerID string
	// WorktreeDir is where the worktrees of tasks launched with
	// isolation "worktree" are made (empty: inside the repository's git
	// directory).
	WorktreeDir string
}

// Manager runs background tasks. It is safe for concurrent use.
type Manager struct {
	// alive is when this runner last marked itself alive in the store
	// (Unix nanoseconds): a node takes no job on an older mark than a
	// heartbeat's (see Work).
	alive atomic.Int64

	store  sa.Store
	engine *engine.Engine
	bus    *events.Bus
	limits config.Tasks
	fork   *forkctx.Pipeline
	runner sa.Runner
	slots  chan struct{} // one per task allowed to run at once
	beat   time.Duration
	stale  time.Duration
	// progressDelay is how long after a change a run's progress is
	// stored (see saveProgressLater).
	progressDelay time.Duration
	// dispatch gets launched and resumed tasks run.
	dispatch Dispatch
	// worktrees is Options.WorktreeDir; gitMu makes this process's
	// changes to worktrees one at a time.
	worktrees string
	gitMu     sync.Mutex

	// budgets are the running totals of budgeted task trees.
	budgets budgetBook
	// notTasks are sessions known to be no task's (see readAncestry).
	notTasks notTasks

	mu       sync.Mutex
	runs     map[string]*run          // task id → its run in this process
	byParent map[string]int           // parent session → active runs here
	idle     map[string]chan struct{} // parent → closed when its runs reach 0
	closing  bool

	wg   sync.WaitGroup // runs
	stop chan struct{}  // background loops
	done sync.WaitGroup
}

// New registers a runner, ends the tasks of runners that are gone, and
// starts the manager's background loops.
func New(ctx context.Context, opts Options) (*Manager, error) {
	pipeline, err := forkctx.New(opts.Fork)
	if err != nil {
		return nil, fmt.Errorf("task manager: %w", err)
	}
	limits := opts.Limits
	if limits.Concurrency <= 0 {
		limits.Concurrency = config.DefaultTaskConcurrency
	}
	if limits.Timeout.Duration <= 0 {
		limits.Timeout.Duration = config.DefaultTaskTimeout
	}
	if limits.InactivityTimeout.Duration <= 0 {
		limits.InactivityTimeout.Duration = config.DefaultTaskInactivityTimeout
	}
	host, _ := os.Hostname()
	m := &Manager{
		store:         opts.Store,
		engine:        opts.Engine,
		bus:           opts.Bus,
		limits:        limits,
		fork:          pipeline,
		runner:        sa.Runner{ID: cmp.Or(opts.RunnerID, NewRunnerID()), Host: host, PID: os.Getpid()},
		slots:         make(chan struct{}, limits.Concurrency),
		beat:          cmpDuration(opts.Heartbeat, DefaultHeartbeat),
		stale:         cmpDuration(opts.StaleAfter, DefaultStaleAfter),
		progressDelay: defaultProgressDelay,
		worktrees:     opts.WorktreeDir,
		runs:          make(map[string]*run),
		byParent:      make(map[string]int),
		idle:          make(map[string]chan struct{}),
		stop:          make(chan struct{}),
	}
	m.dispatch = opts.Dispatch
	if m.dispatch == nil {
		m.dispatch = inProcess{m}
	}
	if err := m.store.RegisterRunner(ctx, m.runner); err != nil {
		return nil, fmt.Errorf("task manager: %w", err)
	}
	m.alive.Store(time.Now().UnixNano())
	if _, err := m.Reconcile(ctx); err != nil {
		m.store.RemoveRunner(context.WithoutCancel(ctx), m.runner.ID) //nolint:errcheck // best effort
		return nil, fmt.Errorf("task manager: %w", err)
	}
	m.done.Add(2)
	go m.heartbeat()
	go m.followEndings()
	return m, nil
}

// NewRunnerID makes a new runner id.
func NewRunnerID() string { return "runner-" + sa.NewID() }

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// RunnerID is this manager's runner.
func (m *Manager) RunnerID() string { return m.runner.ID }

// Limits are the task limits the manager applies, defaults filled in.
func (m *Manager) Limits() config.Tasks { return m.limits }

// Close stops the manager: running tasks are ended as interrupted (with
// their notifications), the loops stop and the runner is removed. It waits
// for the runs until ctx is done.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil
	}
	m.closing = true
	for _, r := range m.runs {
		r.cancel(errShutdown)
	}
	m.mu.Unlock()
	finished := make(chan struct{})
	go func() { m.wg.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = fmt.Errorf("task manager: runs still stopping: %w", ctx.Err())
	}
	close(m.stop)
	m.done.Wait()
	if rmErr := m.store.RemoveRunner(context.WithoutCancel(ctx), m.runner.ID); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// Active returns how many tasks of a parent session run in this manager.
func (m *Manager) Active(parentSessionID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byParent[parentSessionID]
}

// WaitIdle waits until no task of the parent session is active, in this
// process or any other: first for the runs here, then, following the
// change log, for those anywhere else (a node of a cluster, or a process
// that died and whose tasks a reconcile ends).
func (m *Manager) WaitIdle(ctx context.Context, parentSessionID string) error {
	if err := m.waitLocalIdle(ctx, parentSessionID); err != nil {
		return err
	}
	cursor := m.bus.Now() // before looking, so that no ending is missed
	for {
		active, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentSessionID, Active: true, IncludeCleared: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(active) == 0 {
			return nil
		}
		_, err = cursor.NextMatching(ctx, func(c sa.Change) bool { return EndsTask(c) && c.SessionID == parentSessionID })
		if err != nil {
			return err
		}
	}
}

// EndsTask reports whether a change ends a task (its session is the
// task's parent).
func EndsTask(c sa.Change) bool {
	switch c.Kind {
	case sa.ChangeTaskCancelled, sa.ChangeTaskError, sa.ChangeTaskCompleted:
		return true
	}
	return false
}

// WaitLocalIdle waits until no task of the parent session runs in this
// process (WaitIdle also waits for those other processes run): what a
// process that runs tasks itself waits for before it exits.
func (m *Manager) WaitLocalIdle(ctx context.Context, parentSessionID string) error {
	return m.waitLocalIdle(ctx, parentSessionID)
}

// waitLocalIdle waits until no task of the parent session runs in this
// manager.
func (m *Manager) waitLocalIdle(ctx context.Context, parentSessionID string) error {
	m.mu.Lock()
	if m.byParent[parentSessionID] == 0 {
		m.mu.Unlock()
		return nil
	}
	ch, ok := m.idle[parentSessionID]
	if !ok {
		ch = make(chan struct{})
		m.idle[parentSessionID] = ch
	}
	m.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// track records a run about to start.
func (m *Manager) track(r *run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return ErrClosed
	}
	m.runs[r.task.ID] = r
	m.byParent[r.task.ParentSessionID]++
	m.wg.Add(1)
	return nil
}

// untrack forgets a run that ended and, if it was its parent's last, says
// the parent is idle.
func (m *Manager) untrack(r *run) {
	m.mu.Lock()
	if m.runs[r.task.ID] == r { // a later resume may have taken the slot
		delete(m.runs, r.task.ID)
	}
	parent := r.task.ParentSessionID
	m.byParent[parent]--
	if m.byParent[parent] <= 0 {
		delete(m.byParent, parent)
		if ch, ok := m.idle[parent]; ok {
			close(ch)
			delete(m.idle, parent)
		}
	}
	m.mu.Unlock()
	close(r.done)
	m.wg.Done()
}

// heartbeat keeps the runner marked alive and, at each beat, ends the
// tasks of runners that died while this one runs (a reconcile is two
// reads when nobody died).
func (m *Manager) heartbeat() {
	defer m.done.Done()
	tick := time.NewTicker(m.beat)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		ctx := context.Background()
		_ = m.markAlive(ctx)
		_, _ = m.Reconcile(ctx)
	}
}

// markAlive marks the runner alive in the store, registering it again if
// another process took it for dead (a long pause?): its tasks were then
// ended and its runs told so.
func (m *Manager) markAlive(ctx context.Context) error {
	err := m.store.TouchRunner(ctx, m.runner.ID)
	if errors.Is(err, sa.ErrNotFound) {
		err = m.store.RegisterRunner(ctx, m.runner)
	}
	if err == nil {
		m.alive.Store(time.Now().UnixNano())
	}
	return err
}

// followEndings stops local runs whose task another process ended (a
// cancel from the command line, a reconcile that took this runner for
// dead).
func (m *Manager) followEndings() {
	defer m.done.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-m.stop; cancel() }()
	cursor := m.bus.Now()
	for {
		ch, err := cursor.Next(ctx)
		if err != nil {
			return
		}
		if ch.TaskID == "" {
			continue
		}
		if !EndsTask(ch) {
			continue
		}
		m.mu.Lock()
		r := m.runs[ch.TaskID]
		m.mu.Unlock()
		if r == nil || r.ending() {
			continue
		}
		// Only an ending of this very launch or resume stops it: the end
		// of an earlier resume may be read after a new one started.
		if ended, err := ch.Task(); err == nil && ended.ResumeCount == r.task.ResumeCount {
			r.cancel(errEndedAway)
		}
	}
}

// Reconcile ends the active tasks whose runner is gone, as interrupted,
// with their notifications. It returns how many it ended.
func (m *Manager) Reconcile(ctx context.Context) (int, error) {
	return reconcile(ctx, m.store, m.runner, m.stale)
}

// Reconcile ends, from outside any manager, the active tasks whose runner
// is gone, as Manager.Reconcile does: commands that only read the store
// call it so that they never show a task of a dead process as running.
func Reconcile(ctx context.Context, st sa.Store) (int, error) {
	host, _ := os.Hostname()
	return reconcile(ctx, st, sa.Runner{Host: host}, DefaultStaleAfter)
}

// reconcile ends the active tasks whose runner is gone; self (if it has an
// id) is alive, and runners on self's host are checked by process id.
//
// The active tasks are listed before the runners are read: a runner
// registers before it creates a task, so every listed task's runner is
// among those read after. Read the other way round, a process that
// registered and launched a task between the two reads would be taken
// for dead and its new task ended.
func reconcile(ctx context.Context, st sa.Store, self sa.Runner, stale time.Duration) (int, error) {
	active, err := st.ListTasks(ctx, sa.TaskFilter{Active: true, IncludeCleared: true})
	if err != nil {
		return 0, err
	}
	runners, err := st.Runners(ctx)
	if err != nil {
		return 0, err
	}
	alive := map[string]bool{}
	if self.ID != "" {
		alive[self.ID] = true
	}
	for _, r := range runners {
		if r.ID == self.ID {
			continue
		}
		if runnerAlive(r, self.Host, stale) {
			alive[r.ID] = true
		} else {
			_ = st.RemoveRunner(ctx, r.ID)
		}
	}
	ended := 0
	for _, t := range active {
		if alive[t.RunnerID] || t.RunnerID == QueueRunner {
			continue // a queued job is nobody's yet: the queue hands it out
		}
		_, err := finish(ctx, st, t.ID, sa.TaskError, "", interruptedMsg, func(cur *sa.Task) error {
			// Ended, or resumed by another runner, since it was listed:
			// what was judged of it no longer holds.
			if alive[cur.RunnerID] || cur.RunnerID != t.RunnerID || cur.ResumeCount != t.ResumeCount {
				return fmt.Errorf("%w: task %s has a live runner", sa.ErrConflict, cur.ID)
			}
			return nil
		}, nil)
		if err == nil {
			ended++
		}
	}
	return ended, nil
}

// runnerAlive: seen recently, and, on this machine, its process exists and
// is not a zombie (a killed process its parent has not reaped yet).
func runnerAlive(r sa.Runner, host string, stale time.Duration) bool {
	if time.Since(r.SeenAt) > stale {
		return false
	}
	if r.Host == host && r.PID > 0 {
		return proc.Alive(r.PID)
	}
	return true
}

// Depth returns how many task launches separate a session from a session
// no task created (which is depth 0).
func (m *Manager) Depth(ctx context.Context, sessionID string) (int, error) {
	chain, err := m.ancestry(ctx, sessionID)
	return len(chain), err
}
