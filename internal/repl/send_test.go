package repl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/stacktest"
)

// The prompts of the tasks of the /send tests: one works in bash until
// the test releases it, one asks which colour.
const (
	workerPrompt = "work until released"
	askerPrompt  = "pick a colour"
)

// sendRig is a chat's world whose model is a fake Anthropic server: the
// worker task waits for the release file, then answers; the asker asks
// which colour and says what it was answered; the chat's agent, woken,
// notes what it was told.
func sendRig(t *testing.T) (*rig, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewAnthropic(t)
	srv.Handle(stacktest.SteerAndAskModel(workerPrompt, askerPrompt))
	eng := testRig(t, t.TempDir(), map[string]string{
		"ANTHROPIC_API_KEY": "test-key", config.EnvAnthropicBaseURL: srv.BaseURL(), config.EnvModel: "anthropic/claude-test",
	})
	return eng, srv
}

// bodies are the bodies of the model requests of the task with that
// prompt, in order.
func bodies(t *testing.T, srv *llmtest.Server, prompt string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, req := range srv.Requests() {
		if firstText(t, req) == prompt {
			out = append(out, req.Body)
		}
	}
	if out == nil {
		t.Fatalf("no model request for %q", prompt)
	}
	return out
}

// TestSendSteersATask: /send gives a running task a message without
// stopping it; its next model request carries it, /output lists it, and
// once the task completed /send says to resume it.
func TestSendSteersATask(t *testing.T) {
	eng, srv := sendRig(t)
	c := openChat(t, eng, "")
	e := collect(c)
	task := taskID(t, c, mustSubmit(t, c, "/task --desc worker general "+workerPrompt))
	short := sa.ShortID(task)
	// Sent once the task works in bash: it reads it at its next request.
	waitActivity(t, c, e, func(act Activity) bool { return act.ToolCalls == 1 })
	r := mustSubmit(t, c, "/send "+short+` "use the blue one"`)
	if got := blockText(r); !strings.HasPrefix(got, "Message 1 sent to task "+task+` ("worker"): it reads it before its next step`) {
		t.Fatalf("/send said %q", got)
	}
	if got := blockText(mustSubmit(t, c, "/output "+short)); !strings.Contains(got, "is running") || !strings.Contains(got, "1 tool call (last: bash)") ||
		!strings.HasSuffix(got, "Messages sent to it (1):\n- #1 from the user (waiting for the task's next step): use the blue one") {
		t.Fatalf("/output of the running task:\n%s", got)
	}
	eng.release(t)
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	if got := evs[len(evs)-1].Text; !strings.HasPrefix(got, `✓ Agent "worker" finished in`) {
		t.Fatalf("the notice: %q", got)
	}
	reqs := bodies(t, srv, workerPrompt)
	if len(reqs) != 2 || bytes.Contains(reqs[0], []byte("use the blue one")) {
		t.Fatalf("the task made %d model requests, want 2, the first without the message", len(reqs))
	}
	if !bytes.Contains(reqs[1], []byte("[Message from the user, sent while you work.")) || !bytes.Contains(reqs[1], []byte("use the blue one")) {
		t.Fatalf("the task's next model request lacks the message:\n%s", reqs[1])
	}
	settle(t, c)
	if got := blockText(mustSubmit(t, c, "/output "+short)); !strings.Contains(got, "Result:\nDone as told.") ||
		!strings.HasSuffix(got, "- #1 from the user (delivered): use the blue one") {
		t.Fatalf("/output of the completed task:\n%s", got)
	}
	mustFail(t, c, "/send "+short+" one more thing", `task `+short+` ("worker") has completed: /resume `+short+` "prompt" sends it a follow-up`)
	mustFail(t, c, "/send "+short, `/send: missing "message"`)
	mustFail(t, c, "/send zzzzzz hello", "no task with id zzzzzz")
}

// TestQuestionInTheChat: a task's question shows as a notice, without
// counting as its end: the task still runs, /tasks and /output show what
// it waits for, and the agent is woken to answer it if it can. /send
// answers it with one of its choices, and the task's next model request
// carries the answer.
func TestQuestionInTheChat(t *testing.T) {
	eng, srv := sendRig(t)
	c := openChat(t, eng, "")
	e := collect(c)
	task := taskID(t, c, mustSubmit(t, c, "/task --desc colour general "+askerPrompt))
	short := sa.ShortID(task)
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	want := `? Agent "colour" asks: Which colour?` + "\nAnswer it with a message to task " + short + " (in the chat: /send " + short + " <answer>); it waits 10m 0s, then goes on without"
	if got := evs[len(evs)-1].Text; got != want {
		t.Fatalf("the question's notice:\n%s\nwant\n%s", got, want)
	}
	caughtUp(t, c)
	if act := c.Activity(); act.Tasks != 1 || act.Task != "colour" {
		t.Fatalf("the asking task is not counted as running: %+v", act)
	}
	if got := blockText(mustSubmit(t, c, "/tasks")); !strings.Contains(got, `waiting for an answer: "Which colour?"`) {
		t.Fatalf("/tasks:\n%s", got)
	}
	if got := blockText(mustSubmit(t, c, "/output "+short)); !strings.HasSuffix(got, "It is waiting for an answer to its question: Which colour?\nAnswer it with /send "+short+" <answer>.") {
		t.Fatalf("/output:\n%s", got)
	}
	// The agent is woken to answer (it only notes it here).
	e.until(t, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Wake })

	mustFail(t, c, "/send "+short+" green", `the task asks "Which colour?": answer one of "red", "blue"`)
	r := mustSubmit(t, c, "/send "+short+" Blue")
	if got := blockText(r); got != `Task `+task+` ("colour") was waiting for an answer to "Which colour?": your answer "blue" was given to it, and it goes on.` {
		t.Fatalf("/send said %q", got)
	}
	evs = e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	if got := evs[len(evs)-1].Text; !strings.HasPrefix(got, `✓ Agent "colour" finished in`) {
		t.Fatalf("the notice after the answer: %q", got)
	}
	if reqs := bodies(t, srv, askerPrompt); len(reqs) != 2 || !bytes.Contains(reqs[1], []byte("The user answered: blue")) {
		t.Fatalf("the task's %d model requests: want 2, the second with the answer", len(reqs))
	}
	settle(t, c)
	if tk, _ := eng.Store.Task(context.Background(), task); tk.Result != "Blue it is." {
		t.Fatalf("the task's result: %q", tk.Result)
	}
}

// TestCancelAfterAQuestion: the notice of a question is no ending: the
// cancel that follows it is still the user's doing, shown but waking
// nobody.
func TestCancelAfterAQuestion(t *testing.T) {
	eng, _ := sendRig(t)
	c := openChat(t, eng, "")
	e := collect(c)
	task := taskID(t, c, mustSubmit(t, c, "/task --desc colour general "+askerPrompt))
	e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	e.until(t, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Wake })
	mustSubmit(t, c, "/cancel "+task)
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	if got := evs[len(evs)-1].Text; !strings.HasPrefix(got, `⊘ Agent "colour" cancelled after`) {
		t.Fatalf("the cancel's notice: %q", got)
	}
	settle(t, c)
	if n := wakes(e.drain()); n != 0 {
		t.Fatalf("%d wakes after the cancel, want none", n)
	}
	if act := c.Activity(); act.Tasks != 0 {
		t.Fatalf("the cancelled task still counts: %+v", act)
	}
}
