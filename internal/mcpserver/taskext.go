package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/mcptasks"
	"github.com/superagents/superagents/transcripts"
)

// The 2026-07-28 revision of MCP has no sessions: over streamable HTTP
// each request stands alone, and may reach any node of a cluster. So the
// tasks of a client of that revision belong, as for any client, to its
// host conversation when its transcript names it; else, over HTTP, to the
// holder of the API token it presents (the one person who could read every
// task through the HTTP API anyway); over stdio, to the connection.
//
// The revision's Tasks extension (package mcptasks) lets superagents_task
// answer with a task when the request declares it: the host polls
// tasks/get, which gives the task's progress and, once it ended, the very
// answer superagents_output gives, and tasks/cancel stops it. The MCP task
// is the superagents task: one id, one record in the store, so any node
// answers for it. Its requests reach a task only as the principal that
// launched it (see principal.go).

// taskPollInterval is the pollIntervalMs suggested to hosts: sub-agents
// run for seconds to minutes, so a poll every 2 s costs little and tells
// soon enough.
const taskPollInterval = 2 * time.Second

// tokenHost names the owner of the tasks of 2026-07-28 clients over HTTP
// whose conversation is not known: the conversation of host tokenHost
// and a digest of the token they present.
const tokenHost transcripts.Host = "http"

// stateless reports whether req is a request of the 2026-07-28 revision
// (or later) over HTTP, which stands alone: its MCP session lives for
// this request only.
func stateless(req mcp.Request) bool {
	return overHTTP(req) && protocolOf(req) >= statelessVersion
}

// protocolOf is the protocol revision of a request.
func protocolOf(req mcp.Request) string {
	if r, ok := req.(interface{ ProtocolVersion() string }); ok {
		return r.ProtocolVersion()
	}
	return ""
}

// tokenOf names, without keeping it, the API token a request over HTTP
// presents (the server's authentication checked it before).
func tokenOf(req mcp.Request) string {
	auth := strings.TrimSpace(req.GetExtra().Header.Get("Authorization"))
	if scheme, token, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
		auth = strings.TrimSpace(token)
	}
	return digest(auth)
}

// installTasks adds the Tasks extension to the server, records with each
// task an MCP client launches the principal it launched it as (see
// principal.go), and lets the tasks launched by a tools/call that
// declared the extension ask their user (see runtime.WithUserInput): the
// client answers through tasks/update. The notifier's connections say
// who listens by themselves (see Serve).
func (s *Server) installTasks() error {
	if err := mcptasks.Install(s.mcp, mcptasks.Options{Backend: taskBackend{s}, Caller: s.caller, PollInterval: taskPollInterval, Logger: s.log}); err != nil {
		return err
	}
	n, err := mcptasks.NewNotifier(mcptasks.NotifierOptions{Backend: taskBackend{s}, PollInterval: taskPollInterval, Logger: s.log})
	if err != nil {
		return err
	}
	s.notifier = n
	cursor := s.rt.Events().Now() // before New returns, so no change is missed
	s.wg.Add(1)
	go s.followTasks(s.ctx, cursor)
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				ctx = runtime.WithLauncher(ctx, s.launcherOf(req))
				if mcptasks.Declared(req) {
					ctx = runtime.WithUserInput(ctx)
				}
			}
			return next(ctx, method, req)
		}
	})
	return nil
}

// deferToTask answers a superagents_task call that declared the Tasks
// extension with its task, once the task is stored: the host polls it
// instead of waiting for notices. The reply's text, after the notices due
// (taken here, since the task answer replaces the tool's result), goes to
// Claude Code's model at once. Should that fail, the call keeps its plain
// answer: the task runs either way.
func (s *Server) deferToTask(ctx context.Context, req *mcp.CallToolRequest, r tasktools.Reply) {
	if !mcptasks.Declared(req) {
		return
	}
	v, ok := r.Data.(tasktools.View)
	if !ok {
		s.log.Warn("answer with a task: the reply holds no task")
		return
	}
	note := noticesText(s.takeNotices(ctx, req.Session)) + r.Text + " Your host tells you when it ends; superagents_output reads it meanwhile."
	if _, err := mcptasks.Defer(ctx, taskState(v.Task), mcptasks.ModelImmediateResponse(note)); err != nil {
		s.log.Warn("answer with a task", "task", v.ID, "error", err)
	}
}

// taskState is a task as the extension reports it while it runs.
func taskState(t sa.Task) mcptasks.State {
	st := mcptasks.State{ID: t.ID, Status: mcptasks.StatusWorking, CreatedAt: t.CreatedAt, UpdatedAt: t.StartedAt, Message: progressMessage(t)}
	if t.CompletedAt != nil {
		st.UpdatedAt = *t.CompletedAt
	}
	return st
}

// taskBackend serves the extension's methods from the store.
//
// A tasks/* request names its task by id, and carries no call by which
// its host conversation could be found: a host polls a task it launched
// in an earlier process, as Claude Code does after --resume. Knowing the
// id is not enough, though: the request reaches a task only as the
// principal that launched it, the holder of the same API token over HTTP,
// and over stdio a client of the same workspace, of the same host
// conversation once the connection's calls told it (see principal.go).
// The caller each method gets is that principal (Server.caller).
type taskBackend struct{ s *Server }

// owned finds a task the caller launched over MCP (or one such a task
// launched). Another task is not found, as an unknown one; a cleared one
// has expired.
func (b taskBackend) owned(ctx context.Context, caller, id string) (sa.Task, error) {
	t, err := b.s.store.Task(ctx, id)
	if err == nil {
		var mine bool
		if mine, err = b.s.reaches(ctx, parsePrincipal(caller), t); err == nil && !mine {
			err = mcptasks.ErrForeign
		}
	}
	switch {
	case errors.Is(err, sa.ErrNotFound):
		return sa.Task{}, fmt.Errorf("%w: %v", mcptasks.ErrNotFound, err)
	case err != nil:
		return sa.Task{}, err
	case t.ClearedAt != nil:
		return sa.Task{}, mcptasks.ErrExpired
	}
	return t, nil
}

// Get reports a task: working while it runs (with its progress), and once
// it ended the answer superagents_output gives, text and structured
// content; a task that failed is a tool error, as its output is.
func (b taskBackend) Get(ctx context.Context, caller, id string) (mcptasks.State, error) {
	t, err := b.owned(ctx, caller, id)
	if err != nil {
		return mcptasks.State{}, err
	}
	return b.state(ctx, t)
}

// state is a task as tasks/get reports it.
func (b taskBackend) state(ctx context.Context, t sa.Task) (mcptasks.State, error) {
	st := taskState(t)
	switch t.Status {
	case sa.TaskCancelled:
		st.Status = mcptasks.StatusCancelled
		return st, nil
	case sa.TaskCompleted, sa.TaskError:
	default:
		return b.awaiting(ctx, t, st)
	}
	r, err := b.s.tools.OutputTool(ctx, "", tasktools.OutputInput{TaskID: t.ID})
	if err != nil {
		return mcptasks.State{}, err
	}
	st.Status = mcptasks.StatusCompleted
	st.Result = &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: r.Text}},
		StructuredContent: outputAnswerOf(r, nil, time.Now()),
		IsError:           t.Status == sa.TaskError,
	}
	return st, nil
}

// Cancel cancels a running task; a task that already ended is left as it
// is, without an error (hosts send tasks/cancel more than once).
func (b taskBackend) Cancel(ctx context.Context, caller, id string) error {
	t, err := b.owned(ctx, caller, id)
	if err != nil || !t.Status.Active() {
		return err
	}
	if _, err := b.s.rt.Tasks().Cancel(ctx, t.ID); err != nil && !errors.Is(err, sa.ErrConflict) {
		return err
	}
	return nil
}

// awaiting reports an active task that waits for its user's input as
// input_required, with the outstanding requests (stored, so any node
// reports them) and what they ask as its status message.
func (b taskBackend) awaiting(ctx context.Context, t sa.Task, st mcptasks.State) (mcptasks.State, error) {
	if !t.MayAsk {
		return st, nil
	}
	reqs, err := b.s.rt.Tasks().PendingInputs(ctx, t.ID)
	if err != nil {
		return mcptasks.State{}, err
	}
	raw := map[string]json.RawMessage{}
	var asked []string
	for _, r := range reqs {
		raw[r.Key] = r.Request
		asked = append(asked, r.Message)
		st.UpdatedAt = r.CreatedAt
	}
	if len(raw) == 0 {
		return st, nil
	}
	b2, err := json.Marshal(raw)
	if err != nil {
		return mcptasks.State{}, err
	}
	var m mcp.InputRequestMap
	if err := json.Unmarshal(b2, &m); err != nil {
		return mcptasks.State{}, fmt.Errorf("%w: task %s: a stored input request: %v", sa.ErrCorrupt, sa.ShortID(t.ID), err)
	}
	st.Status, st.InputRequests = mcptasks.StatusInputRequired, m
	st.Message = "Waiting for your answer: " + strings.Join(asked, " ")
	return st, nil
}

// Update stores the answers to a task's outstanding requests, for its run
// to pick up on whichever node it runs; answers to anything else are
// ignored, and a task that has ended takes none.
func (b taskBackend) Update(ctx context.Context, caller, id string, responses mcp.InputResponseMap) error {
	t, err := b.owned(ctx, caller, id)
	if err != nil {
		return err
	}
	answers := make(map[string]json.RawMessage, len(responses))
	for k, r := range responses {
		raw, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("the answer to %q: %w", k, err)
		}
		answers[k] = raw
	}
	_, err = b.s.rt.Tasks().AnswerInputs(ctx, t.ID, answers)
	var ended *sa.TaskEndedError
	if errors.As(err, &ended) {
		return fmt.Errorf("%w: %v", mcptasks.ErrEnded, err)
	}
	return err
}

// followTasks sends notifications/tasks to the clients subscribed to a
// task as it changes. It follows the change log, so a change made by any
// process or node sharing the store counts: a task's status, its
// questions to its user, their answers (see taskBackend.Get for what the
// client is told). The notifier sends a state only when it differs from
// the last one sent.
func (s *Server) followTasks(ctx context.Context, cursor *events.Cursor) {
	defer s.wg.Done()
	for {
		ch, err := cursor.NextMatching(ctx, func(c sa.Change) bool {
			return c.TaskID != "" && taskChange(c.Kind) && s.notifier.Subscribed(c.TaskID)
		})
		if err != nil {
			return // closed
		}
		// The subscriptions to the task were agreed to as their callers'.
		t, err := s.store.Task(ctx, ch.TaskID)
		if err != nil || t.ClearedAt != nil {
			s.log.Debug("task notification: read the task", "task", ch.TaskID, "error", err)
			continue
		}
		st, err := taskBackend{s}.state(ctx, t)
		if err != nil {
			s.log.Debug("task notification: read the task's state", "task", ch.TaskID, "error", err)
			continue
		}
		s.notifier.Notify(ctx, st)
	}
}

// taskChange reports whether a change is to a task itself (and not a
// message about it).
func taskChange(k sa.ChangeKind) bool {
	switch k {
	case sa.ChangeTaskCreated, sa.ChangeTaskUpdated, sa.ChangeTaskCompleted, sa.ChangeTaskError, sa.ChangeTaskCancelled:
		return true
	}
	return false
}
