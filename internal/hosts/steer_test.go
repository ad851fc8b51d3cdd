package hosts_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/hosttest"
	"github.com/superagents/superagents/internal/tasktools"
)

// Steering and questions with the hosts that do not declare the Tasks
// extension (claude -p, codex exec, opencode run): the host's model tells
// a running task something with superagents_send, and reads a task's
// question as a notice at the top of its next superagents tool answer,
// which it answers with superagents_send.

// The words the user prompts of these tests start with.
const (
	// cmdSteer: the model launches a task that works in short steps, then
	// sends it steerNote.
	cmdSteer = "STEER"
	// cmdAsk: the model launches a task that asks a question, polls
	// superagents_list until a notice brings the question, and answers it
	// with superagents_send.
	cmdAsk = "QUIZ"
)

// What the sub-agents' prompts carry, which their scripted model acts on.
const (
	// childSteps: run `sleep 0.2` in bash, step after step, until a
	// message carrying steerNote comes; then answer heardPrefix + steerNote.
	childSteps = "SLEEP-IN-STEPS"
	// childAsks: ask childQuestion with childChoices, then answer
	// pickedPrefix + what the ask tool gave back.
	childAsks = "ASK-WHICH-COLOUR"
)

const (
	steerNote     = "STEER-7305: wrap up now and report"
	heardPrefix   = "HEARD: "
	childQuestion = "Which colour should the report use?"
	pickedPrefix  = "PICKED: "
	// pickedChoice is the choice the host's model answers with, in
	// another case than the choice's (the server matches it ignoring
	// case and gives the task the choice as it was offered).
	pickedChoice = "Blue"
	// answeredWith is what the ask tool gives the sub-agent's model back.
	answeredWith = "The user answered: blue"
	// steeringHeader starts a message sent over MCP as the task's model
	// reads it (tasks.steering with tasktools.FromHost).
	steeringHeader = "[Message from the agent that launched you (over MCP), sent while you work."
)

var childChoices = []string{"red", "blue"}

// maxSteps bounds the sub-agent's sleeps (30 s of them) and maxPolls the
// host model's superagents_list calls: guards against a message or a
// question that never comes, they measure nothing.
const (
	maxSteps = 150
	maxPolls = 60
)

// Replies of the host's model.
const (
	replySent     = "Told the sub-agent."
	replyAnswered = "Answered the sub-agent."
	replyNoAsk    = "No question came."
)

// launchedID reads the task id in superagents_task's answer (its text, or
// the JSON of its structured content, which holds the same sentence).
var launchedID = regexp.MustCompile(`Task ([0-9a-z]+) launched in the background`)

// childScript is the sub-agents' model: it acts on the marker its task's
// prompt carries; without one, it leaves the request to the facts'
// answer.
func childScript(c hosttest.Conv) hosttest.Action {
	prompt := ""
	for _, it := range c.Items {
		if it.Kind == hosttest.User {
			prompt = it.Text
			break
		}
	}
	switch {
	case strings.Contains(prompt, childSteps):
		for _, it := range c.Items {
			if it.Kind == hosttest.User && strings.Contains(it.Text, steerNote) {
				return hosttest.Action{Text: heardPrefix + steerNote}
			}
		}
		if len(c.Results("bash")) >= maxSteps || c.Tool("bash") == "" {
			return hosttest.Action{Text: "No message came."}
		}
		// Each step's command differs: superagents fails a task whose model
		// repeats a call with the same arguments (its loop detection).
		step := len(c.Results("bash")) + 1
		return hosttest.Action{Tool: c.Tool("bash"), Input: map[string]any{"command": fmt.Sprintf("sleep 0.2 && echo step %d", step)}}
	case strings.Contains(prompt, childAsks):
		if asked := c.Results(tasktools.AskToolName); len(asked) > 0 {
			return hosttest.Action{Text: pickedPrefix + asked[len(asked)-1].Text}
		}
		if c.Tool(tasktools.AskToolName) == "" {
			return hosttest.Action{Text: "I have no tool to ask with."}
		}
		return hosttest.Action{Tool: c.Tool(tasktools.AskToolName), Input: map[string]any{"question": childQuestion, "choices": childChoices}}
	}
	return hosttest.Action{} // the facts' answer (hosttest.SubModel)
}

// steerScript is the host's model for cmdSteer and cmdAsk.
func steerScript(c hosttest.Conv) hosttest.Action {
	if len(c.Tools) == 0 {
		return hosttest.Action{Text: "A conversation"} // OpenCode's title
	}
	at, prompt := -1, ""
	for i := len(c.Items) - 1; i >= 0 && at < 0; i-- {
		if it := c.Items[i]; it.Kind == hosttest.User && (strings.Contains(it.Text, cmdSteer) || strings.Contains(it.Text, cmdAsk)) {
			at, prompt = i, it.Text
		}
	}
	if at < 0 {
		return hosttest.Action{Text: replyDone} // a request of the host's own
	}
	var since []hosttest.Item
	for _, it := range c.Items[at+1:] {
		if it.Kind == hosttest.ToolResult {
			since = append(since, it)
		}
	}
	call := func(suffix string, input map[string]any) hosttest.Action {
		if name := c.Tool(suffix); name != "" {
			return hosttest.Action{Tool: name, Input: input}
		}
		return hosttest.Action{Text: "I have no tool " + suffix + "."}
	}
	if len(since) == 0 {
		marker, what := childSteps, "wait in steps"
		if strings.Contains(prompt, cmdAsk) {
			marker, what = childAsks, askDescription
		}
		return call("superagents_task", map[string]any{"description": what, "prompt": marker + ": do as you were scripted.", "agent": "general"})
	}
	m := launchedID.FindStringSubmatch(since[0].Text)
	if m == nil {
		return hosttest.Action{Text: "I was not told the task's id."}
	}
	last := since[len(since)-1]
	switch {
	case strings.HasSuffix(last.Name, "superagents_send"):
		if strings.Contains(prompt, cmdAsk) {
			return hosttest.Action{Text: replyAnswered}
		}
		return hosttest.Action{Text: replySent}
	case strings.Contains(prompt, cmdSteer):
		return call("superagents_send", map[string]any{"task_id": m[1], "message": steerNote})
	case shows(last.Text, childQuestion):
		return call("superagents_send", map[string]any{"task_id": m[1], "message": pickedChoice})
	case len(since) > maxPolls:
		return hosttest.Action{Text: replyNoAsk}
	}
	return call("superagents_list", map[string]any{})
}

// TestHostsSteerAndAsk drives each host headless (one-shot processes,
// without the Tasks extension) through two runs:
//
//  1. the model launches a task that runs `sleep 0.2` step after step,
//     then sends it a message with superagents_send: the task's next
//     model request carries the message (one already on its way may not),
//     the task's model reads it as a message from the agent that
//     launched it, and the task ends with it;
//  2. the model launches a task that asks a question with choices
//     (superagents_ask): the question reaches the host's model as a
//     notice at the top of a superagents_list answer, the model answers
//     with superagents_send, and the task's next model request carries
//     the answer.
//
// It logs how long each took: from the host model's superagents_send
// call to the task's request carrying it; from the task's question to the
// host model's request carrying it.
func TestHostsSteerAndAsk(t *testing.T) {
	for _, hn := range hostNames {
		t.Run(hn.host, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), testLimit)
			defer cancel()
			sub := hosttest.NewSubModel(t)
			sub.Script(childScript)
			h := newHost(t, hn.host, hosttest.Options{Script: steerScript, Sub: sub})
			steerTask(ctx, t, h)
			answerTask(ctx, t, h)
		})
	}
}

// steerTask runs step 1 of TestHostsSteerAndAsk.
func steerTask(ctx context.Context, t *testing.T, h *hosttest.Host) {
	dump := func() string { return "\nwhat the host sent its model:\n" + h.Model.Dump() }
	mark, subMark := len(h.Model.Convs()), len(h.Sub.Convs())
	if _, r := runHost(ctx, t, h, cmdSteer+": start a sub-agent, then tell it to wrap up.", ""); r.Err != nil {
		t.Fatalf("steer run failed\n%s%s", r, dump())
	}
	called, at := h.Model.Find(mark, lastResultOf("superagents_task"))
	if at < 0 {
		t.Fatalf("the host's model never got the result of superagents_task%s", dump())
	}
	id := launchedID.FindStringSubmatch(called.Last().Text)[1]
	sent, at := h.Model.Find(at, lastResultOf("superagents_send"))
	if at < 0 {
		t.Fatalf("the host's model never got the result of superagents_send%s", dump())
	}
	t.Logf("superagents_send: %s", hosttest.Trim(sent.Last().Text, 400))
	if !shows(sent.Last().Text, "sent to task "+id) {
		t.Errorf("superagents_send's answer does not say the message was sent to task %s:\n%s", id, hosttest.Trim(sent.Last().Text, 2000))
	}
	tk := waitEnded(ctx, t, h, id)
	if tk.Status != "completed" || !strings.Contains(tk.Result, heardPrefix+steerNote) {
		t.Errorf("the task steered ended %s with %q (error %q), want completed with %q%s", tk.Status, tk.Result, tk.Error, heardPrefix+steerNote, dump())
	}
	convs := h.Sub.Convs()[subMark:]
	carrying, after := -1, 0 // the first request carrying the message; the requests received after the send answered, up to it
	for i, c := range convs {
		if c.Req.Received.After(sent.Req.Received) && carrying < 0 {
			after++
		}
		if carrying < 0 && strings.Contains(string(c.Req.Body), steerNote) {
			carrying = i
		}
	}
	if carrying < 0 {
		t.Fatalf("no model request of the task carries the message %q (%d requests)%s", steerNote, len(convs), dump())
	}
	// The message is stored before superagents_send answers: the task's
	// next request carries it, unless one was already on its way (read
	// its inbox) as the message came: then the one after.
	if after > 2 {
		t.Errorf("the message reached the task's model only at its %d-th request after superagents_send answered, want its next (or the one after)", after)
	}
	msg := ""
	for _, it := range convs[carrying].Items {
		if it.Kind == hosttest.User && strings.Contains(it.Text, steerNote) {
			msg = it.Text
		}
	}
	if !strings.HasPrefix(msg, steeringHeader) {
		t.Errorf("the task's model got the message as %q, want a user message starting %q", hosttest.Trim(msg, 600), steeringHeader)
	}
	t.Logf("%s steering: from the host model's superagents_send call to the task's model request carrying it: %v (the task's request %d, after %d bash steps)",
		h.Name, convs[carrying].Req.Received.Sub(called.Req.Received), carrying+1, len(convs[carrying].Results("bash")))
}

// answerTask runs step 2 of TestHostsSteerAndAsk.
func answerTask(ctx context.Context, t *testing.T, h *hosttest.Host) {
	dump := func() string { return "\nwhat the host sent its model:\n" + h.Model.Dump() }
	mark, subMark := len(h.Model.Convs()), len(h.Sub.Convs())
	if _, r := runHost(ctx, t, h, cmdAsk+": start a sub-agent that asks you a question, and answer it.", ""); r.Err != nil {
		t.Fatalf("ask run failed\n%s%s", r, dump())
	}
	called, at := h.Model.Find(mark, lastResultOf("superagents_task"))
	if at < 0 {
		t.Fatalf("the host's model never got the result of superagents_task%s", dump())
	}
	id := launchedID.FindStringSubmatch(called.Last().Text)[1]
	// The host model's first request with the question, in the answer of
	// a superagents tool: the notice at its top.
	told, at := h.Model.Find(mark, func(c hosttest.Conv) bool {
		last := c.Last()
		return last.Kind == hosttest.ToolResult && strings.Contains(last.Name, "superagents_") && shows(last.Text, childQuestion)
	})
	if at < 0 {
		t.Fatalf("the task's question %q never reached the host's model%s", childQuestion, dump())
	}
	notice := told.Last()
	t.Logf("the question in the answer of %s: %s", notice.Name, hosttest.Trim(notice.Text, 800))
	for _, want := range []string{`asks: ` + childQuestion, "superagents_send", `one of "red", "blue"`} {
		if !shows(notice.Text, want) {
			t.Errorf("the %s answer that brought the question does not say %q:\n%s", notice.Name, want, hosttest.Trim(notice.Text, 3000))
		}
	}
	sent, sentAt := h.Model.Find(at, lastResultOf("superagents_send"))
	if sentAt < 0 {
		t.Fatalf("the host's model never got the result of superagents_send%s", dump())
	}
	if text := sent.Last().Text; !shows(text, "was waiting for an answer") || !shows(text, `"blue"`) {
		t.Errorf("superagents_send's answer does not say it answered the question with \"blue\":\n%s", hosttest.Trim(text, 2000))
	}
	tk := waitEnded(ctx, t, h, id)
	if want := pickedPrefix + answeredWith; tk.Status != "completed" || !strings.Contains(tk.Result, want) {
		t.Errorf("the asking task ended %s with %q (error %q), want completed with %q%s", tk.Status, tk.Result, tk.Error, want, dump())
	}
	convs := h.Sub.Convs()[subMark:]
	asked, answered := -1, -1
	for i, c := range convs {
		if asked < 0 && len(c.Results(tasktools.AskToolName)) == 0 && strings.Contains(c.LastUser(), childAsks) {
			asked = i // the request the task's model answered with the question
		}
		if r := c.Results(tasktools.AskToolName); answered < 0 && len(r) > 0 && r[0].Text == answeredWith {
			answered = i
		}
	}
	if asked < 0 || answered != asked+1 {
		t.Fatalf("the task's model asked at its request %d and read %q at %d, want the answer at the next request%s", asked+1, answeredWith, answered+1, dump())
	}
	polls := len(told.Results("superagents_list"))
	t.Logf("%s question: from the task's question to the host model's request carrying it: %v (%d superagents_list calls); from the host model's superagents_send call to the task's request with the answer: %v",
		h.Name, told.Req.Received.Sub(convs[asked].Req.Received), polls, convs[answered].Req.Received.Sub(told.Req.Received))
}

// lastResultOf matches a request whose newest item is the result of the
// tool whose name ends with suffix.
func lastResultOf(suffix string) func(hosttest.Conv) bool {
	return func(c hosttest.Conv) bool {
		last := c.Last()
		return last.Kind == hosttest.ToolResult && strings.HasSuffix(last.Name, suffix)
	}
}
