package tasks

import (
	"context"
	"fmt"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/cost"
)

// benchPrices prices the one model the benchmarks' messages name.
var benchPrices = config.Config{Models: map[string]config.Model{
	"anthropic/claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
}}.ModelInfo

// benchTree stores a three-level task tree (a task, its sub-task and
// theirs) whose sessions hold perSession priced responses each, and
// returns the top task.
func benchTree(b *testing.B, perSession int) (sa.Store, sa.Task) {
	ctx := context.Background()
	st := agenttest.Store(b, b.TempDir())
	msgs := make([]sa.Message, perSession)
	for i := range msgs {
		msgs[i] = sa.Message{Role: sa.RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Parts: []sa.Part{sa.TextPart("a step of the task")},
			Usage: sa.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 5000}}
	}
	parent, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	var top sa.Task
	for level, id := 0, parent.ID; level < 3; level++ {
		t, err := st.CreateTask(ctx, sa.NewTask{
			Task:    sa.Task{ParentSessionID: id, Description: "d", Prompt: "p", Agent: "general", Budget: sa.Budget{MaxCost: 1e9, MaxTokens: 1e15}},
			Session: sa.NewSession{Agent: "general", Messages: msgs},
		})
		if err != nil {
			b.Fatal(err)
		}
		if level == 0 {
			top = t
		}
		id = t.ID
	}
	return st, top
}

// BenchmarkBudgetCheck is the check a budgeted task's run makes at every
// model response: add its usage to the running totals of the three
// budgeted trees it is in and compare each with its budget. It reads
// nothing, whatever the size of the histories.
func BenchmarkBudgetCheck(b *testing.B) {
	st, top := benchTree(b, 1000)
	rb := &runBudget{}
	for range 3 {
		tree, err := cost.TaskTree(context.Background(), st, top.ID)
		if err != nil {
			b.Fatal(err)
		}
		rb.chain = append(rb.chain, top)
		rb.spends = append(rb.spends, &spend{task: top, spent: tree.Total.Add(cost.Figure{})})
	}
	var book budgetBook
	msg := &sa.Message{Model: "anthropic/claude-sonnet-4-5", Usage: sa.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 5000}}
	for b.Loop() {
		if stop := book.account(rb, msg, benchPrices); len(stop) > 0 {
			b.Fatal(stop)
		}
	}
}

// BenchmarkBudgetReread is what the same check would cost if it read
// what the tree spent from the store at each response instead (one sum
// per session of the tree), for trees of 3 sessions of 100 and of 1,000
// responses each.
func BenchmarkBudgetReread(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("responses=%d", n), func(b *testing.B) {
			st, top := benchTree(b, n)
			for b.Loop() {
				tree, err := cost.TaskTree(context.Background(), st, top.ID)
				if err != nil {
					b.Fatal(err)
				}
				if overBudget(top.Budget, tree.Total, benchPrices, "this task tree") != "" {
					b.Fatal("over budget")
				}
			}
		})
	}
}
