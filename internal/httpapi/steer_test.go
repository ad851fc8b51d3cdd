package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tools"
)

// sentReply is the answer of POST /v1/tasks/{id}/messages.
type sentReply struct {
	sa.Task
	Question         string          `json:"question"`
	Answered         bool            `json:"answered"`
	Answer           string          `json:"answer"`
	AnsweredQuestion string          `json:"answered_question"`
	Message          *sa.TaskMessage `json:"message"`
	Text             string          `json:"text"`
}

// inboxReply is the answer of GET /v1/tasks/{id}/inbox.
type inboxReply struct {
	TaskID    string           `json:"task_id"`
	Messages  []sa.TaskMessage `json:"messages"`
	Questions []struct {
		Key        string     `json:"key"`
		Question   string     `json:"question"`
		Choices    []string   `json:"choices"`
		Outcome    string     `json:"outcome"`
		Answer     string     `json:"answer"`
		AnsweredAt *time.Time `json:"answered_at"`
	} `json:"questions"`
}

// questionedTask is a task as the API shows it, with its question.
type questionedTask struct {
	sa.Task
	Question string `json:"question"`
}

// waitQuestion waits until an active task asks a question, and returns
// it.
func (h *harness) waitQuestion(id string) string {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var got questionedTask
		h.ok(http.StatusOK, "GET", "/v1/tasks/"+id, nil, &got)
		switch {
		case got.Question != "":
			return got.Question
		case !got.Status.Active():
			h.t.Fatalf("task %s ended %s without asking", id, got.Status)
		case time.Now().After(deadline):
			h.t.Fatalf("task %s asked nothing within a minute", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) inbox(id string) inboxReply {
	h.t.Helper()
	var in inboxReply
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+id+"/inbox", nil, &in)
	return in
}

// carried returns the model request that carried text, or fails.
func (h *harness) carried(text string) []byte {
	h.t.Helper()
	for _, req := range h.model.Requests() {
		if bytes.Contains(req.Body, []byte(text)) {
			return req.Body
		}
	}
	h.t.Fatalf("no model request carried %q", text)
	return nil
}

// TestSendToTask: POST /v1/tasks/{id}/messages sends a message to a
// running task, which its next model request carries, or answers the
// question the task waits on; ended, cleared and unknown tasks and bad
// bodies are refused with what to do, and nothing is stored.
func TestSendToTask(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	completed := h.launch(parent.ID, "done", "quick: done")
	h.waitTask(completed.ID)
	failed := h.launch(parent.ID, "fails", "fail")
	if got := h.waitTask(failed.ID); got.Status != sa.TaskError {
		t.Fatalf("the failing task ended %s", got.Status)
	}
	cancelled := h.launch(parent.ID, "stuck", "gate: "+string(h.gate("never")))
	h.toolStarted(cancelled.ID)
	h.ok(http.StatusOK, "POST", "/v1/tasks/"+cancelled.ID+"/cancel", nil, nil)
	other := h.session()
	cleared := h.launch(other.ID, "cleared", "quick: cleared")
	h.waitTask(cleared.ID)
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+other.ID+"/tasks/clear", nil, nil)

	gate := h.gate("steer-gate")
	running := h.launch(parent.ID, "steered", "gate: "+string(gate))
	t.Cleanup(func() { gate.open(t) })
	h.toolStarted(running.ID)
	asking := h.launch(parent.ID, "asks", "ask: Which colour? | red, blue")
	if q := h.waitQuestion(asking.ID); q != "Which colour?" {
		t.Fatalf("the asking task asks %q", q)
	}

	tests := []struct {
		name, task string
		body       any
		headers    []string
		want       int
		wantErr    []string // pieces of the error message
		wantField  string
	}{
		{"completed", completed.ID, map[string]any{"message": "more"}, nil, 409,
			[]string{"has ended (completed)", "resume it", "POST /v1/tasks/" + completed.ID + "/resume"}, ""},
		{"cancelled", cancelled.ID, map[string]any{"message": "more"}, nil, 409, []string{"was cancelled", "launch a new task"}, ""},
		{"failed", failed.ID, map[string]any{"message": "more"}, nil, 409, []string{"failed", "not resumed"}, ""},
		{"cleared", cleared.ID, map[string]any{"message": "more"}, nil, 410, []string{"was cleared"}, ""},
		{"unknown task", "zzzzzzzz", map[string]any{"message": "more"}, nil, 404, []string{"no task with id zzzzzzzz"}, ""},
		{"id too short", "zz", map[string]any{"message": "more"}, nil, 400, []string{"too short"}, ""},
		{"wrong token", running.ID, map[string]any{"message": "more"}, []string{"Authorization", "Bearer not-the-token-0123456789"}, 401, []string{"wrong token"}, ""},
		{"no token", running.ID, map[string]any{"message": "more"}, []string{"Authorization", ""}, 401, []string{"missing token"}, ""},
		{"not a choice", asking.ID, map[string]any{"message": "green"}, nil, 400, []string{`"red", "blue"`}, "message"},
		{"empty message", running.ID, map[string]any{"message": " \n "}, nil, 400, []string{"is required"}, "message"},
		{"no message", running.ID, map[string]any{}, nil, 400, []string{"is required"}, "message"},
		{"too long", running.ID, map[string]any{"message": strings.Repeat("x", sa.MaxTaskMessage+1)}, nil, 400,
			[]string{fmt.Sprintf("at most %d", sa.MaxTaskMessage)}, "message"},
		{"unknown field", running.ID, map[string]any{"text": "more"}, nil, 400, []string{"not a field"}, "text"},
		{"message not a string", running.ID, `{"message": 5}`, nil, 400, []string{"must be a string"}, "message"},
		{"not JSON", running.ID, "{message", nil, 400, []string{"not valid JSON"}, ""},
		{"no body", running.ID, nil, nil, 400, []string{"needs a JSON body"}, ""},
		{"not JSON content type", running.ID, "message=more", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, []string{"must be JSON"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request("POST", "/v1/tasks/"+tt.task+"/messages", tt.body, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("POST = %d %s, want %d", r.status, r.body, tt.want)
			}
			var body struct {
				Error  string `json:"error"`
				Status int    `json:"status"`
				Field  string `json:"field"`
			}
			r.decode(t, &body)
			for _, piece := range tt.wantErr {
				if !strings.Contains(body.Error, piece) {
					t.Errorf("error %q does not say %q", body.Error, piece)
				}
			}
			if body.Status != tt.want || body.Field != tt.wantField {
				t.Errorf("error body = %+v, want status %d, field %q", body, tt.want, tt.wantField)
			}
		})
	}
	for _, id := range []string{completed.ID, cancelled.ID, failed.ID, cleared.ID, running.ID, asking.ID} {
		if in := h.inbox(id); len(in.Messages) != 0 {
			t.Errorf("a refused send stored a message for %s: %+v", id, in.Messages)
		}
	}

	t.Run("to a running task", func(t *testing.T) { sendToRunning(t, h, running.ID, gate) })
	t.Run("an answer to a question", func(t *testing.T) { answerChoice(t, h, asking.ID) })
	t.Run("an answer to a free question", func(t *testing.T) {
		free := h.launch(parent.ID, "asks freely", "ask: What name?")
		h.waitQuestion(free.ID)
		if in := h.inbox(free.ID); len(in.Questions) != 1 || in.Questions[0].Choices != nil || in.Questions[0].Outcome != "waiting" {
			t.Fatalf("inbox of a free question = %+v", in)
		}
		var sent sentReply
		h.ok(http.StatusOK, "POST", "/v1/tasks/"+free.ID[:6]+"/messages", map[string]any{"message": "Ada Lovelace"}, &sent)
		if !sent.Answered || sent.Answer != "Ada Lovelace" || sent.Message != nil {
			t.Fatalf("answer = %+v", sent)
		}
		if done := h.waitTask(free.ID); done.Result != "passed The user answered: Ada Lovelace" {
			t.Fatalf("the task ended %s with %q", done.Status, done.Result)
		}
	})
}

// sendToRunning sends a message to a task that waits in a tool, checks
// what is stored, opens the gate and sees the task's next model request
// carry it.
func sendToRunning(t *testing.T, h *harness, id string, gate gate) {
	const text = "use the blue paint, not the red"
	var sent sentReply
	h.ok(http.StatusOK, "POST", "/v1/tasks/"+id+"/messages", map[string]any{"message": text}, &sent)
	if sent.ID != id || sent.Answered || sent.Answer != "" || sent.Message == nil {
		t.Fatalf("send = %+v", sent)
	}
	if m := sent.Message; m.Seq != 1 || m.Text != text || m.From != "the user" || m.TaskID != id || m.DeliveredAt != nil {
		t.Fatalf("the stored message = %+v", m)
	}
	if !strings.Contains(sent.Text, "Message 1 sent to task "+id) {
		t.Errorf("text = %q", sent.Text)
	}
	if in := h.inbox(id); len(in.Messages) != 1 || in.Messages[0].Text != text || !in.Messages[0].Pending() {
		t.Fatalf("inbox before delivery = %+v", in)
	}
	gate.open(t)
	done := h.waitTask(id)
	if done.Status != sa.TaskCompleted || done.Result != "steered: "+text {
		t.Fatalf("the task ended %s with %q, want its answer to the message", done.Status, done.Result)
	}
	if body := h.carried(text); !bytes.Contains(body, []byte("tool_result")) || !bytes.Contains(body, []byte("[Message from the user")) {
		t.Errorf("the request that carried the message is not the one after the tool: %s", body)
	}
	in := h.inbox(id)
	if len(in.Messages) != 1 || in.Messages[0].DeliveredAt == nil || in.Messages[0].MessageID == 0 {
		t.Fatalf("inbox after delivery = %+v", in)
	}
	var transcript struct{ Messages []sa.Message }
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+id+"/messages", nil, &transcript)
	if !slices.ContainsFunc(transcript.Messages, func(m sa.Message) bool { return m.ID == in.Messages[0].MessageID && strings.Contains(m.Text(), text) }) {
		t.Errorf("the task's conversation has no message %d with the text", in.Messages[0].MessageID)
	}
}

// answerChoice answers a task's question with choices: the task shows it
// in listings and its inbox, and goes on with the answer.
func answerChoice(t *testing.T, h *harness, id string) {
	var list struct{ Tasks []questionedTask }
	h.ok(http.StatusOK, "GET", "/v1/tasks?status=running", nil, &list)
	if i := slices.IndexFunc(list.Tasks, func(x questionedTask) bool { return x.ID == id }); i < 0 || list.Tasks[i].Question != "Which colour?" {
		t.Errorf("the listing shows %+v", list.Tasks)
	}
	in := h.inbox(id)
	if len(in.Questions) != 1 || in.Questions[0].Question != "Which colour?" || !slices.Equal(in.Questions[0].Choices, []string{"red", "blue"}) ||
		in.Questions[0].Outcome != "waiting" {
		t.Fatalf("inbox = %+v", in)
	}
	var sent sentReply
	h.ok(http.StatusOK, "POST", "/v1/tasks/"+id+"/messages", map[string]any{"message": "BLUE"}, &sent)
	if !sent.Answered || sent.Answer != "blue" || sent.AnsweredQuestion != "Which colour?" || sent.Message != nil || sent.Question != "" {
		t.Fatalf("answer = %+v", sent)
	}
	if !strings.Contains(sent.Text, `your answer "blue" was given`) {
		t.Errorf("text = %q", sent.Text)
	}
	// The question is in the inbox until the task ends.
	if in := h.inbox(id); len(in.Questions) > 0 && (in.Questions[0].Outcome != "answered" || in.Questions[0].Answer != "blue") {
		t.Errorf("inbox after the answer = %+v", in)
	}
	if done := h.waitTask(id); done.Status != sa.TaskCompleted || done.Result != "passed The user answered: blue" {
		t.Fatalf("the task ended %s with %q", done.Status, done.Result)
	}
	if in := h.inbox(id); len(in.Messages) != 0 {
		t.Errorf("an answer was stored as a message: %+v", in.Messages)
	}
}

// TestSendAnswersPermission: a task whose command the policy asks about
// waits for a yes or a no, which a message gives.
func TestSendAnswersPermission(t *testing.T) {
	h := newHarness(t, func(h *harness) {
		h.cfg.Permissions.Bash = tools.BashRules{Allow: []string{"ls"}, Unlisted: tools.UnlistedAsk}
	})
	parent := h.session()
	gate := h.gate("allowed-gate")
	gate.open(t)
	task := h.launch(parent.ID, "needs a command", "gate: "+string(gate))
	if q := h.waitQuestion(task.ID); !strings.Contains(q, "allow it?") {
		t.Fatalf("the task asks %q", q)
	}
	in := h.inbox(task.ID)
	if len(in.Questions) != 1 || !slices.Equal(in.Questions[0].Choices, []string{"yes", "no"}) {
		t.Fatalf("inbox = %+v", in)
	}
	r := h.request("POST", "/v1/tasks/"+task.ID+"/messages", map[string]any{"message": "perhaps"})
	if body := r.object(t); r.status != http.StatusBadRequest || !strings.Contains(body["error"].(string), "answer yes or no") || body["field"] != "message" {
		t.Fatalf("a neither-yes-nor-no answer = %d %s", r.status, r.body)
	}
	var sent sentReply
	h.ok(http.StatusOK, "POST", "/v1/tasks/"+task.ID+"/messages", map[string]any{"message": "yes"}, &sent)
	if !sent.Answered || sent.Message != nil {
		t.Fatalf("answer = %+v", sent)
	}
	if done := h.waitTask(task.ID); done.Status != sa.TaskCompleted || !strings.HasPrefix(done.Result, "passed allowed-gate") {
		t.Fatalf("the allowed task ended %s with %q", done.Status, done.Result)
	}
}

// TestEventsCarrySteering: the event stream carries a message sent to a
// task, its question and the answer, and a snapshot shows the question
// of a task that waits.
func TestEventsCarrySteering(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	s := h.events("")
	decodeSnapshot(t, s.next(t))
	gate := h.gate("events-gate")
	running := h.launch(parent.ID, "steered", "gate: "+string(gate))
	t.Cleanup(func() { gate.open(t) })
	h.toolStarted(running.ID)
	h.ok(http.StatusOK, "POST", "/v1/tasks/"+running.ID+"/messages", map[string]any{"message": "also check the tests"}, nil)
	var msg sa.TaskMessage
	change := nextChange(t, s, sa.ChangeTaskMessage, &msg)
	if change.TaskID != running.ID || msg.TaskID != running.ID || msg.Text != "also check the tests" || msg.Seq != 1 {
		t.Fatalf("task.message = %+v carrying %+v", change, msg)
	}

	asking := h.launch(parent.ID, "asks", "ask: Ship it? | now, later")
	var asked sa.InputRequest
	change = nextChange(t, s, sa.ChangeTaskQuestion, &asked)
	if change.TaskID != asking.ID || asked.Message != "Ship it?" || asked.Response != nil {
		t.Fatalf("task.question = %+v carrying %+v", change, asked)
	}
	// A client connecting now sees the question in its snapshot.
	snap := h.events("").next(t)
	var tasks struct{ Tasks []questionedTask }
	if err := json.Unmarshal([]byte(snap.data), &tasks); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(tasks.Tasks, func(x questionedTask) bool { return x.ID == asking.ID }); i < 0 || tasks.Tasks[i].Question != "Ship it?" {
		t.Errorf("the snapshot shows %+v", tasks.Tasks)
	}

	h.ok(http.StatusOK, "POST", "/v1/tasks/"+asking.ID+"/messages", map[string]any{"message": "later"}, nil)
	var answered sa.InputRequest
	change = nextChange(t, s, sa.ChangeTaskAnswer, &answered)
	if change.TaskID != asking.ID || answered.Key != asked.Key || answered.AnsweredAt == nil || !bytes.Contains(answered.Response, []byte(`"later"`)) {
		t.Fatalf("task.answer = %+v carrying %+v %s", change, answered, answered.Response)
	}
	h.waitTask(asking.ID)
}

// nextChange reads the stream up to the next change of a kind, and
// decodes what it carries into data.
func nextChange(t *testing.T, s *stream, kind sa.ChangeKind, data any) sa.Change {
	t.Helper()
	for {
		ev := s.next(t)
		if ev.name != string(kind) {
			continue
		}
		var c sa.Change
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.Data, data); err != nil {
			t.Fatalf("%s carries %s: %v", kind, c.Data, err)
		}
		return c
	}
}
