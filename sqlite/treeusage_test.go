package sqlite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// TestUsageByModelOfFollowsWritesAndDeletes: the sums kept as messages
// are written and reclaimed agree with summing the messages, for live
// sessions, forks, and deleted sessions whose rows are partly kept.
func TestUsageByModelOfFollowsWritesAndDeletes(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	reply := func(model string, in int64) sa.Message {
		return sa.Message{Role: sa.RoleAssistant, Model: model, Usage: sa.Usage{InputTokens: in, OutputTokens: in / 10, CacheReadTokens: 2 * in, CacheWriteTokens: 1},
			Parts: []sa.Part{sa.TextPart("ok")}}
	}
	q := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("q")}}
	root, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{q, reply("a/x", 100), reply("b/y", 7)}})
	if err != nil {
		t.Fatal(err)
	}
	fork, err := st.Fork(ctx, root.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, root.ID, q, reply("a/x", 1000)); err != nil { // after the fork point: reclaimed on delete
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, fork.ID, reply("a/x", 5)); err != nil {
		t.Fatal(err)
	}
	task, err := st.CreateTask(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: fork.ID, Description: "d", Agent: "general"},
		Session: sa.NewSession{Agent: "general", Messages: []sa.Message{q, reply("c/z", 40)}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{q}})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{root.ID, fork.ID, task.ID, plain.ID, "nosuchsession"}

	agree := func(when string) {
		t.Helper()
		got, err := st.UsageByModelOf(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids[:4] {
			want, err := st.UsageByModel(ctx, id)
			if errors.Is(err, sa.ErrNotFound) {
				want, err = nil, nil // reclaimed whole: nothing kept either
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				want = nil
			}
			if d := cmp.Diff(want, got[id]); d != "" {
				t.Errorf("%s: usage of %s (-summed +kept):\n%s", when, id, d)
			}
		}
		if _, ok := got["nosuchsession"]; ok {
			t.Errorf("%s: an unknown session has usage", when)
		}
	}
	agree("written")
	if err := st.DeleteSession(ctx, root.ID); err != nil { // the fork keeps its first messages
		t.Fatal(err)
	}
	agree("after deleting the forked session")
	if err := st.DeleteSession(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	agree("after deleting the fork")

	kids, err := st.ChildTasks(ctx, []string{fork.ID, root.ID, plain.ID})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string][]string{fork.ID: {task.ID}}, kids); d != "" {
		t.Errorf("ChildTasks (-want +got):\n%s", d)
	}
}
