package runtime

import (
	"context"
	"encoding/json"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/tasks"
)

// Store is the store the runtime works on, for the reads a way in makes
// through the domain's interface (sessions, history, tasks, host links):
// a view with no method that writes. Writes go through the runtime's
// methods.
func (rt *Runtime) Store() sa.StoreReader { return rt.store }

// Config is the configuration the runtime was opened with (model prices,
// task limits as configured, the MCP server's settings).
func (rt *Runtime) Config() config.Config { return rt.engine.Config }

// WorkspaceDir is the directory the agents' tools work in.
func (rt *Runtime) WorkspaceDir() string { return rt.engine.Workspace.Dir() }

// RunnerID is the runner this process is registered as (the one the job
// queue knows it by too).
func (rt *Runtime) RunnerID() string { return rt.tasks.RunnerID() }

// SandboxWarning returns, for the user, what this system cannot enforce
// of the configured sandbox, or "" when it enforces all of it.
func (rt *Runtime) SandboxWarning() string { return rt.engine.SandboxWarning() }

// Profile returns the agent profile of a name (the default agent's for
// ""), or an error wrapping sa.ErrUnknownAgent that lists the ones there
// are.
func (as Agents) Profile(name string) (agents.Profile, error) { return as.rt.engine.Profile(name) }

// List are the agent profiles one can run, by name.
func (as Agents) List() []agents.Profile { return as.rt.engine.Agents.List() }

// Names are the names of the agent profiles, sorted.
func (as Agents) Names() []string { return as.rt.engine.Agents.Names() }

// Check reports whether a session could run a turn: its agent
// exists and its model's provider can be opened (a known provider, a key
// if it needs one). Ways in check before they create anything.
func (ss Sessions) Check(sess sa.Session) error { return ss.rt.engine.Check(sess) }

// Model is the model a session's next turn runs: the session's own,
// else its profile's, else the configured default.
func (ss Sessions) Model(sess sa.Session) (string, error) {
	profile, err := ss.rt.engine.Profile(sess.Agent)
	if err != nil {
		return "", err
	}
	return ss.rt.engine.ModelFor(sess, profile, ""), nil
}

// CheckModel reports whether a model string names a model that can run
// (a known provider, a key if it needs one).
func (as Agents) CheckModel(model string) error {
	_, _, err := as.rt.engine.Models.Open(model)
	return err
}

// From is a cursor on the change log from after the change with id
// after, for a way in that reads it at its own pace (Events is the same
// as a sequence).
func (es Events) From(after int64) *events.Cursor { return es.rt.bus.From(after) }

// Now is a cursor on the changes to come.
func (es Events) Now() *events.Cursor { return es.rt.bus.Now() }

// Sync has the cursors see every change committed so far, other
// processes' included, without waiting for the next poll.
func (es Events) Sync() { es.rt.bus.Sync() }

// CheckResumeAgent refuses an agent named with a resume of t unless it is
// t's own; no agent is fine.
func (ts Tasks) CheckResumeAgent(t sa.Task, agent string) error {
	return ts.rt.tasks.CheckResumeAgent(t, agent)
}

// Cancel stops a queued, running or resuming task: it ends as
// cancelled, with its notification.
func (ts Tasks) Cancel(ctx context.Context, ref string) (sa.Task, error) {
	return ts.rt.tasks.Cancel(ctx, ref)
}

// Clear cancels a session's active tasks and removes all its tasks
// from its listing (their sessions stay). It returns how many it
// cancelled and cleared, and the branches of their worktrees that were
// kept because they hold work.
func (ts Tasks) Clear(ctx context.Context, parentSessionID string) (cancelled, cleared int, kept []string, err error) {
	return ts.rt.tasks.Clear(ctx, parentSessionID)
}

// Output returns a task's state: a completed task's result (the task
// is then marked read), a running one's progress. With block it first
// waits until the task ends or timeout (sa.DefaultBlockTimeout when 0, at
// most sa.MaxBlockTimeout) passes.
func (ts Tasks) Output(ctx context.Context, ref string, block bool, timeout time.Duration) (sa.TaskOutput, error) {
	return ts.rt.tasks.Output(ctx, ref, block, timeout)
}

// List returns a session's tasks, newest first, optionally only
// those with one status.
func (ts Tasks) List(ctx context.Context, parentSessionID string, status sa.TaskStatus) ([]sa.Task, error) {
	return ts.rt.tasks.List(ctx, parentSessionID, status)
}

// Active is how many tasks of a session run in this process.
func (ts Tasks) Active(parentSessionID string) int { return ts.rt.tasks.Active(parentSessionID) }

// Wait waits until no task of a session is active, in this process
// or any other.
func (ts Tasks) Wait(ctx context.Context, parentSessionID string) error {
	return ts.rt.tasks.WaitIdle(ctx, parentSessionID)
}

// WaitLocal waits until no task of a session runs in this process:
// what a process that runs tasks itself waits for before it exits.
func (ts Tasks) WaitLocal(ctx context.Context, parentSessionID string) error {
	return ts.rt.tasks.WaitLocalIdle(ctx, parentSessionID)
}

// Depth is how many task launches separate a session from a session
// no task created (depth 0).
func (ts Tasks) Depth(ctx context.Context, sessionID string) (int, error) {
	return ts.rt.tasks.Depth(ctx, sessionID)
}

// Limits are the task limits in force (the configured ones, defaults
// filled in).
func (ts Tasks) Limits() config.Tasks { return ts.rt.tasks.Limits() }

// Reconcile ends, without a runtime, the active tasks whose runner is
// gone: commands that only read the store call it so that they never show
// a task of a dead process as running.
func Reconcile(ctx context.Context, st sa.Store) (int, error) { return tasks.Reconcile(ctx, st) }

// WithUserInput marks ctx as that of a launch whose launcher can answer
// the task's questions (an MCP client that declared the Tasks
// extension): the task launched in it may ask its user.
func WithUserInput(ctx context.Context) context.Context { return tasks.WithUserInput(ctx) }

// WithLauncher marks ctx as that of a launch made as a principal (see
// sa.Task.Launcher): the task launched in it records it.
func WithLauncher(ctx context.Context, launcher string) context.Context {
	return tasks.WithLauncher(ctx, launcher)
}

// Send tells an active task something while it works, wherever it runs:
// the answer to the question it waits on, if it asks one, else a message
// its session gets before its next model request. from says who sends
// it, in words the task's model reads. A task that has ended is refused
// with what can be done instead (a completed one is resumed). The caller
// checks that the task is the sender's, as for any other operation.
func (ts Tasks) Send(ctx context.Context, ref, from, text string) (sa.SendResult, error) {
	return ts.rt.tasks.Send(ctx, ref, from, text)
}

// Messages returns what was sent to a task, oldest first.
func (ts Tasks) Messages(ctx context.Context, taskID string) ([]sa.TaskMessage, error) {
	return ts.rt.tasks.Messages(ctx, taskID)
}

// Question is the oldest question an active task waits to have
// answered, "" when none.
func (ts Tasks) Question(ctx context.Context, taskID string) string {
	return ts.rt.tasks.Question(ctx, taskID)
}

// PendingInputs returns the questions a task's current run waits to have
// answered, oldest first (none once it has ended).
func (ts Tasks) PendingInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return ts.rt.tasks.PendingInputs(ctx, taskID)
}

// AnswerInputs stores a user's answers to a task's questions, by key, for
// its run to pick up wherever it runs. Keys not outstanding are ignored;
// a task that has ended is refused with a *sa.TaskEndedError.
func (ts Tasks) AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error) {
	return ts.rt.tasks.AnswerInputs(ctx, taskID, answers)
}
