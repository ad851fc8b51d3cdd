package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasktools"
)

// handler is a task tool as the server runs it: the manager's handler
// bound to the calling MCP session.
type handler[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (tasktools.Reply, error)

// addTool offers a task tool with the manager's description and the input
// schema inferred from its input struct. The reply's text, after the
// notices of the client's tasks that ended since the last result that
// carried some (see takeNotices), is the result's content; answer makes
// its structured content (whose type is the tool's output schema) of the
// reply and the same notices. A failure is a tool error (IsError) with
// the notices and the manager's one-sentence message, which the client's
// model reads, not a protocol error.
func addTool[In, Out any](s *Server, tool *mcp.Tool, h handler[In], answer func(r tasktools.Reply, notices []string, now time.Time) Out) {
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		r, err := h(ctx, req, in)
		notices := s.takeNotices(ctx, req.Session)
		var zero Out
		if err != nil {
			s.log.Debug("task tool failed", "tool", tool.Name, "error", err)
			return nil, zero, errors.New(noticesText(notices) + tasktools.Message(err))
		}
		text := &mcp.TextContent{Text: noticesText(notices) + r.Text}
		return &mcp.CallToolResult{Content: []mcp.Content{text}}, answer(r, notices, time.Now()), nil
	})
}

// The answers of each tool, made of the manager's reply (whose Data is a
// tasktools.View, OutputView, ListView or ClearView).

func taskAnswerOf(r tasktools.Reply, notices []string, now time.Time) taskAnswer {
	v, _ := r.Data.(tasktools.View)
	return taskAnswer{entry: newEntry(v.Task, now), Message: r.Text, Notices: notices}
}

func outputAnswerOf(r tasktools.Reply, notices []string, now time.Time) outputAnswer {
	v, _ := r.Data.(tasktools.OutputView)
	out := outputAnswer{entry: newEntry(v.Task, now), Message: r.Text, TimedOut: v.TimedOut, Notices: notices}
	out.Question = v.Question
	return out
}

func listAnswerOf(r tasktools.Reply, notices []string, now time.Time) listAnswer {
	v, _ := r.Data.(tasktools.ListView)
	out := listAnswer{Tasks: make([]entry, len(v.Tasks)), Notices: notices}
	for i, t := range v.Tasks {
		out.Tasks[i] = newEntry(t.Task, now)
		out.Tasks[i].Question = t.Question
	}
	return out
}

func sendAnswerOf(r tasktools.Reply, notices []string, now time.Time) sendAnswer {
	v, _ := r.Data.(tasktools.SendView)
	return sendAnswer{entry: newEntry(v.Task, now), Message: r.Text, Answered: v.Answered, Notices: notices}
}

func clearAnswerOf(r tasktools.Reply, notices []string, _ time.Time) clearAnswer {
	v, _ := r.Data.(tasktools.ClearView)
	return clearAnswer{Message: r.Text, Cleared: v.Cleared, Cancelled: v.Cancelled, Notices: notices}
}

// What fork: true and prompt mean over MCP: the host's own conversation
// is read from the transcript the host writes (see hostConversation);
// without a host, only what was said over the connection.
const (
	forkNote = "With fork: true the sub-agent starts with a digest of your own conversation, read from the transcript your host writes " +
		"(Claude Code, Codex and OpenCode are read; long tool outputs are cut, reasoning is left out). If it cannot be read, the reply says so " +
		"and the digest holds only this connection's record (the notices of earlier tasks): then put what the sub-agent needs in prompt."
	forkField = "Give the sub-agent a digest of your conversation so far (read from your host's transcript; the reply says if it could not be). Cannot be combined with resume."
	// noHostForkNote and noHostForkField say the same with host
	// transcripts turned off.
	noHostForkNote  = "With fork: true the sub-agent starts with a digest of this connection's record (the notices of earlier tasks), not of your own conversation, which superagents does not read here: put what the sub-agent needs in prompt."
	noHostForkField = "Give the sub-agent a digest of this connection's record (the notices of earlier tasks). It does not include your own conversation. Cannot be combined with resume."
	taskPromptField = "The complete instructions for the sub-agent: what to do, where, and what to report back. Without fork it does not see your conversation, so include everything it needs. With resume: the follow-up message."
)

// taskInputSchema is superagents_task's input schema with the fields'
// descriptions said for an MCP client.
func taskInputSchema(forkField string) (*jsonschema.Schema, error) {
	schema, err := jsonschema.For[tasktools.TaskInput](nil)
	if err != nil {
		return nil, fmt.Errorf("task tool schema: %w", err)
	}
	for name, desc := range map[string]string{"fork": forkField, "prompt": taskPromptField} {
		prop, ok := schema.Properties[name]
		if !ok {
			return nil, fmt.Errorf("task tool schema: no %q property", name)
		}
		prop.Description = desc
	}
	return schema, nil
}

// addTools offers the task tools, each run by its handler below.
func (s *Server) addTools() error {
	desc := s.tools.Descriptions()
	no := false
	closedWorld := &no
	note, field := forkNote, forkField
	if s.host == HostNone {
		note, field = noHostForkNote, noHostForkField
	}
	taskSchema, err := taskInputSchema(field)
	if err != nil {
		return err
	}
	addTool(s, &mcp.Tool{Name: sa.TaskTool, Description: s.tools.TaskDescriptionWith(note), InputSchema: taskSchema,
		Annotations: &mcp.ToolAnnotations{Title: "Launch a background agent"}},
		s.taskTool, taskAnswerOf)
	// Output, cancel and resume find a task among the client's own only
	// (see owned).
	addTool(s, &mcp.Tool{Name: sa.OutputTool, Description: desc[sa.OutputTool],
		Annotations: &mcp.ToolAnnotations{Title: "Background task result", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: closedWorld}},
		s.outputTool, outputAnswerOf)
	addTool(s, &mcp.Tool{Name: sa.ListTool, Description: desc[sa.ListTool],
		Annotations: &mcp.ToolAnnotations{Title: "List background tasks", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: closedWorld}},
		s.listTool, listAnswerOf)
	addTool(s, &mcp.Tool{Name: sa.CancelTool, Description: desc[sa.CancelTool],
		Annotations: &mcp.ToolAnnotations{Title: "Cancel a background task", OpenWorldHint: closedWorld}},
		s.cancelTool, taskAnswerOf)
	addTool(s, &mcp.Tool{Name: sa.ClearTool, Description: desc[sa.ClearTool],
		Annotations: &mcp.ToolAnnotations{Title: "Clear background tasks", IdempotentHint: true, OpenWorldHint: closedWorld}},
		s.clearTool, clearAnswerOf)
	addTool(s, &mcp.Tool{Name: sa.SendTool, Description: desc[sa.SendTool],
		Annotations: &mcp.ToolAnnotations{Title: "Message a running background task", OpenWorldHint: closedWorld}},
		s.sendTool, sendAnswerOf)
	return nil
}

// sendTool runs superagents_send on one of the client's own tasks: a
// message its model reads before its next step, or the answer to the
// question it waits on.
func (s *Server) sendTool(ctx context.Context, req *mcp.CallToolRequest, in tasktools.SendInput) (tasktools.Reply, error) {
	t, err := s.ownTask(ctx, req, in.TaskID)
	if err != nil {
		return tasktools.Reply{}, err
	}
	in.TaskID = t.ID
	return s.tools.SendTool(ctx, "", tasktools.FromHost, in)
}

// taskTool runs superagents_task, once the runtime's policy accepts the
// request (runtime.Tasks.Check): a fork goes to forkLaunch; a resume
// continues one of the client's own tasks, with that task's agent.
func (s *Server) taskTool(ctx context.Context, req *mcp.CallToolRequest, in tasktools.TaskInput) (tasktools.Reply, error) {
	// Refused before the client's session is looked for or made.
	if err := s.rt.Tasks().Check(in.Request("", "")); err != nil {
		return tasktools.Reply{}, err
	}
	if in.Fork && in.Resume == "" {
		return s.forkLaunch(ctx, req, in)
	}
	c, err := s.parent(ctx, req, nil, true)
	if err != nil {
		return tasktools.Reply{}, err
	}
	agent := in.Agent
	if in.Resume != "" && !in.Fork { // both: the manager refuses it
		t, err := s.owned(ctx, c.session(), in.Resume)
		if err != nil {
			return tasktools.Reply{}, err
		}
		in.Resume, agent = t.ID, t.Agent
	}
	if err := s.checkModel(agent); err != nil {
		return tasktools.Reply{}, err
	}
	r, err := s.launch(ctx, c, in)
	if err == nil {
		s.deferToTask(ctx, req, r)
	}
	return r, err
}

// outputTool runs superagents_output on one of the client's own tasks,
// with progress notifications while it blocks.
func (s *Server) outputTool(ctx context.Context, req *mcp.CallToolRequest, in tasktools.OutputInput) (tasktools.Reply, error) {
	t, err := s.ownTask(ctx, req, in.TaskID)
	if err != nil {
		return tasktools.Reply{}, err
	}
	in.TaskID = t.ID
	if in.Block {
		defer s.reportProgress(ctx, req, t.ID)()
	}
	return s.tools.OutputTool(ctx, "", in)
}

// listTool runs superagents_list over the client's session.
func (s *Server) listTool(ctx context.Context, req *mcp.CallToolRequest, in tasktools.ListInput) (tasktools.Reply, error) {
	c, err := s.parent(ctx, req, nil, true)
	if err != nil {
		return tasktools.Reply{}, err
	}
	return s.tools.ListTool(ctx, c.session(), in)
}

// cancelTool runs superagents_cancel on one of the client's own tasks.
func (s *Server) cancelTool(ctx context.Context, req *mcp.CallToolRequest, in tasktools.CancelInput) (tasktools.Reply, error) {
	t, err := s.ownTask(ctx, req, in.TaskID)
	if err != nil {
		return tasktools.Reply{}, err
	}
	in.TaskID = t.ID
	return s.tools.CancelTool(ctx, "", in)
}

// ownTask finds the task ref names among the calling client's own.
func (s *Server) ownTask(ctx context.Context, req *mcp.CallToolRequest, ref string) (sa.Task, error) {
	c, err := s.parent(ctx, req, nil, false)
	if err != nil {
		return sa.Task{}, err
	}
	return s.owned(ctx, c.session(), ref)
}

// clearTool runs superagents_clear over the client's session.
func (s *Server) clearTool(ctx context.Context, req *mcp.CallToolRequest, _ tasktools.ClearInput) (tasktools.Reply, error) {
	c, err := s.parent(ctx, req, nil, true)
	if err != nil {
		return tasktools.Reply{}, err
	}
	return s.tools.ClearTool(ctx, c.session())
}

// forkLaunch launches a forked task for a client: the digest is made of
// the host's own conversation when it can be read (see
// hostConversation), and the reply says what the fork carries. The
// transcript found tells the client's conversation at its first call.
func (s *Server) forkLaunch(ctx context.Context, req *mcp.CallToolRequest, in tasktools.TaskInput) (tasktools.Reply, error) {
	if err := s.checkModel(in.Agent); err != nil {
		return tasktools.Reply{}, err
	}
	from := s.hostConversation(ctx, req)
	c, err := s.parent(ctx, req, &from, true)
	if err != nil {
		return tasktools.Reply{}, err
	}
	c.mu.Lock()
	r, err := s.tools.TaskToolFrom(ctx, c.sessionID, from.session, in)
	c.mu.Unlock() // deferToTask takes the notices, which reads the session
	if err != nil {
		return r, err
	}
	r.Text += " " + from.note
	s.deferToTask(ctx, req, r)
	return r, nil
}

// launch launches or resumes a task for a client, with the client's
// session created first if need be.
func (s *Server) launch(ctx context.Context, c *client, in tasktools.TaskInput) (tasktools.Reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.tools.TaskTool(ctx, c.sessionID, in)
}

// reportProgress sends progress notifications while a blocking
// superagents_output waits, if the client asked for them (a progress
// token): one at once, then one per change of the task. It returns the
// function that stops them.
func (s *Server) reportProgress(ctx context.Context, req *mcp.CallToolRequest, ref string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	cursor := s.rt.Events().Now() // before reading the task, so no change is missed
	t, err := s.store.ResolveTask(ctx, ref)
	if err != nil || !t.Status.Active() {
		return func() {} // the tool itself reports it
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for step := 1.0; ; step++ {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: step, Message: progressMessage(t)})
			if err != nil {
				return
			}
			ch, err := cursor.NextMatching(ctx, func(c sa.Change) bool { return c.TaskID == t.ID && c.Kind == sa.ChangeTaskUpdated })
			if err != nil {
				return
			}
			if t, err = ch.Task(); err != nil || !t.Status.Active() {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// progressMessage says where a task is, in a line.
func progressMessage(t sa.Task) string {
	p := t.Progress
	msg := fmt.Sprintf("Task %s (%q) is %s: %d tool call(s)", sa.ShortID(t.ID), t.Description, t.Status, p.ToolCalls)
	if len(p.LastTools) > 0 {
		msg += " (last: " + strings.Join(p.LastTools, ", ") + ")"
	}
	return msg
}
