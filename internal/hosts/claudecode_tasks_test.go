package hosts_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/hosttest"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/termtest"
)

// The Tasks extension (io.modelcontextprotocol/tasks) with the real Claude
// Code, which declares it only in its interactive terminal session (seen
// with 2.1.328; never with -p): these tests drive that session in tmux.
// Given a task for a superagents_task call, Claude Code tells its model at
// once that the task runs in the background, polls tasks/get, and once
// the task has ended puts its result into the conversation as a
// <task-notification>, which wakes the idle model with a new request; the
// model's TaskStop sends tasks/cancel.

// cmdStop: the model launches a plain task, then stops it with TaskStop.
const cmdStop = "HALT"

// replyStopped is the model's reply once TaskStop answered;
// replyNotified its reply to a task notification; replyAsking its reply
// once it launched the task that asks (cmdAsk).
const (
	replyStopped  = "Stopped it."
	replyNotified = "Got the sub-agent's result."
	replyAsking   = "The sub-agent will ask you."
)

// askDescription is the description of the task that asks its user.
const askDescription = "pick a colour"

// stopDescription is the description of the task the model stops.
const stopDescription = "count the files"

// backgroundExit is the choice, in the dialog /exit shows while a task of
// a stdio server runs, that leaves the task alone.
const backgroundExit = "2. Move to background and exit"

// notification marks the message that brings an ended task to Claude
// Code's model.
const notification = "<task-notification>"

// Claude Code's immediate result of a call answered with a task names the
// server's task and its own (seen with 2.1.328: `started server-side task
// ID, running in the background as task LOCAL`), and says how to stop it
// (`use TaskStop with task_id "LOCAL"`).
var (
	backgroundTask = regexp.MustCompile(`server-side task (\S+), running in the background`)
	stopID         = regexp.MustCompile(`TaskStop with task_id "([^"]+)"`)
)

// tasksScript is the host's model: it acts on the last line of the newest
// prompt the user typed (REMEMBER, FORK, HALT), and answers a task
// notification with replyNotified.
func tasksScript(c hosttest.Conv) hosttest.Action {
	if len(c.Tools) == 0 {
		return hosttest.Action{Text: replyDone} // a request of Claude Code's own
	}
	last := c.Last()
	if last.Kind == hosttest.User && strings.Contains(last.Text, notification) {
		return hosttest.Action{Text: replyNotified}
	}
	at, prompt := -1, ""
	for i := len(c.Items) - 1; i >= 0 && at < 0; i-- {
		if it := c.Items[i]; it.Kind == hosttest.User && !strings.Contains(it.Text, notification) {
			lines := strings.Split(strings.TrimSpace(it.Text), "\n")
			if p := lines[len(lines)-1]; strings.HasPrefix(p, cmdRemember) || strings.HasPrefix(p, cmdFork) || strings.HasPrefix(p, cmdStop) || strings.HasPrefix(p, cmdAsk) {
				at, prompt = i, p
			}
		}
	}
	if at < 0 {
		return hosttest.Action{Text: replyDone}
	}
	var calls []hosttest.Item
	for _, it := range c.Items[at+1:] {
		if it.Kind == hosttest.ToolResult {
			calls = append(calls, it)
		}
	}
	call := func(suffix string, input map[string]any) hosttest.Action {
		if name := c.Tool(suffix); name != "" {
			return hosttest.Action{Tool: name, Input: input}
		}
		return hosttest.Action{Text: "I have no tool " + suffix + "."}
	}
	switch {
	case strings.HasPrefix(prompt, cmdRemember):
		return hosttest.Action{Text: replyNoted}
	case strings.HasPrefix(prompt, cmdFork):
		if len(calls) == 0 {
			return call("superagents_task", map[string]any{
				"description": forkDescription, "prompt": "What is the code word?", "agent": "general", "fork": true,
			})
		}
		return hosttest.Action{Text: replyLaunched}
	case strings.HasPrefix(prompt, cmdAsk):
		if len(calls) == 0 {
			return call("superagents_task", map[string]any{"description": askDescription, "prompt": childAsks + ": ask me.", "agent": "general"})
		}
		return hosttest.Action{Text: replyAsking}
	default: // cmdStop
		switch len(calls) {
		case 0:
			return call("superagents_task", map[string]any{"description": stopDescription, "prompt": "How many files are there?", "agent": "general"})
		case 1:
			m := stopID.FindStringSubmatch(calls[0].Text)
			if m == nil {
				return hosttest.Action{Text: "I was not told how to stop the task."}
			}
			return call("TaskStop", map[string]any{"task_id": m[1]})
		}
		return hosttest.Action{Text: replyStopped}
	}
}

// TestClaudeCodeTasks drives one interactive Claude Code conversation
// with superagents as its MCP server, over stdio (`superagents mcp`) and
// over streamable HTTP (`superagents serve`'s /mcp with its token):
//
//  1. the user says a fact;
//  2. the model forks a sub-agent, whose model call is held: the call's
//     result reaches the model while the sub-agent still runs, saying the
//     task moved to the background; once the sub-agent is let go, its
//     answer (the fact: the fork carried the conversation) reaches the
//     model in a new request, a task notification, though the model never
//     asked superagents for it;
//  3. the model launches another sub-agent and stops it with TaskStop: the
//     superagents task ends cancelled;
//  4. the model launches a sub-agent that asks its user a question with
//     choices (superagents_ask): Claude Code shows it, the user picks one,
//     the sub-agent's next model request carries the answer, and the task
//     completes, never cancelled (askUser);
//  5. the model forks again, and the user leaves Claude Code while the
//     sub-agent runs: the task goes on and completes; the conversation,
//     resumed (claude --resume), gets its result.
func TestClaudeCodeTasks(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), testLimit)
			defer cancel()
			sub := hosttest.NewSubModel(t, fact)
			sub.Script(childScript)
			h := newHost(t, hosttest.ClaudeCode, hosttest.Options{Script: tasksScript, Sub: sub})
			if transport == "http" {
				h.Serve(ctx, t)
			}
			tasksConversation(ctx, t, h)
		})
	}
}

func tasksConversation(ctx context.Context, t *testing.T, h *hosttest.Host) {
	sub := h.Sub
	term := h.Interactive(t, "")
	shown := func() string {
		return "\nwhat Claude Code sent its model:\n" + h.Model.Dump() + "\nthe screen:\n" + term.Screen()
	}
	term.WaitText("❯", 1)
	hosttest.WaitConnected(t, term, "superagents")

	// 1. The fact.
	say(term, cmdRemember+": the code word is "+fact+". Just say noted.")
	term.WaitText(replyNoted, 1)

	// 2. The fork, held at its model call.
	sub.Hold()
	mark := len(h.Model.Convs())
	say(term, cmdFork+": ask a sub-agent for the code word.")
	term.WaitText(replyLaunched, 1)
	launched, at := h.Model.Find(mark, func(c hosttest.Conv) bool {
		return c.Last().Kind == hosttest.ToolResult && strings.HasSuffix(c.Last().Name, "superagents_task")
	})
	if at < 0 {
		t.Fatalf("Claude Code's model never got the result of superagents_task%s", shown())
	}
	immediate := launched.Last().Text
	m := backgroundTask.FindStringSubmatch(immediate)
	if m == nil {
		t.Fatalf("the result of superagents_task Claude Code gave its model does not say the task runs in the background:\n%s%s", hosttest.Trim(immediate, 2000), shown())
	}
	id := m[1]
	// superagents' note for the model (modelImmediateResponse), with the
	// fork note.
	for _, want := range []string{"Task " + id + " launched in the background", "starts with a digest of your Claude Code conversation"} {
		if !shows(immediate, want) {
			t.Errorf("the immediate result of superagents_task Claude Code gave its model does not say %q:\n%s", want, hosttest.Trim(immediate, 2000))
		}
	}
	// How long Claude Code took, from the request its model answered with
	// the call to the request with its result: logged, not checked (the
	// sub-agent being held shows the answer did not wait for it).
	if asked, i := h.Model.Find(mark, func(c hosttest.Conv) bool {
		return c.Last().Kind == hosttest.User && strings.Contains(c.Last().Text, cmdFork)
	}); i >= 0 && i < at {
		t.Logf("from the model's superagents_task call to the request with its result: %v", launched.Req.Received.Sub(asked.Req.Received))
	}
	// The sub-agent is still held at its model call: the answer did not
	// wait for it.
	forked := taskByID(ctx, t, h, id)
	if forked.Status != "running" && forked.Status != "queued" {
		t.Errorf("when the model got the task, superagents' task %s was %s, not running (error %q)", id, forked.Status, forked.Error)
	}
	sub.Release()
	// The script never calls superagents_output: the answer can reach the
	// model only through Claude Code's task notification.
	woken := waitNotification(t, h, mark, id, shown)
	if !shows(woken, "SAW:"+fact) {
		t.Errorf("the task notification does not carry the sub-agent's answer SAW:%s:\n%s", fact, hosttest.Trim(woken, 3000))
	}
	if reqs := sub.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0], fact) {
		t.Errorf("the forked sub-agent's first model request (of %d) does not carry the fact %q said earlier in the conversation", len(reqs), fact)
	}
	if tk := taskByID(ctx, t, h, id); tk.Status != "completed" {
		t.Errorf("the forked task is %s, not completed (error %q)", tk.Status, tk.Error)
	}
	term.WaitText(replyNotified, 1)

	// 3. Another sub-agent, stopped with TaskStop.
	sub.Hold()
	mark = len(h.Model.Convs())
	say(term, cmdStop+": start a sub-agent to count the files, then stop it.")
	term.WaitText(replyStopped, 1)
	stopped, at := h.Model.Find(mark, func(c hosttest.Conv) bool {
		return c.Last().Kind == hosttest.ToolResult && strings.HasSuffix(c.Last().Name, "TaskStop")
	})
	if at < 0 {
		t.Fatalf("the model's TaskStop got no result%s", shown())
	}
	t.Logf("TaskStop: %s", hosttest.Trim(stopped.Last().Text, 400))
	var halted task
	for _, tk := range listTasks(ctx, t, h) {
		if tk.Description == stopDescription {
			halted = tk
		}
	}
	if halted.ID == "" {
		t.Fatalf("no task %q was launched%s", stopDescription, shown())
	}
	if tk := waitEnded(ctx, t, h, halted.ID); tk.Status != "cancelled" {
		t.Errorf("after the model's TaskStop the task is %s, not cancelled (error %q)%s", tk.Status, tk.Error, shown())
	}
	// The debug log says so: what checkNotCancelled looks for is there
	// when Claude Code cancels.
	waitDebugLog(t, h, "task "+halted.ID+": cancel sent")
	sub.Release()

	// 4. A task that asks its user.
	askUser(ctx, t, h, term, shown)

	// 5. A fork left running by a Claude Code that exits, and the result
	// in the resumed conversation.
	sub.Hold()
	mark = len(h.Model.Convs())
	say(term, cmdFork+": ask another sub-agent for the code word.")
	term.WaitText(replyLaunched, 2)
	launched, at = h.Model.Find(mark, func(c hosttest.Conv) bool {
		return c.Last().Kind == hosttest.ToolResult && strings.HasSuffix(c.Last().Name, "superagents_task")
	})
	if at < 0 {
		t.Fatalf("Claude Code's model never got the result of the second superagents_task%s", shown())
	}
	m = backgroundTask.FindStringSubmatch(launched.Last().Text)
	if m == nil {
		t.Fatalf("the second superagents_task did not run in the background:\n%s%s", hosttest.Trim(launched.Last().Text, 2000), shown())
	}
	left := m[1]
	say(term, "/exit")
	// With a task of a server of its own (stdio) running, Claude Code asks
	// first: "Exit and stop tasks", "Move to background and exit" (which
	// says the task "couldn't be moved and was stopped"), or "Stay"; it
	// sends no tasks/cancel either way (seen with 2.1.328). With a remote
	// server (HTTP) it exits at once.
	if strings.Contains(term.Wait("Claude Code to exit or ask", func(s string) bool {
		return strings.Contains(s, "[exited ") || strings.Contains(s, backgroundExit)
	}), backgroundExit) {
		term.Keys("2")
	}
	code := term.WaitExit()
	if code != 0 {
		t.Errorf("Claude Code's /exit exited with %d; the screen:\n%s", code, term.Screen())
	}
	if tk := taskByID(ctx, t, h, left); tk.Status != "running" && tk.Status != "queued" {
		t.Errorf("after Claude Code exited, the task it left is %s, not running (error %q)", tk.Status, tk.Error)
	}
	sub.Release()
	if tk := waitEnded(ctx, t, h, left); tk.Status != "completed" {
		t.Errorf("the task Claude Code left running ended %s, not completed (error %q)", tk.Status, tk.Error)
	}
	sessions := h.Sessions()
	if len(sessions) != 1 {
		t.Fatalf("want one Claude Code conversation, found %v", sessions)
	}
	mark = len(h.Model.Convs())
	term = h.Interactive(t, sessions[0])
	woken = waitNotification(t, h, mark, left, shown)
	if !shows(woken, "SAW:"+fact) {
		t.Errorf("the task notification in the resumed conversation does not carry the sub-agent's answer SAW:%s:\n%s\nthe fork's answer (its note says what it carried):\n%s",
			fact, hosttest.Trim(woken, 3000), hosttest.Trim(launched.Last().Text, 2000))
	}
	term.WaitText(replyNotified, 2)
}

// say types a line into Claude Code and, once it shows, presses Enter
// (an Enter sent with the text is taken as part of a paste).
func say(term *termtest.Terminal, line string) {
	term.Keys("-l", line)
	term.WaitText(line, 1)
	term.Keys("Enter")
}

// taskByID is one task of `superagents tasks --json`.
func taskByID(ctx context.Context, t *testing.T, h *hosttest.Host, id string) task {
	t.Helper()
	for _, tk := range listTasks(ctx, t, h) {
		if tk.ID == id {
			return tk
		}
	}
	t.Fatalf("superagents tasks does not list task %s", id)
	return task{}
}

// notifyLimit bounds the wait for a task notification: Claude Code polls
// every 2 s (superagents' pollIntervalMs). It guards against a hung test.
const notifyLimit = time.Minute

// waitNotification waits for a request, from the index mark on, whose
// newest message is a task notification naming the server's task id, and
// returns that message.
func waitNotification(t *testing.T, h *hosttest.Host, mark int, id string, shown func() string) string {
	t.Helper()
	deadline := time.Now().Add(notifyLimit)
	for {
		c, at := h.Model.Find(mark, func(c hosttest.Conv) bool {
			last := c.Last()
			return last.Kind == hosttest.User && strings.Contains(last.Text, notification) && strings.Contains(last.Text, id)
		})
		if at >= 0 {
			return c.Last().Text
		}
		if time.Now().After(deadline) {
			t.Fatalf("no task notification of task %s reached Claude Code's model within %v%s", id, notifyLimit, shown())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// askUser: the model launches a task that asks its user a question with
// choices (superagents_ask); Claude Code shows it on screen, the user
// picks a choice, the task's next model request carries the answer, and
// the task completes: Claude Code does not cancel it (its debug log says
// it answered, and never that it sent tasks/cancel); the task's result
// reaches the model as a task notification.
func askUser(ctx context.Context, t *testing.T, h *hosttest.Host, term *termtest.Terminal, shown func() string) {
	mark, subMark := len(h.Model.Convs()), len(h.Sub.Convs())
	say(term, cmdAsk+": start a sub-agent that asks me which colour.")
	term.WaitText(replyAsking, 1)
	launched, at := h.Model.Find(mark, lastResultOf("superagents_task"))
	if at < 0 {
		t.Fatalf("Claude Code's model never got the result of the asking superagents_task%s", shown())
	}
	m := backgroundTask.FindStringSubmatch(launched.Last().Text)
	if m == nil {
		t.Fatalf("the asking superagents_task did not run in the background:\n%s%s", hosttest.Trim(launched.Last().Text, 2000), shown())
	}
	id := m[1]
	// Claude Code (2.1.328) shows the elicitation under the prompt:
	// "MCP server “superagents” requests your input", the question, and
	// the form's one field, collapsed ("Answer: ▸ not set"): → opens the
	// choices, ↓ moves to blue, Enter picks it ("✔ Answer: blue") and
	// moves to Accept, Enter accepts.
	screen := term.Wait("the question on screen", func(s string) bool {
		return strings.Contains(s, childQuestion) && strings.Contains(s, "requests your input")
	})
	onScreen := time.Now()
	t.Logf("the question on screen:\n%s", screen[max(0, strings.LastIndex(screen, "requests your input")-200):])
	asking := taskByID(ctx, t, h, id)
	term.Keys("Right")
	term.WaitText("◯ blue", 1)
	term.Keys("Down")
	term.Wait("blue chosen", func(s string) bool { return strings.Contains(s, "❯ ◯ blue") })
	term.Keys("Enter")
	term.Wait("blue picked", func(s string) bool {
		return strings.Contains(s, "✔ Answer: blue") && strings.Contains(s, "❯ Accept")
	})
	// Claude Code refuses an Enter on Accept that comes right after the
	// focus landed there (a guard against a key typed ahead confirming
	// what the user has not read), and each refused press starts the
	// guard again: Enter is pressed until the question goes, a second
	// apart (seen with 2.1.328).
	var accepted time.Time
	enters := 0
	for range acceptTries {
		term.Keys("Enter")
		accepted, enters = time.Now(), enters+1
		time.Sleep(time.Second)
		if !strings.Contains(term.Screen(), "requests your input") {
			break
		}
	}
	term.Wait("the question to go", func(s string) bool { return !strings.Contains(s, "requests your input") })
	if asking.Status != "running" {
		t.Errorf("while its question was on screen the task was %s, not running (error %q)", asking.Status, asking.Error)
	}
	woken := waitNotification(t, h, mark, id, shown)
	if want := pickedPrefix + answeredWith; !shows(woken, want) {
		t.Errorf("the task notification does not carry the task's answer %q:\n%s", want, hosttest.Trim(woken, 3000))
	}
	// The model's reply to it (the second: step 2 had the first) ends the
	// turn the notification started, before the next prompt.
	term.WaitText(replyNotified, 2)
	if tk := taskByID(ctx, t, h, id); tk.Status != "completed" {
		t.Errorf("the task that asked its user is %s, not completed (error %q)%s", tk.Status, tk.Error, shown())
	}
	convs := h.Sub.Convs()[subMark:]
	question, answer := -1, -1
	for i, c := range convs {
		if r := c.Results(tasktools.AskToolName); len(r) == 0 && question < 0 && strings.Contains(c.LastUser(), childAsks) {
			question = i
		} else if len(r) > 0 && answer < 0 {
			answer = i
			if r[0].Text != answeredWith {
				t.Errorf("the task's model read %q after its question, want %q", r[0].Text, answeredWith)
			}
		}
	}
	if question < 0 || answer != question+1 {
		t.Fatalf("the task's model asked at its request %d and read the answer at %d, want the next%s", question+1, answer+1, shown())
	}
	t.Logf("question: from the task's question to it on screen: %v; from the user's Accept (Enter pressed %d times) to the task's request with the answer: %v",
		onScreen.Sub(convs[question].Req.Received), enters, convs[answer].Req.Received.Sub(accepted))
	checkNotCancelled(t, h, id)
}

// acceptTries bounds the Enters pressed to accept a question: a guard
// against a hung test.
const acceptTries = 10

// checkNotCancelled: Claude Code's debug log says it answered the task's
// question (tasks/update), and never that it cancelled the task or would
// (its driver logs "task ID: cancel sent" once it sent tasks/cancel, and
// "the task will be cancelled" when it cannot serve a request; seen with
// 2.1.328).
func checkNotCancelled(t *testing.T, h *hosttest.Host, id string) {
	t.Helper()
	log := h.DebugLog()
	if !strings.Contains(log, "task "+id+": answered ") {
		t.Errorf("Claude Code's debug log does not say it answered task %s's question:\n%s", id, linesWith(log, id))
	}
	for _, line := range strings.Split(linesWith(log, id), "\n") {
		if strings.Contains(strings.ToLower(line), "cancel") {
			t.Errorf("Claude Code cancelled the task that asked its user, or was about to: %s", line)
		}
	}
}

// waitDebugLog waits until Claude Code's debug log holds text, at most
// notifyLimit (it writes the log as it goes).
func waitDebugLog(t *testing.T, h *hosttest.Host, text string) {
	t.Helper()
	deadline := time.Now().Add(notifyLimit)
	for !strings.Contains(h.DebugLog(), text) {
		if time.Now().After(deadline) {
			t.Errorf("Claude Code's debug log does not say %q after %v", text, notifyLimit)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// linesWith returns the lines of log that hold s.
func linesWith(log, s string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
