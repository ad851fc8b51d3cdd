package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/stacktest"
)

// The prompts of TestTaskSend's tasks: one works until the test releases
// it, one asks which colour.
const (
	steeredPrompt = "work until released"
	askingPrompt  = "pick a colour"
)

// sendModel is TestTaskSend's model: the worker waits in bash for the
// release file, then answers; the asker asks its question, then says
// what it was answered.
func sendModel(t *testing.T) *llmtest.Server {
	srv := llmtest.NewAnthropic(t)
	srv.APIKey = "test-key"
	srv.Handle(stacktest.SteerAndAskModel(steeredPrompt, askingPrompt))
	return srv
}

// TestTaskSend: task send steers a running task (the message reaches its
// next model request), answers the question a task asks (task output
// shows it meanwhile), and is refused what it cannot do, in one line with
// the exit codes of the other task commands.
func TestTaskSend(t *testing.T) {
	srv := sendModel(t)
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"], h.env[config.EnvAnthropicBaseURL], h.env[config.EnvModel] = "test-key", srv.BaseURL(), "anthropic/claude-test"
	parent := h.ok(seedParent, "import", "-")
	ws := t.TempDir()
	launch := func(desc, prompt string) <-chan result {
		done := make(chan result, 1)
		go func() {
			done <- h.run("--workspace", ws, "task", "launch", "--session", parent, "--agent", "general", "--description", desc, "--wait", prompt)
		}()
		return done
	}
	steeredDone, askerDone := launch("steered", steeredPrompt), launch("asker", askingPrompt)
	steered, asker := taskNamed(t, h, "steered"), taskNamed(t, h, "asker")
	// Messages go to the steered task once it works in bash: it reads
	// them at its next model request.
	pollOutput(t, h, steered, "1 tool call (last: bash)")

	// task output shows the question, with the command that answers it.
	waiting := pollOutput(t, h, asker, "It is waiting for an answer to its question: Which colour?")
	if !strings.Contains(waiting, "Answer it with: superagents task send "+asker+" ANSWER") {
		t.Fatalf("task output of the asking task:\n%s", waiting)
	}

	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   []string // in stdout (JSON: a valid object holding them)
		err   string
	}{
		{"a message to a running task", "", []string{steered[:6], "use", "the", "blue", "one"}, 0,
			[]string{"Message 1 sent to task " + steered + ` ("steered"): it reads it before its next step`}, ""},
		{"--json", "", []string{"--json", steered, "and skip the tests"}, 0,
			[]string{`"id": "` + steered + `"`, `"answered": false`}, ""},
		{"the message from standard input", "keep it short\n", []string{steered, "-"}, 0, []string{"Message 3 sent"}, ""},
		{"an answer that is not a choice", "", []string{asker, "green"}, 2, nil, `the task asks "Which colour?": answer one of "red", "blue"`},
		{"the answer to its question", "", []string{"--json", asker, "Blue"}, 0,
			[]string{`"id": "` + asker + `"`, `"answered": true`, `"answer": "blue"`}, ""},
		{"no message", "", []string{steered}, 2, nil, `no message: give it as arguments, or "-" to read standard input`},
		{"an empty message", "", []string{steered, " "}, 2, nil, "no message"},
		{"an unknown task", "", []string{"zzzzzz", "hello"}, 1, nil, "no task with id zzzzzz"},
		{"an id too short", "", []string{"abc", "hello"}, 2, nil, "too short"},
		{"no arguments", "", nil, 2, nil, "requires at least 1 arg"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.runIn(tt.stdin, append([]string{"task", "send"}, tt.args...)...)
			checkRun(t, r, tt.code, tt.out, tt.err)
		})
	}

	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, done := range map[string]<-chan result{"steered": steeredDone, "asker": askerDone} {
		if r := <-done; r.code != 0 {
			t.Fatalf("task launch --wait of %s: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
	if got := h.ok("", "task", "output", asker); !strings.HasSuffix(got, "Result:\nBlue it is.") {
		t.Fatalf("the asker's output:\n%s", got)
	}
	// The steered task's next model request carried the three messages
	// (its first, made before they were sent, none).
	bodies := requestBodies(t, srv, steeredPrompt)
	if len(bodies) != 2 || bytes.Contains(bodies[0], []byte("use the blue one")) {
		t.Fatalf("the steered task made %d model requests, want 2, the first without the message", len(bodies))
	}
	last := bodies[1]
	for _, want := range []string{"[Message from the user, sent while you work.", "use the blue one", "and skip the tests", "keep it short"} {
		if !bytes.Contains(last, []byte(want)) {
			t.Errorf("the steered task's last model request lacks %q", want)
		}
	}
	out := h.ok("", "task", "output", steered)
	if !strings.Contains(out, "Result:\nDone as told.") || !strings.Contains(out, "Messages sent to it (3):\n- #1 from the user (delivered): use the blue one") {
		t.Fatalf("the steered task's output:\n%s", out)
	}
	var view struct {
		Messages []struct {
			Seq  int64  `json:"seq"`
			Text string `json:"text"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "task", "output", "--json", steered)), &view); err != nil || len(view.Messages) != 3 || view.Messages[2].Text != "keep it short" {
		t.Fatalf("task output --json: %+v, %v", view, err)
	}

	t.Run("a completed task", func(t *testing.T) {
		r := h.run("task", "send", steered, "one more thing")
		checkRun(t, r, 1, nil, `task `+steered[:6]+`... ("steered") has completed: resume it to send a follow-up: superagents task resume `+steered+" PROMPT")
	})
}

// checkRun checks a command's exit code, what its stdout holds (a JSON
// object when it starts with one) and its error.
func checkRun(t *testing.T, r result, code int, out []string, errText string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, errText) {
		t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, code, errText)
	}
	if strings.HasPrefix(r.stdout, "{") && !json.Valid([]byte(r.stdout)) {
		t.Fatalf("stdout is no JSON: %s", r.stdout)
	}
	for _, want := range out {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if code != 0 && r.stdout != "" {
		t.Fatalf("a refusal printed %q", r.stdout)
	}
}

// taskNamed waits until the task with that description is running and
// returns its id.
func taskNamed(t *testing.T, h *harness, desc string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var list []struct {
			ID          string `json:"id"`
			Description string `json:"description"`
			Status      string `json:"status"`
		}
		if err := json.Unmarshal([]byte(h.ok("", "tasks", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		for _, tk := range list {
			if tk.Description == desc && tk.Status == "running" {
				return tk.ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %q never ran", desc)
	return ""
}

// pollOutput waits until a task's output holds want and returns it.
func pollOutput(t *testing.T, h *harness, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := h.ok("", "task", "output", id)
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("task output never showed %q:\n%s", want, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requestBodies are the bodies of the model requests of the task with
// that prompt, in order.
func requestBodies(t *testing.T, srv *llmtest.Server, prompt string) [][]byte {
	t.Helper()
	var bodies [][]byte
	for _, req := range srv.Requests() {
		if req.FirstText() == prompt {
			bodies = append(bodies, req.Body)
		}
	}
	if bodies == nil {
		t.Fatalf("no model request for %q", prompt)
	}
	return bodies
}
