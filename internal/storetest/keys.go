package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// unstorableKeys are keys no store can hold (PostgreSQL's TEXT refuses
// them): every store refuses them alike when they are written, and finds
// nothing when they are looked up.
var unstorableKeys = []string{"bad\x00id", "bad\xffid"}

// testUnstorableKeys: runner, task and lease ids that are not printable
// text are refused with ErrInvalid by every store (the SQLite store once
// took them), and the same words.
func testUnstorableKeys(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("hi"))
	if err := st.RegisterRunner(ctx, sa.Runner{ID: "runner-a", Host: "box", PID: 1}); err != nil {
		t.Fatal(err)
	}
	invalid := func(what string, err error, words string) {
		t.Helper()
		if !errors.Is(err, sa.ErrInvalid) || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", what, err, words)
		}
	}
	newTask := func() sa.NewTask {
		return sa.NewTask{Task: sa.Task{ParentSessionID: parent.ID, Description: "d", Prompt: "p", Agent: "general"},
			Session: sa.NewSession{Agent: "general", Model: "offline"}}
	}
	for _, key := range unstorableKeys {
		invalid("RegisterRunner", st.RegisterRunner(ctx, sa.Runner{ID: key}), "a runner needs an id (printable text)")

		_, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: parent.ID, RunnerID: key, Holder: "chat"})
		invalid("AcquireTurn with such a runner", err, "runner and task ids are printable text")
		_, err = st.AcquireTurn(ctx, sa.TurnLease{SessionID: parent.ID, RunnerID: "runner-a", TaskID: key, Holder: "task"})
		invalid("AcquireTurn with such a task", err, "runner and task ids are printable text")

		nt := newTask()
		nt.Task.ID = key
		_, err = st.CreateTask(ctx, nt)
		invalid("CreateTask with such an id", err, "task id")
		nt = newTask()
		nt.Task.RunnerID = key
		_, err = st.CreateTask(ctx, nt)
		invalid("CreateTask with such a runner", err, "runner id")
		nt = newTask()
		nt.Lease = &sa.TurnLease{RunnerID: key, Holder: "task"}
		_, err = st.CreateTask(ctx, nt)
		invalid("CreateTask with a lease of such a runner", err, "a task's lease needs a runner id of printable text")

		if _, err := st.Session(ctx, key); !errors.Is(err, sa.ErrNotFound) {
			t.Errorf("Session(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := st.Task(ctx, key); !errors.Is(err, sa.ErrNotFound) {
			t.Errorf("Task(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := st.Lease(ctx, key); !errors.Is(err, sa.ErrNotFound) {
			t.Errorf("Lease(%q) = %v, want ErrNotFound", key, err)
		}
	}
	nt := newTask()
	nt.Lease = &sa.TurnLease{Holder: "task"}
	_, err := st.CreateTask(ctx, nt)
	invalid("CreateTask with a lease without a runner", err, "a task's lease needs a runner id of printable text")

	task, err := st.CreateTask(ctx, newTask())
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.UpdateTask(ctx, task.ID, func(t *sa.Task) error { t.RunnerID = unstorableKeys[0]; return nil })
	invalid("UpdateTask to such a runner", err, "runner id")
	if got, err := st.Task(ctx, task.ID); err != nil || got.RunnerID != "" {
		t.Errorf("after the refused update: %+v, %v; want the task unchanged", got, err)
	}
}

// testUnstorableInputKeys: a task id no store can hold names no task to
// ask for, read or answer input, on every store alike.
func testUnstorableInputKeys(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	for _, key := range unstorableKeys {
		r := sa.InputRequest{TaskID: key, Key: "k", Message: "allow?", Request: json.RawMessage(`{}`)}
		if _, err := st.AskInput(ctx, r, nil); !errors.Is(err, sa.ErrNotFound) {
			t.Errorf("AskInput of task %q: %v, want ErrNotFound", key, err)
		}
		if reqs, err := st.InputRequests(ctx, key); err != nil || len(reqs) != 0 {
			t.Errorf("InputRequests(%q) = %v, %v; want none", key, reqs, err)
		}
		if _, err := st.AnswerInputs(ctx, key, map[string]json.RawMessage{"k": json.RawMessage(`true`)}); !errors.Is(err, sa.ErrNotFound) {
			t.Errorf("AnswerInputs of task %q: %v, want ErrNotFound", key, err)
		}
	}
}
