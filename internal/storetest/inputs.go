package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// testInputs checks what tasks ask their users: only an active task
// asks, whether or not its launcher answers through the Tasks extension
// (MayAsk); a request is outstanding until answered; answers to keys not
// outstanding are ignored; both writes are task.updated changes, with a
// task.question or task.answer change; a notice goes to the parent; the
// requests survive a restart; a task that ended asks nothing and takes no
// answer; a resumed task's run does not see its earlier run's requests.
func testInputs(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("hi"))

	nt := newTask(parent.ID, "asks")
	nt.Task.MayAsk, nt.Task.Status = true, sa.TaskRunning
	task := mustCreateTask(t, st, nt)
	if got, err := st.Task(ctx, task.ID); err != nil || !got.MayAsk {
		t.Fatalf("Task after CreateTask with MayAsk: MayAsk=%v, %v", got.MayAsk, err)
	}
	mute := newTask(parent.ID, "may not ask")
	mute.Task.Status = sa.TaskRunning
	silent := mustCreateTask(t, st, mute)
	if silent.MayAsk {
		t.Fatal("a task created without MayAsk may ask")
	}

	req := func(taskID, key, msg string) sa.InputRequest {
		return sa.InputRequest{TaskID: taskID, Key: key, Message: msg,
			Request: json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"` + msg + `"}}`)}
	}
	// A task whose launcher has no Tasks extension asks too: its parent
	// session is told, in the same transaction.
	notice := func(tk sa.Task) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("task " + tk.ID + " asks")}}
	}
	if _, err := st.AskInput(ctx, req(silent.ID, "k", "allow?"), notice); err != nil {
		t.Fatalf("AskInput of a task without MayAsk: %v", err)
	}
	if last, ok, err := st.LatestMessage(ctx, parent.ID, sa.MessageMatch{Kinds: []sa.Kind{sa.KindNotification}}); err != nil || !ok || last.Text() != "task "+silent.ID+" asks" {
		t.Fatalf("the parent's notice of a question: %+v, %v, %v", last, ok, err)
	}
	if _, err := st.AskInput(ctx, req("no-such-task", "k", "allow?"), nil); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("AskInput of an unknown task: %v, want ErrNotFound", err)
	}
	if _, err := st.AskInput(ctx, sa.InputRequest{TaskID: task.ID, Key: "k", Message: "m", Request: json.RawMessage(`{`)}, nil); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("AskInput with a request that is not JSON: %v, want ErrInvalid", err)
	}

	before, err := st.LastChangeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.AskInput(ctx, req(task.ID, "run-1", "allow ls?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.CreatedAt.IsZero() || !first.Pending() {
		t.Fatalf("AskInput returned %+v", first)
	}
	if _, err := st.AskInput(ctx, req(task.ID, "run-1", "again"), nil); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("AskInput with a key used already: %v, want ErrConflict", err)
	}
	if _, err := st.AskInput(ctx, req(task.ID, "q-2", "which one?"), nil); err != nil {
		t.Fatal(err)
	}
	changes, err := st.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 4 || changes[0].Kind != sa.ChangeTaskUpdated || changes[0].TaskID != task.ID ||
		changes[1].Kind != sa.ChangeTaskQuestion || changes[1].TaskID != task.ID {
		t.Fatalf("changes after two requests: %+v, want task.updated and task.question of %s twice", changes, task.ID)
	}
	var asked sa.InputRequest
	if err := json.Unmarshal(changes[1].Data, &asked); err != nil || asked.Key != "run-1" || asked.Message != "allow ls?" {
		t.Fatalf("the task.question change carries %s: %v", changes[1].Data, err)
	}

	// A restart keeps them, as another node sees them.
	st = reopen()
	reqs, err := st.InputRequests(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Key != "run-1" || reqs[1].Key != "q-2" || !reqs[0].Pending() || reqs[0].Message != "allow ls?" {
		t.Fatalf("InputRequests after a restart: %+v", reqs)
	}
	var wire map[string]any
	if err := json.Unmarshal(reqs[0].Request, &wire); err != nil || wire["method"] != "elicitation/create" {
		t.Fatalf("stored request %s: %v", reqs[0].Request, err)
	}

	// One answer to an outstanding key, one to a key never asked: the
	// second is ignored.
	before, _ = st.LastChangeID(ctx)
	keys, err := st.AnswerInputs(ctx, task.ID, map[string]json.RawMessage{
		"run-1":   json.RawMessage(`{"action":"accept","content":{"allow":true}}`),
		"unknown": json.RawMessage(`{"action":"decline"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"run-1"}) {
		t.Fatalf("AnswerInputs answered %v, want [run-1]", keys)
	}
	if changes, _ := st.Changes(ctx, before, 100); len(changes) != 2 || changes[0].Kind != sa.ChangeTaskUpdated || changes[0].TaskID != task.ID ||
		changes[1].Kind != sa.ChangeTaskAnswer {
		t.Fatalf("changes after an answer: %+v", changes)
	}
	// Answering it again is ignored, and records nothing.
	before, _ = st.LastChangeID(ctx)
	if keys, err := st.AnswerInputs(ctx, task.ID, map[string]json.RawMessage{"run-1": json.RawMessage(`{"action":"decline"}`)}); err != nil || len(keys) != 0 {
		t.Fatalf("answering an answered request: %v, %v", keys, err)
	}
	if last, _ := st.LastChangeID(ctx); last != before {
		t.Fatal("an ignored answer recorded a change")
	}
	if _, err := st.AnswerInputs(ctx, task.ID, map[string]json.RawMessage{"q-2": json.RawMessage(`{`)}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("an answer that is not JSON: %v, want ErrInvalid", err)
	}
	reqs, err = st.InputRequests(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Pending() || reqs[0].AnsweredAt == nil || !reqs[1].Pending() {
		t.Fatalf("InputRequests after one answer: %+v", reqs)
	}
	var answer struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(reqs[0].Response, &answer); err != nil || answer.Action != "accept" || answer.Content["allow"] != true {
		t.Fatalf("stored answer %s: %v", reqs[0].Response, err)
	}

	// Once the task has ended: no requests, no asking, and an answer is
	// refused with TaskEndedError.
	if _, _, err := st.FinishTask(ctx, task.ID, func(x *sa.Task) error { x.Status = sa.TaskCompleted; x.Result = "done"; return nil },
		func(sa.Task, sa.BatchState) sa.Message { return user("done") }); err != nil {
		t.Fatal(err)
	}
	if reqs, err := st.InputRequests(ctx, task.ID); err != nil || len(reqs) != 0 {
		t.Fatalf("InputRequests of an ended task: %+v, %v", reqs, err)
	}
	_, err = st.AnswerInputs(ctx, task.ID, map[string]json.RawMessage{"q-2": json.RawMessage(`{"action":"cancel"}`)})
	var ended *sa.TaskEndedError
	if !errors.As(err, &ended) || !errors.Is(err, sa.ErrConflict) || ended.Status != sa.TaskCompleted {
		t.Fatalf("answering an ended task: %v, want a TaskEndedError", err)
	}
	if _, err := st.AskInput(ctx, req(task.ID, "late", "still there?"), nil); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("AskInput of an ended task: %v, want ErrConflict", err)
	}
	if _, err := st.AnswerInputs(ctx, "no-such-task", map[string]json.RawMessage{"k": json.RawMessage(`{}`)}); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("answering an unknown task: %v, want ErrNotFound", err)
	}

	// A resume starts a new run (its resume count, as tasks' resume
	// counts it; not its start time, which another node's clock may put
	// before the requests): the request its earlier run left unanswered
	// is no longer outstanding.
	if _, err := st.UpdateTask(ctx, task.ID, func(x *sa.Task) error {
		x.Status, x.StartedAt, x.CompletedAt = sa.TaskResumed, time.Now().Add(-time.Hour), nil
		x.ResumeCount++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if reqs, err := st.InputRequests(ctx, task.ID); err != nil || len(reqs) != 0 {
		t.Fatalf("InputRequests of a resumed run: %+v, %v", reqs, err)
	}
	if keys, err := st.AnswerInputs(ctx, task.ID, map[string]json.RawMessage{"q-2": json.RawMessage(`{"action":"cancel"}`)}); err != nil || len(keys) != 0 {
		t.Fatalf("answering an earlier run's request: %v, %v", keys, err)
	}
	if _, err := st.AskInput(ctx, req(task.ID, "run-2", "and now?"), nil); err != nil {
		t.Fatalf("AskInput of the resumed run: %v", err)
	}
	if reqs, err := st.InputRequests(ctx, task.ID); err != nil || len(reqs) != 1 || reqs[0].Key != "run-2" {
		t.Fatalf("InputRequests of the resumed run after its request: %+v, %v", reqs, err)
	}
}
