// Package runtime is the one set of rules every way in (the chat, the HTTP
// API, the MCP server, the command line) goes through: it wires the store,
// the engine, the event bus and the task manager the same way for every
// command, and owns the operations on sessions (create, fork, clear,
// delete, append, run a turn) and on tasks.
//
// A write to a session — a turn, or an append or clear outside one — holds
// the session's turn lease, taken in the store (sa.TurnLease): one writer
// at a time per session, whichever process or way in asks, and a task's
// session is written only by that task. A lease whose runner died is
// reclaimed by the next one to ask.
package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/compact"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tools"
)

// Holders name the ways in, as leases and busy errors show them.
const (
	HolderChat = "chat"
	HolderHTTP = "http"
	HolderRun  = "run"
	HolderCLI  = "cli"
)

// Options say where the runtime finds its parts. The composition root
// (the command line, or a test) chooses them: the store, how tasks are
// dispatched, and the task tools the agents get.
type Options struct {
	Store  sa.Store
	Config config.Config
	// Workspace is the directory the agents' tools work in.
	Workspace string
	// AgentDirs are where agent profiles are loaded from.
	AgentDirs agents.Dirs
	// BashEnv is the environment bash commands start from (the process's
	// if nil).
	BashEnv []string
	// PrivatePaths are superagents' own files, which commands never
	// reach (nil: sandbox.PrivatePaths of the process's environment).
	PrivatePaths []string
	// PollInterval is how often the event bus looks for other processes'
	// writes (events.DefaultPollInterval when 0).
	PollInterval time.Duration
	// Heartbeat and StaleAfter tune the runner's liveness (tasks
	// defaults when 0).
	Heartbeat, StaleAfter time.Duration
	// WorktreeDir is where tasks isolated in git worktrees get them
	// (empty: inside their repository's git directory).
	WorktreeDir string
	// TaskTools makes, for the runtime being opened, the background-task
	// tools an agent's turn is offered (none when nil). It is called once
	// the runtime's parts exist, before any turn runs.
	TaskTools func(*Runtime) (ToolsFunc, error)
	// Queue, if set, runs the tasks this process launches or resumes
	// through a job queue that the nodes of a cluster share, instead of in
	// this process; RunnerID is then the id the queue knows this process
	// by (a new one when empty).
	Queue    Queue
	RunnerID string
	// ExtraTools, if set, adds tools from outside (the user's MCP servers)
	// to the agents' turns (see engine.Options.ExtraTools).
	ExtraTools func(ctx context.Context, patterns []string) ([]tools.Tool, error)
	// Instructions, if set, end every agent's system prompt (the
	// project's AGENTS.md files).
	Instructions string
}

// ToolsFunc returns the tools offered to a session for one turn.
type ToolsFunc func(ctx context.Context, sessionID string) ([]tools.Tool, error)

// Queue is a dispatch of tasks through a shared job queue: it is started
// with the task manager once that exists (a node works the queue's jobs
// with it), and stopped before the manager closes.
type Queue interface {
	tasks.Dispatch
	Start(ctx context.Context, m *tasks.Manager) error
	Stop(ctx context.Context) error
}

// Runtime is the engine, bus and task manager of one process, wired
// together: every operation a way in may do is one of its methods. It is
// safe for concurrent use.
type Runtime struct {
	store     sa.Store
	engine    *engine.Engine
	bus       *events.Bus
	tasks     *tasks.Manager
	queue     Queue     // nil: tasks run in this process
	taskTools ToolsFunc // set by Open, before any turn
}

// Open wires a runtime on a store: the engine (whose agents get the task
// tools), the event bus and the task manager, registered as a runner.
// Profile files that do not parse are returned as problems; the others
// load. The store stays the caller's to close.
func Open(ctx context.Context, opts Options) (rt *Runtime, problems []error, err error) {
	if opts.Store == nil {
		return nil, nil, errors.New("runtime: no store")
	}
	rt = &Runtime{store: opts.Store, queue: opts.Queue}
	eng, problems, err := engine.New(engine.Options{Store: opts.Store, Config: opts.Config, Workspace: opts.Workspace,
		AgentDirs: opts.AgentDirs, BashEnv: opts.BashEnv, PrivatePaths: opts.PrivatePaths, TaskTools: rt.turnTaskTools,
		ExtraTools: opts.ExtraTools, Instructions: opts.Instructions})
	if err != nil {
		return nil, nil, err
	}
	bus, err := events.New(ctx, opts.Store, events.Options{PollInterval: opts.PollInterval})
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	topts := tasks.Options{Store: opts.Store, Engine: eng, Bus: bus, Limits: opts.Config.Tasks, Fork: opts.Config.Fork,
		Heartbeat: cmp.Or(opts.Heartbeat, opts.Config.Tasks.Heartbeat.Duration), StaleAfter: cmp.Or(opts.StaleAfter, opts.Config.Tasks.StaleAfter.Duration),
		WorktreeDir: opts.WorktreeDir, RunnerID: opts.RunnerID}
	if opts.Queue != nil {
		topts.Dispatch = opts.Queue
	}
	mgr, err := tasks.New(ctx, topts)
	if err != nil {
		bus.Close()
		eng.Close()
		return nil, nil, err
	}
	rt.engine, rt.bus, rt.tasks = eng, bus, mgr
	if opts.TaskTools != nil {
		if rt.taskTools, err = opts.TaskTools(rt); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("task tools: %w", err), rt.Close(context.WithoutCancel(ctx)))
		}
	}
	if rt.queue != nil {
		if err := rt.queue.Start(ctx, mgr); err != nil {
			return nil, nil, errors.Join(err, rt.Close(context.WithoutCancel(ctx)))
		}
	}
	return rt, problems, nil
}

// turnTaskTools gives the engine the task tools of a session's turn.
func (rt *Runtime) turnTaskTools(ctx context.Context, sessionID string) ([]tools.Tool, error) {
	if rt.taskTools == nil {
		return nil, nil
	}
	return rt.taskTools(ctx, sessionID)
}

// Close stops the task manager (running tasks end as interrupted, their
// leases are given back), then the bus and the engine, waiting for the
// runs until ctx is done.
func (rt *Runtime) Close(ctx context.Context) error {
	var qerr error
	if rt.queue != nil {
		qerr = rt.queue.Stop(ctx) // no new jobs; the running ones drain
	}
	err := errors.Join(qerr, rt.tasks.Close(ctx))
	rt.bus.Close()
	return errors.Join(err, rt.engine.Close())
}

// TurnOptions adjust one turn a way in runs.
type TurnOptions struct {
	// Model overrides the session's model for this turn.
	Model string
	// OnEvent sees the turn as it happens.
	OnEvent func(sa.TurnEvent)
}

func (o TurnOptions) engine() engine.TurnOptions {
	return engine.TurnOptions{Model: o.Model, OnEvent: o.OnEvent}
}

// Turn is a session's turn lease, held: the session is this holder's to
// write to until End.
type Turn struct {
	rt      *Runtime
	session sa.Session
	release func()
}

// Begin takes a session's turn lease for holder. It fails with an error
// that wraps sa.ErrBusy while another turn runs there (in any process),
// and with a *sa.TaskSessionError on a task's session.
func (ss Sessions) Begin(ctx context.Context, sessionID, holder string) (*Turn, error) {
	sess, err := ss.rt.store.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	release, err := ss.rt.tasks.Runner().Lease(ctx, sessionID, holder, "")
	if err != nil {
		return nil, err
	}
	return &Turn{rt: ss.rt, session: sess, release: release}, nil
}

// Session is the session the turn holds, as it was when taken.
func (t *Turn) Session() sa.Session { return t.session }

// Run runs the agent: it stores input (usually the user's message) and
// runs the model until it ends its turn. It may be called again, for a
// wake, while the lease is held.
func (t *Turn) Run(ctx context.Context, opts TurnOptions, input ...sa.Message) (sa.TurnOutcome, error) {
	return t.rt.engine.Run(ctx, t.session.ID, opts.engine(), input...)
}

// Append stores messages in the session without running the model.
func (t *Turn) Append(ctx context.Context, msgs ...sa.Message) ([]sa.Message, error) {
	return t.rt.store.Append(ctx, t.session.ID, msgs...)
}

// End gives the lease back; calling it again does nothing.
func (t *Turn) End() { t.release() }

// CheckWritable refuses, with a *sa.TaskSessionError, a session that only
// its task may write to: ways in call it before they offer to write to a
// session (the lease refuses such writes anyway).
func (ss Sessions) CheckWritable(ctx context.Context, sessionID string) error {
	_, err := ss.rt.store.Task(ctx, sessionID)
	switch {
	case err == nil:
		return &sa.TaskSessionError{SessionID: sessionID}
	case errors.Is(err, sa.ErrNotFound):
		return nil
	}
	return err
}

// Send runs one turn of a session, lease held: input is stored, the model
// answers.
func (ss Sessions) Send(ctx context.Context, sessionID, holder string, opts TurnOptions, input ...sa.Message) (sa.TurnOutcome, error) {
	t, err := ss.rt.Sessions().Begin(ctx, sessionID, holder)
	if err != nil {
		return sa.TurnOutcome{}, err
	}
	defer t.End()
	return t.Run(ctx, opts, input...)
}

// Append stores messages at the end of a session, lease held, so that
// they never land in the middle of another's turn or in a task's session.
func (ss Sessions) Append(ctx context.Context, sessionID, holder string, msgs ...sa.Message) ([]sa.Message, error) {
	t, err := ss.rt.Sessions().Begin(ctx, sessionID, holder)
	if err != nil {
		return nil, err
	}
	defer t.End()
	return t.Append(ctx, msgs...)
}

// Clear starts a session's context over (forks keep what they inherited).
// extra messages are stored right after the clear, in the same write (a
// setting that must survive it, like the chat's /model).
func (ss Sessions) Clear(ctx context.Context, sessionID, holder string, extra ...sa.Message) (sa.Message, error) {
	stored, err := ss.rt.Sessions().Append(ctx, sessionID, holder, append([]sa.Message{sa.ClearMessage()}, extra...)...)
	if err != nil {
		return sa.Message{}, err
	}
	return stored[0], nil
}

// Create creates a root session after checking that it could run
// a turn (its agent exists, its model's provider opens).
func (ss Sessions) Create(ctx context.Context, ns sa.NewSession) (sa.Session, error) {
	profile, err := ss.rt.engine.Profile(ns.Agent)
	if err != nil {
		return sa.Session{}, err
	}
	ns.Agent = profile.Name
	if err := ss.rt.engine.Check(sa.Session{Agent: ns.Agent, Model: ns.Model}); err != nil {
		return sa.Session{}, err
	}
	return ss.rt.store.CreateSession(ctx, ns)
}

// Fork makes a child of a session that inherits its whole history (one
// row), with the record of where it came from stored in the same
// transaction. A fork needs no lease: it reads the parent as it is. An
// agent named for the child must exist.
func (ss Sessions) Fork(ctx context.Context, parentID string, opts sa.ForkOptions) (sa.Session, error) {
	if opts.Agent != "" {
		if _, err := ss.rt.engine.Profile(opts.Agent); err != nil {
			return sa.Session{}, err
		}
	}
	parent, err := ss.rt.store.Session(ctx, parentID)
	if err != nil {
		return sa.Session{}, err
	}
	opts.Title = cmp.Or(opts.Title, parent.Title)
	opts.Messages = append([]sa.Message{sa.ForkRecord(parent)}, opts.Messages...)
	return ss.rt.store.Fork(ctx, parent.ID, opts)
}

// Delete deletes a session; its active tasks end as cancelled. The
// session of a task that is still active is not deleted under it: the
// task is to be cancelled first.
func (ss Sessions) Delete(ctx context.Context, sessionID string) error {
	if t, err := ss.rt.store.Task(ctx, sessionID); err == nil && t.Status.Active() {
		return fmt.Errorf("%w: session %s is the session of task %s, which is %s: cancel the task first",
			sa.ErrConflict, sa.ShortID(sessionID), sa.ShortID(t.ID), t.Status)
	} else if err != nil && !errors.Is(err, sa.ErrNotFound) {
		return err
	}
	if err := ss.rt.store.DeleteSession(ctx, sessionID); err != nil {
		return err
	}
	// The deleted session's tasks are let go: their worktrees are removed
	// (the branches that hold work are kept). The session is gone either
	// way, so a worktree that could not be removed is only reported.
	if err := ss.rt.tasks.ReleaseWorktrees(ctx, sessionID); err != nil {
		return fmt.Errorf("session %s deleted, but %w", sa.ShortID(sessionID), err)
	}
	return nil
}

// Describe words a refusal for people, without the store's prefixes.
func Describe(err error) string {
	var busy *sa.BusyError
	var ts *sa.TaskSessionError
	switch {
	case errors.As(err, &busy):
		return busy.Error()
	case errors.As(err, &ts):
		return ts.Error()
	}
	return strings.TrimSpace(err.Error())
}

// Compact asks the session's model for a summary of its conversation and
// stores it (the compaction marker, then the summary), lease held: no turn
// starts while the summary is written. model, if set, overrides the
// session's model for the summary. A task's session compacts on its own.
func (ss Sessions) Compact(ctx context.Context, sessionID, holder, model, instructions string) (compact.Result, error) {
	t, err := ss.rt.Sessions().Begin(ctx, sessionID, holder)
	if err != nil {
		return compact.Result{}, err
	}
	defer t.End()
	loop, err := ss.rt.engine.Loop(ctx, t.session, engine.TurnOptions{Model: model})
	if err != nil {
		return compact.Result{}, err
	}
	return loop.Compactor().Compact(ctx, sessionID, instructions)
}
