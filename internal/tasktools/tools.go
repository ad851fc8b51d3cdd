// Package tasktools is the background tasks as the model and the MCP
// server see them: the superagents_* tools (their inputs, descriptions
// and replies), the views of tasks every way in shows to programs, and
// the words of their answers. It works over the runtime: the engine's
// agents get these tools through runtime.Options.TaskTools, and the ways
// in (the chat, the HTTP API, the MCP server, the commands) use the same
// replies and views.
package tasktools

import (
	"context"
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tools"
)

// TaskInput is the input of superagents_task.
type TaskInput struct {
	Description string  `json:"description,omitempty" jsonschema:"A short name for the task (3-7 words), shown in listings and notifications. Required unless resume is set."`
	Prompt      string  `json:"prompt" jsonschema:"The complete instructions for the sub-agent: what to do, where, and what to report back. It does not see your conversation unless fork is true. With resume: the follow-up message."`
	Agent       string  `json:"agent,omitempty" jsonschema:"The agent to run (see the tool description for the available ones). Required unless resume is set."`
	Fork        bool    `json:"fork,omitempty" jsonschema:"Give the sub-agent a digest of this conversation (long tool outputs cut, your reasoning left out), so you need not repeat what you already know. Cannot be combined with resume."`
	Resume      string  `json:"resume,omitempty" jsonschema:"The id of a completed task to continue with prompt as a follow-up, in that task's own session (it keeps its whole conversation). Cannot be combined with fork."`
	Timeout     int64   `json:"timeout,omitempty" jsonschema:"Stop the task after this many seconds (default and maximum: the configured task timeout)."`
	MaxCost     float64 `json:"max_cost,omitempty" jsonschema:"Stop the task once it and the tasks it launches have cost this many dollars (at most the configured tasks.max_cost and what is left of your own budget). Needs a model with a price."`
	MaxTokens   int64   `json:"max_tokens,omitempty" jsonschema:"Stop the task once it and the tasks it launches have used this many tokens, input, output and cache together (at most the configured tasks.max_tokens and what is left of your own budget)."`
	Isolation   string  `json:"isolation,omitempty" jsonschema:"worktree: the sub-agent works in a git worktree of its own, on a branch named after the task, made from the workspace's current HEAD, so that tasks running at once never overwrite each other's files or the user's; its result names the branch and the files it changed. Leave it out for the agent's default (usually the workspace itself). Only with a launch."`
}

// OutputInput is the input of superagents_output.
type OutputInput struct {
	TaskID  string `json:"task_id" jsonschema:"The task id, or a unique prefix of at least 4 characters."`
	Block   bool   `json:"block,omitempty" jsonschema:"Wait until the task ends (or the timeout passes) before answering. Without it the answer is immediate."`
	Timeout int    `json:"timeout,omitempty" jsonschema:"With block: the most seconds to wait (default 60, at most 600)."`
}

// ListInput is the input of superagents_list.
type ListInput struct {
	Status string `json:"status,omitempty" jsonschema:"Only tasks with this status: queued, running, resumed, completed, error or cancelled."`
}

// CancelInput is the input of superagents_cancel.
type CancelInput struct {
	TaskID string `json:"task_id" jsonschema:"The task id, or a unique prefix of at least 4 characters."`
}

// ClearInput is the input of superagents_clear (it takes none).
type ClearInput struct{}

// Reply is a task tool's answer: Text for the model or a person, Data for
// programs (the structured content of an MCP result).
type Reply struct {
	Text string
	Data any
}

// Descriptions of the tools, written for a model. The task tool's gets the
// list of agents appended.
const (
	taskDescription = `Launch a sub-agent in the background, or resume a finished one. Returns a task id at once: the task runs while you keep working, and you are notified when it ends.

Use it for work that can proceed on its own (a search across the code, a review, a fix in a separate area), and start independent tasks together. ` + ForkNote + ` With resume: <task id> a completed task continues in its own session with your prompt as a follow-up.`
	outputDescription = `Get a background task's result or status. A completed task returns its final answer (and is marked as read); a running one returns its progress (tool calls, last tools, elapsed time) and the latest text so far. With block: true, wait until the task ends or the timeout passes; the answer says clearly if it timed out.`
	listDescription   = `List the background tasks you launched, newest first, with their status. "(forked)" marks tasks that started with your context, "(resumed)" tasks that were continued.`
	cancelDescription = `Cancel a queued, running or resuming background task: its model and any running tool are stopped.`
	clearDescription  = `Cancel all your running background tasks and remove all your tasks from your list (their sessions are kept).`
)

// ForkNote says what fork: true hands over, in superagents_task's
// description. Hosts whose callers' conversations superagents does not
// see (MCP) say it their way, with TaskDescriptionWith.
const ForkNote = "With fork: true the sub-agent starts with a digest of this conversation."

// Tools are the task tools over one runtime. Their definitions are made
// once: each turn binds them to the calling session.
type Tools struct {
	rt     *runtime.Runtime
	task   *tools.Def[TaskInput]
	output *tools.Def[OutputInput]
	list   *tools.Def[ListInput]
	cancel *tools.Def[CancelInput]
	clear  *tools.Def[ClearInput]
	send   *tools.Def[SendInput]
}

// New defines the task tools over a runtime.
func New(rt *runtime.Runtime) (*Tools, error) {
	t := &Tools{rt: rt}
	var err error
	if t.task, err = tools.Define[TaskInput](sa.TaskTool, t.TaskDescription(), false); err != nil {
		return nil, err
	}
	if t.output, err = tools.Define[OutputInput](sa.OutputTool, outputDescription, true); err != nil {
		return nil, err
	}
	if t.list, err = tools.Define[ListInput](sa.ListTool, listDescription, true); err != nil {
		return nil, err
	}
	if t.cancel, err = tools.Define[CancelInput](sa.CancelTool, cancelDescription, true); err != nil {
		return nil, err
	}
	if t.clear, err = tools.Define[ClearInput](sa.ClearTool, clearDescription, true); err != nil {
		return nil, err
	}
	if t.send, err = tools.Define[SendInput](sa.SendTool, sendDescription, false); err != nil {
		return nil, err
	}
	return t, nil
}

// For is runtime.Options.TaskTools: the engine's agents get the task
// tools of the runtime being opened.
func For(rt *runtime.Runtime) (runtime.ToolsFunc, error) {
	t, err := New(rt)
	if err != nil {
		return nil, err
	}
	return t.ToolsFor, nil
}

// ToolsFor returns the task tools an agent of a session is offered for one
// turn, or none when the session is at the spawn depth limit; and
// superagents_ask when the turn can ask its user.
func (m *Tools) ToolsFor(ctx context.Context, sessionID string) ([]tools.Tool, error) {
	depth, err := m.rt.Tasks().Depth(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var list []tools.Tool
	// A turn whose user can be asked (a task that may ask: see
	// tasks.Manager's asker) can ask them, at any depth.
	if asker := tools.AskerFrom(ctx); asker != nil {
		ask, err := askTool(asker)
		if err != nil {
			return nil, err
		}
		list = append(list, ask)
	}
	if depth >= m.rt.Tasks().Limits().SpawnDepth {
		return list, nil
	}
	d := m
	list = append(list,
		d.task.Bind(func(ctx context.Context, in TaskInput) (tools.Result, error) {
			return asResult(ctx)(m.TaskTool(ctx, sessionID, in))
		}),
		d.output.Bind(func(ctx context.Context, in OutputInput) (tools.Result, error) {
			return asResult(ctx)(m.OutputTool(ctx, sessionID, in))
		}),
		d.list.Bind(func(ctx context.Context, in ListInput) (tools.Result, error) {
			return asResult(ctx)(m.ListTool(ctx, sessionID, in))
		}),
		d.cancel.Bind(func(ctx context.Context, in CancelInput) (tools.Result, error) {
			return asResult(ctx)(m.CancelTool(ctx, sessionID, in))
		}),
		d.clear.Bind(func(ctx context.Context, _ ClearInput) (tools.Result, error) {
			return asResult(ctx)(m.ClearTool(ctx, sessionID))
		}),
		d.send.Bind(func(ctx context.Context, in SendInput) (tools.Result, error) {
			return asResult(ctx)(m.SendTool(ctx, sessionID, FromAgent, in))
		}),
	)
	return list, nil
}

// asResult turns a handler's reply into a tool result: its text, or its
// error as an error result the model reads (unless the turn is being
// stopped, which the agent loop handles).
func asResult(ctx context.Context) func(Reply, error) (tools.Result, error) {
	return func(r Reply, err error) (tools.Result, error) {
		if err != nil {
			if ctx.Err() != nil {
				return tools.Result{}, err
			}
			return tools.Errorf("%s", Message(err)), nil
		}
		return tools.Result{Output: r.Text}, nil
	}
}

// Descriptions returns each task tool's description, by name, for other
// front ends (the MCP server) to offer the same tools.
func (m *Tools) Descriptions() map[string]string {
	return map[string]string{
		sa.TaskTool:   m.TaskDescription(),
		sa.OutputTool: outputDescription,
		sa.ListTool:   listDescription,
		sa.CancelTool: cancelDescription,
		sa.ClearTool:  clearDescription,
		sa.SendTool:   sendDescription,
	}
}

// TaskDescription is superagents_task's description with the agents one
// can launch.
func (m *Tools) TaskDescription() string {
	return m.TaskDescriptionWith(ForkNote)
}

// TaskDescriptionWith is TaskDescription with forkNote in place of
// ForkNote.
func (m *Tools) TaskDescriptionWith(forkNote string) string {
	var b strings.Builder
	b.WriteString(strings.Replace(taskDescription, ForkNote, forkNote, 1))
	b.WriteString("\n\nAvailable agents:")
	for _, p := range m.rt.Agents().List() {
		fmt.Fprintf(&b, "\n- %s: %s", p.Name, oneLine(p.Description))
	}
	return b.String()
}

// Message is an error as one sentence for a model or a person: without
// the category prefixes (invalid input, conflict...) the errors carry for
// programs.
func Message(err error) string {
	msg := err.Error()
	for _, prefix := range []error{sa.ErrInvalid, sa.ErrConflict, sa.ErrLimit, sa.ErrExpired} {
		msg = strings.Replace(msg, prefix.Error()+": ", "", 1)
	}
	return msg
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TaskTool launches or resumes a task for the calling session (Submit),
// and words the reply for a model.
func (m *Tools) TaskTool(ctx context.Context, caller string, in TaskInput) (Reply, error) {
	return m.TaskToolFrom(ctx, caller, "", in)
}

// TaskToolFrom is TaskTool whose fork is a digest of forkFrom's
// conversation (see TaskInput.Request).
func (m *Tools) TaskToolFrom(ctx context.Context, caller, forkFrom string, in TaskInput) (Reply, error) {
	t, resumed, err := m.rt.Tasks().Submit(ctx, in.Request(caller, forkFrom))
	if err != nil {
		return Reply{}, err
	}
	if resumed {
		text := fmt.Sprintf("Task %s is resumed (resume #%d) with your follow-up, in its own session, in the background. You will be notified when it answers; superagents_output with block: true waits for the response.",
			t.ID, t.ResumeCount)
		return Reply{Text: text, Data: NewView(t, time.Now())}, nil
	}
	forked := ""
	if t.IsForked {
		forked = ", forked"
	}
	text := fmt.Sprintf("Task %s launched in the background (agent %s%s). Keep working: you will be notified when it ends. Its result: superagents_output with task_id %q.",
		t.ID, t.Agent, forked, t.ID) + budgetNote(t.Budget) + forkNote(t.ForkContext)
	if w := t.Worktree; w != nil {
		text += fmt.Sprintf(" It works in its own git worktree, %s, on branch %s (from %s).", w.Path, w.Branch, sa.ShortCommit(w.Base))
	}
	return Reply{Text: text, Data: NewView(t, time.Now())}, nil
}

// seconds is n seconds, at most limit: a huge n cannot overflow into a
// short or negative duration.
func seconds(n int, limit time.Duration) time.Duration {
	if n > 0 && int64(n) > int64(limit/time.Second) {
		return limit
	}
	return time.Duration(n) * time.Second
}

// ListView is superagents_list's Data: the tasks, newest first.
type ListView struct {
	Tasks []View `json:"tasks"`
}

// ClearView is superagents_clear's Data: how many tasks were cleared, and
// how many of them were cancelled.
type ClearView struct {
	Cleared   int `json:"cleared"`
	Cancelled int `json:"cancelled"`
	// BranchesKept are the branches of the cleared tasks' worktrees that
	// hold work; the worktrees themselves were removed.
	BranchesKept []string `json:"branches_kept,omitempty"`
}

// OutputTool reports a task's result or status.
func (m *Tools) OutputTool(ctx context.Context, caller string, in OutputInput) (Reply, error) {
	return m.OutputToolFor(ctx, caller, in, nil)
}

// OutputToolFor is OutputTool for a person: answer words how they
// answer the question the task waits on (a command of their way in),
// given the task's id; nil keeps the model's way, superagents_send.
func (m *Tools) OutputToolFor(ctx context.Context, _ string, in OutputInput, answer func(taskID string) string) (Reply, error) {
	if in.Timeout < 0 {
		return Reply{}, fmt.Errorf("%w: timeout cannot be negative", sa.ErrInvalid)
	}
	block := in.Block
	if block && answer == nil && m.asking(ctx, in.TaskID) {
		// A model that would wait on a task waiting for its answer
		// would wait out its timeout: it reads the question at once.
		// (A person's way in shows it once and waits on.)
		block = false
	}
	out, err := m.rt.Tasks().Output(ctx, in.TaskID, block, seconds(in.Timeout, sa.MaxBlockTimeout))
	if err != nil {
		return Reply{}, err
	}
	if block != in.Block {
		out.Told = true
	}
	if out.Task.ClearedAt != nil {
		return Reply{}, clearedError(out.Task, "its result is no longer given")
	}
	now := time.Now()
	data := OutputView{View: NewView(out.Task, now), TimedOut: out.TimedOut, Told: out.Told, Partial: out.Partial}
	data.Question = out.Question
	if answer == nil {
		answer = sendHint
	}
	return Reply{Text: formatOutput(out, now, answer), Data: data}, nil
}

// asking reports whether the task ref names waits for an answer to a
// question.
func (m *Tools) asking(ctx context.Context, ref string) bool {
	t, err := m.rt.Store().ResolveTask(ctx, ref)
	return err == nil && t.Status.Active() && m.rt.Tasks().Question(ctx, t.ID) != ""
}

// ListTool lists the calling session's tasks.
func (m *Tools) ListTool(ctx context.Context, caller string, in ListInput) (Reply, error) {
	list, err := m.rt.Tasks().List(ctx, caller, sa.TaskStatus(in.Status))
	if err != nil {
		return Reply{}, err
	}
	now := time.Now()
	views := NewViews(list, now)
	for i := range views {
		if views[i].Status.Active() {
			views[i].Question = m.rt.Tasks().Question(ctx, views[i].ID)
		}
	}
	return Reply{Text: formatList(views, now), Data: ListView{Tasks: views}}, nil
}

// CancelTool cancels a task.
func (m *Tools) CancelTool(ctx context.Context, _ string, in CancelInput) (Reply, error) {
	if t, err := m.rt.Store().ResolveTask(ctx, in.TaskID); err == nil && t.ClearedAt != nil {
		return Reply{}, clearedError(t, "it was cancelled then if it was running")
	}
	t, err := m.rt.Tasks().Cancel(ctx, in.TaskID)
	if err != nil {
		return Reply{}, err
	}
	text := fmt.Sprintf("Task %s (%q) is cancelled: its model and tools were stopped.", t.ID, t.Description)
	return Reply{Text: text, Data: NewView(t, time.Now())}, nil
}

// clearedError is the answer for a task that was cleared: a cleared task
// is gone from the tools (its session is kept, for the command line).
func clearedError(t sa.Task, what string) error {
	return fmt.Errorf("%w: task %s (%q) was cleared (superagents_clear, or its parent session was deleted): %s, and it cannot be resumed; start a new superagents_task instead",
		sa.ErrExpired, sa.ShortID(t.ID), t.Description, what)
}

// ClearTool cancels and clears the calling session's tasks.
func (m *Tools) ClearTool(ctx context.Context, caller string) (Reply, error) {
	cancelled, cleared, kept, err := m.rt.Tasks().Clear(ctx, caller)
	if err != nil {
		return Reply{}, err
	}
	text := "No background tasks to clear."
	if cleared > 0 {
		text = fmt.Sprintf("Cleared %d task(s) from your list (%d running one(s) cancelled). Their sessions are kept.", cleared, cancelled)
	}
	if len(kept) > 0 {
		text += fmt.Sprintf(" Their worktrees were removed; these branches keep their work (uncommitted changes as a work-in-progress commit): %s.", strings.Join(kept, ", "))
	}
	return Reply{Text: text, Data: ClearView{Cleared: cleared, Cancelled: cancelled, BranchesKept: kept}}, nil
}

// forkNote tells a launching model what a fork inherits and what its
// first request is expected to pay for that.
func forkNote(fc *sa.ForkContext) string {
	if fc == nil {
		return ""
	}
	var what string
	switch {
	case fc.CacheWriteTokens == 0:
		what = "to read all of it from the prompt cache, where a fork of the same point wrote it"
	case fc.CacheReadTokens == 0:
		what = "to write it to the prompt cache, for its later steps and for other forks of this point"
	default:
		what = fmt.Sprintf("to read %d tokens of it from the prompt cache (the start an earlier fork of this conversation shares) and write %d",
			fc.CacheReadTokens, fc.CacheWriteTokens)
	}
	cost := ""
	if fc.USD != nil {
		cost = fmt.Sprintf(" (about $%.4f)", *fc.USD)
	}
	return fmt.Sprintf(" It inherits a digest of your conversation of about %d tokens; its first request is expected %s%s.", fc.Tokens, what, cost)
}

// budgetNote tells a launching model what its task is held to.
func budgetNote(b sa.Budget) string {
	var limits []string
	if b.MaxCost > 0 {
		limits = append(limits, cost.Dollars(b.MaxCost))
	}
	if b.MaxTokens > 0 {
		limits = append(limits, fmt.Sprintf("%d tokens", b.MaxTokens))
	}
	if len(limits) == 0 {
		return ""
	}
	return " Its budget, with the tasks it launches: " + strings.Join(limits, " and ") + "; it stops with an error when that is spent."
}

// NoticesHeader starts the notices a host conversation is given of its
// tasks (their endings and questions), in a tool answer over MCP or in
// the prompt OpenCode's plugin wakes a session with.
const NoticesHeader = "[superagents] Your background tasks since your last superagents call (endings, and questions waiting for your answer):\n\n"

// SendInput is the input of superagents_send.
type SendInput struct {
	TaskID  string `json:"task_id" jsonschema:"The id of a running task (from superagents_task or superagents_list)."`
	Message string `json:"message" jsonschema:"What the task should know, complete on its own; or your answer, when the task asks you a question."`
}

const sendDescription = `Send a message to one of your running background tasks without stopping it: it reads the message before its next step (a tool already running is not interrupted) and takes it into account. Use it to redirect a task, add something it needs, or narrow its work, instead of cancelling and relaunching it. When the task is waiting for an answer to its question (superagents_list and superagents_output show it), the message is the answer. A task that has ended cannot be sent anything: resume a completed one with superagents_task instead.`

// Who sends a message, in the words its task's model reads (see
// SendTool).
const (
	// FromAgent: the agent of the session that launched the task.
	FromAgent = "the agent that launched you"
	// FromUser: a person, at the terminal or the dashboard.
	FromUser = "the user"
	// FromHost: the model of the MCP client that launched the task.
	FromHost = "the agent that launched you (over MCP)"
)

// SendTool sends a message to a task, or answers its question. An agent
// (caller set) reaches only the tasks it launched; from says who sends.
func (m *Tools) SendTool(ctx context.Context, caller, from string, in SendInput) (Reply, error) {
	t, err := m.rt.Store().ResolveTask(ctx, in.TaskID)
	if err != nil {
		return Reply{}, err
	}
	if caller != "" && t.ParentSessionID != caller {
		return Reply{}, sa.NotFoundf("no task with id %s in this conversation: you can send only to the tasks you launched", in.TaskID)
	}
	if t.ClearedAt != nil {
		return Reply{}, clearedError(t, "nothing can be sent to it")
	}
	if from == FromAgent {
		if err := m.agentMayAnswer(ctx, t, in.Message); err != nil {
			return Reply{}, err
		}
	}
	sent, err := m.rt.Tasks().Send(ctx, t.ID, from, in.Message)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Text: SentText(sent), Data: SendView{View: NewView(sent.Task, time.Now()), Answered: sent.Answered != nil, Answer: sent.Answer}}, nil
}

// SentText says what a send did, for a model or a person.
func SentText(s sa.SendResult) string {
	t := s.Task
	if s.Answered != nil {
		return fmt.Sprintf("Task %s (%q) was waiting for an answer to %q: your answer %q was given to it, and it goes on.", t.ID, t.Description, s.Answered.Message, s.Answer)
	}
	return fmt.Sprintf("Message %d sent to task %s (%q): it reads it before its next step, without stopping what it is doing. Whoever launched it is notified when it ends.",
		s.Message.Seq, t.ID, t.Description)
}

// SendView is superagents_send's structured content: the task, and
// whether the message answered its question.
type SendView struct {
	View
	Answered bool   `json:"answered"`
	Answer   string `json:"answer,omitempty"`
}

// agentMayAnswer refuses an agent's yes to a task's question about a
// command its policy leaves to a person (unlisted = "ask"): a model
// allowing its own sub-agent's commands would turn "ask the user" into
// "ask another model". Its no stands; a person answers a yes (the chat's
// /send, task send, the dashboard) or nobody does, and the command is not
// run.
func (m *Tools) agentMayAnswer(ctx context.Context, t sa.Task, text string) error {
	pending, err := m.rt.Tasks().PendingInputs(ctx, t.ID)
	if err != nil || len(pending) == 0 {
		return err
	}
	form, err := pending[0].Form()
	if err != nil || !form.YesNo {
		return err
	}
	if yes, err := form.Read(text); err == nil && yes == false {
		return nil
	}
	return fmt.Errorf("%w: task %s asks whether it may run a command its permissions leave to a person (%s); an agent may only answer no. "+
		"The user can allow it (/send in the chat, superagents task send, the dashboard); otherwise it is not run", sa.ErrInvalid, sa.ShortID(t.ID), pending[0].Message)
}
