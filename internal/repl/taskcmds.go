package repl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

// The task commands let the person do what the agents do with the task
// tools, for the agent in view: its session is the tasks' parent, which
// receives their notifications.

// taskFailed is a reply for an error of the task manager or the store,
// in one sentence, where typed (what the person typed) is shortened.
func taskFailed(err error, typed string) Reply { return failed(errorText(err, typed)) }

// errorText is an error in one sentence for the person: without the
// category prefixes the errors carry for programs ("invalid input: "),
// and with what the person typed, when the error repeats it, shortened.
func errorText(err error, typed string) string {
	msg := oneLine(tasktools.Message(err))
	if typed != "" {
		msg = strings.ReplaceAll(msg, typed, echo(typed))
	}
	return msg
}

// maxEcho is how many characters of what the person typed an error
// repeats.
const maxEcho = 40

// echo shortens what the person typed to repeat it in an error.
func echo(typed string) string { return clip(typed, maxEcho+1) }

func cmdTask(ctx context.Context, c *Chat, in Input) Reply {
	args := in.parsed
	cur := c.Current()
	a, err := c.state(ctx, cur.ID)
	if err != nil {
		return failed(fmt.Sprintf("cannot read agent %s: %v", sa.ShortID(cur.ID), err))
	}
	req, err := taskRequest(cur.ID, args)
	if err != nil {
		return failed(err.Error())
	}
	t, _, err := c.rt.Tasks().Submit(ctx, req)
	if err != nil {
		return taskFailed(taskRequestError(err), args.words[0])
	}
	c.mu.Lock()
	a.killed = false // the user gives it work again: it may be woken
	if t.Status.Active() {
		c.running[t.ID] = t
	}
	c.mu.Unlock()
	how := "agent " + t.Agent
	if t.IsForked {
		how += ", forked with this conversation"
	}
	short := sa.ShortID(t.ID)
	return note("Task %s %q launched in the background (%s). /output %s shows its progress; its notification appears here when it ends.",
		short, t.Description, how, short)
}

// taskRequest translates /task's arguments into a task request for the
// agent in view: the description defaults to the prompt's first words;
// the rest is the runtime's policy (runtime.Tasks.Check).
func taskRequest(parent string, args commandArgs) (runtime.TaskRequest, error) {
	_, fork := args.options["fork"]
	req := runtime.TaskRequest{Parent: parent, Description: args.options["desc"], Prompt: args.text, Agent: args.words[0],
		Fork: fork, Isolation: args.options["isolation"]}
	if req.Description == "" {
		req.Description = describe(args.text)
	}
	if v, ok := args.options["timeout"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return req, fmt.Errorf("/task: --timeout must be a whole number of seconds, not %q", echo(v))
		}
		req.Timeout = n
	}
	if v, ok := args.options["max-cost"]; ok {
		n, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil {
			return req, fmt.Errorf("/task: --max-cost must be a number of dollars, not %q", echo(v))
		}
		req.MaxCost = n
	}
	if v, ok := args.options["max-tokens"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return req, fmt.Errorf("/task: --max-tokens must be a whole number of tokens, not %q", echo(v))
		}
		req.MaxTokens = n
	}
	return req, nil
}

// taskOptions are /task's names of the fields of a task request.
var taskOptions = map[string]string{
	runtime.FieldDescription: "--desc",
	runtime.FieldPrompt:      "the prompt",
	runtime.FieldAgent:       "AGENT",
	runtime.FieldTimeout:     "--timeout",
	runtime.FieldMaxCost:     "--max-cost",
	runtime.FieldMaxTokens:   "--max-tokens",
	runtime.FieldIsolation:   "--isolation",
}

// taskRequestError words a refusal of the task request policy with the
// chat's names of the fields.
func taskRequestError(err error) error {
	var re *runtime.RequestError
	if !errors.As(err, &re) {
		return err
	}
	if name, ok := taskOptions[re.Field]; ok {
		return errors.New(re.Named(name))
	}
	return err
}

func cmdTasks(ctx context.Context, c *Chat, _ Input) Reply {
	r, err := c.tools.ListTool(ctx, c.Current().ID, tasktools.ListInput{})
	if err != nil {
		return taskFailed(err, "")
	}
	return note("%s", r.Text)
}

func cmdOutput(ctx context.Context, c *Chat, in Input) Reply {
	ref := in.parsed.words[0]
	cur := c.Current()
	_, block := in.parsed.options["block"]
	t, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return taskFailed(err, ref)
	}
	if !block || !t.Status.Active() {
		r, err := c.tools.OutputToolFor(ctx, cur.ID, tasktools.OutputInput{TaskID: t.ID}, answerCommand)
		if err != nil {
			return taskFailed(err, ref)
		}
		text := r.Text
		if msgs, err := c.rt.Tasks().Messages(ctx, t.ID); err == nil && len(msgs) > 0 {
			text += "\n\n" + tasktools.MessagesText(msgs)
		}
		return note("%s", text)
	}
	wait := func(ctx context.Context) (string, error) {
		r, err := c.tools.OutputToolFor(ctx, cur.ID, tasktools.OutputInput{TaskID: t.ID, Block: true, Timeout: int(sa.MaxBlockTimeout / time.Second)}, answerCommand)
		return r.Text, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.newWait(cur.ID, wait)
	c.waits[w] = true
	r := note("Waiting for task %s %q to end (Ctrl+C stops waiting)…", sa.ShortID(t.ID), t.Description)
	r.turn = w
	return r
}

// answerCommand is how the person answers a task's question in the
// chat (see tasktools.Tools.OutputToolFor).
func answerCommand(taskID string) string {
	return "Answer it with /send " + sa.ShortID(taskID) + " <answer>."
}

// cmdSend sends the user's message to a task, or answers its question:
// any task, as /cancel cancels any.
func cmdSend(ctx context.Context, c *Chat, in Input) Reply {
	ref := in.parsed.words[0]
	r, err := c.tools.SendTool(ctx, "", tasktools.FromUser, tasktools.SendInput{TaskID: ref, Message: in.parsed.text})
	if err != nil {
		return taskFailed(c.resumeInstead(ctx, ref, err), ref)
	}
	return note("%s", r.Text)
}

// resumeInstead words the refusal of a send to a completed task with the
// command that continues it; other errors are left as they are.
func (c *Chat) resumeInstead(ctx context.Context, ref string, err error) error {
	if !errors.Is(err, sa.ErrConflict) {
		return err
	}
	t, rerr := c.store.ResolveTask(ctx, ref)
	if rerr != nil || t.Status != sa.TaskCompleted {
		return err
	}
	short := sa.ShortID(t.ID)
	return fmt.Errorf("task %s (%q) has completed: /resume %s \"prompt\" sends it a follow-up", short, t.Description, short)
}

func cmdCancel(ctx context.Context, c *Chat, in Input) Reply {
	ref := in.parsed.words[0]
	t, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return taskFailed(err, ref)
	}
	// Its ending is the user's doing: shown, but no reason to wake the
	// agent.
	c.quiet.expect(t.ID)
	r, err := c.tools.CancelTool(ctx, c.Current().ID, tasktools.CancelInput{TaskID: t.ID})
	if err != nil {
		c.quiet.forget(t.ID)
		return taskFailed(err, ref)
	}
	return note("%s", r.Text)
}

func cmdResume(ctx context.Context, c *Chat, in Input) Reply {
	t, _, err := c.rt.Tasks().Submit(ctx, runtime.TaskRequest{Resume: in.parsed.words[0], Prompt: in.parsed.text})
	if err != nil {
		return taskFailed(taskRequestError(err), in.parsed.words[0])
	}
	short := sa.ShortID(t.ID)
	return note("Task %s %q is resumed (resume #%d) with your follow-up; it answers in the background and its notification appears when it does. /output --block %s waits for it.",
		short, t.Description, t.ResumeCount, short)
}

// waitResult is what a wait for a task (/output --block) found.
func waitResult(e Event) Block {
	switch {
	case e.Cancelled:
		return Block{Kind: BlockNote, Text: "Stopped waiting."}
	case e.Err != nil:
		return Block{Kind: BlockError, Text: oneLine(tasktools.Message(e.Err))}
	}
	return Block{Kind: BlockNote, Text: e.Text}
}
