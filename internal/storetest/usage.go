package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// usageReader is what a store offers to price sessions without reading
// their histories (cost.UsageReader and cost.BulkReader).
type usageReader interface {
	UsageByModel(ctx context.Context, sessionID string) (map[string]sa.Usage, error)
	UsageByModelOf(ctx context.Context, sessionIDs []string) (map[string]map[string]sa.Usage, error)
	ChildTasks(ctx context.Context, parentIDs []string) (map[string][]string, error)
}

// testUsageSums: the sums a store keeps as messages are written and
// reclaimed agree with summing the messages, for live sessions, forks,
// and deleted sessions whose rows are partly kept; and the tasks of many
// sessions are listed at once.
func testUsageSums(t *testing.T, factory Factory) {
	ctx := context.Background()
	store, _ := openStore(t, factory)
	st, ok := store.(usageReader)
	if !ok {
		t.Skip("the store sums usage by reading histories")
	}
	reply := func(model string, in int64) sa.Message {
		return sa.Message{Role: sa.RoleAssistant, Model: model, Parts: []sa.Part{sa.TextPart("ok")},
			Usage: sa.Usage{InputTokens: in, OutputTokens: in / 10, CacheReadTokens: 2 * in, CacheWriteTokens: 1}}
	}
	q := user("q")
	root := mustCreate(t, store, q, reply("a/x", 100), reply("b/y", 7))
	fork, err := store.Fork(ctx, root.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, root.ID, q, reply("a/x", 1000)); err != nil { // after the fork point: reclaimed on delete
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, fork.ID, reply("a/x", 5)); err != nil {
		t.Fatal(err)
	}
	nt := newTask(fork.ID, "priced")
	nt.Session.Messages = []sa.Message{q, reply("c/z", 40)}
	task := mustCreateTask(t, store, nt)
	plain := mustCreate(t, store, q)
	ids := []string{root.ID, fork.ID, task.ID, plain.ID, "nosuchsession000"}

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
		if _, ok := got["nosuchsession000"]; ok {
			t.Errorf("%s: an unknown session has usage", when)
		}
	}
	agree("written")
	if got, _ := st.UsageByModel(ctx, root.ID); got["a/x"].InputTokens != 1100 {
		t.Fatalf("usage of the root = %v, want 1100 input tokens of a/x", got)
	}
	if err := store.DeleteSession(ctx, root.ID); err != nil { // the fork keeps its first messages
		t.Fatal(err)
	}
	agree("after deleting the forked session")
	if err := store.DeleteSession(ctx, fork.ID); err != nil {
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
