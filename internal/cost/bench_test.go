package cost_test

import (
	"context"
	"fmt"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/cost"
)

// BenchmarkTaskTree prices the tree of a session that launched 10 tasks,
// each of which launched 10 more (111 sessions, 20 priced messages each).
func BenchmarkTaskTree(b *testing.B) {
	ctx := context.Background()
	st := agenttest.Store(b, b.TempDir())
	msgs := func() []sa.Message {
		var out []sa.Message
		for i := range 20 {
			out = append(out, sa.Message{Role: sa.RoleAssistant, Model: models[i%len(models)], Parts: []sa.Part{sa.TextPart("ok")},
				Usage: sa.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 5000}})
		}
		return out
	}
	launch := func(parent string) string {
		t, err := st.CreateTask(ctx, sa.NewTask{
			Task:    sa.Task{ParentSessionID: parent, ParentAgent: "general", Description: "d", Prompt: "p", Agent: "general", BatchID: "b", Timeout: sa.Seconds(60e9)},
			Session: sa.NewSession{Agent: "general", Messages: msgs()},
		})
		if err != nil {
			b.Fatal(err)
		}
		return t.ID
	}
	root, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: msgs()})
	if err != nil {
		b.Fatal(err)
	}
	for range 10 {
		child := launch(root.ID)
		for range 10 {
			launch(child)
		}
	}
	b.ResetTimer()
	var tree cost.Tree
	for b.Loop() {
		if tree, err = cost.TaskTree(ctx, st, root.ID); err != nil {
			b.Fatal(err)
		}
	}
	if n := tree.Total.Usage().InputTokens; n != 111*20*1000 {
		b.Fatal(fmt.Sprint("total input tokens ", n))
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/111, "µs/session")
}
