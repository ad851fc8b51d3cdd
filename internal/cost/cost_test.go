package cost_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/cost"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var prices = config.Default().ModelInfo

func TestPrice(t *testing.T) {
	million := sa.Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheReadTokens: 1e6, CacheWriteTokens: 1e6}
	tests := []struct {
		name     string
		by       map[string]sa.Usage
		usd      float64
		unpriced []string
		saved    float64 // by the prompt cache
	}{
		// A read saves 3 - 0.3, a write costs 3.75 - 3 more.
		{"sonnet list prices", map[string]sa.Usage{"anthropic/claude-sonnet-4-5": million}, 3 + 15 + 0.3 + 3.75, nil, 2.7 - 0.75},
		{"dated version", map[string]sa.Usage{"anthropic/claude-haiku-4-5-20251001": {InputTokens: 2e6}}, 2, nil, 0},
		{"openai cached input", map[string]sa.Usage{"openai/gpt-4.1": {InputTokens: 1e6, CacheReadTokens: 1e6}}, 2.5, nil, 1.5},
		{"local model is unpriced, not free", map[string]sa.Usage{"ollama/llama3": {InputTokens: 10}, "openai/gpt-4o-mini": {OutputTokens: 1e6}}, 0.6, []string{"ollama/llama3"}, 0},
		{"the offline model is free: nothing saved", map[string]sa.Usage{"offline": million}, 0, nil, 0},
		{"nothing", nil, 0, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := cost.Figure{ByModel: tt.by}.Price(prices)
			if math.Abs(p.USD-tt.usd) > 1e-9 || !cmp.Equal(p.Unpriced, tt.unpriced) {
				t.Errorf("Price = %+v, want $%v, unpriced %v", p, tt.usd, tt.unpriced)
			}
			if math.Abs(p.CacheSavedUSD-tt.saved) > 1e-9 {
				t.Errorf("CacheSavedUSD = %v, want %v", p.CacheSavedUSD, tt.saved)
			}
			if p.Complete() != (len(tt.unpriced) == 0) {
				t.Errorf("Complete = %v", p.Complete())
			}
		})
	}
}

// node is a session of the generated tree, with what the test stored in it.
type node struct {
	id       string
	want     cost.Figure
	children []*node
}

// models the generated messages use: priced, dated, local and none.
var models = []string{"anthropic/claude-sonnet-4-5", "openai/gpt-4.1-mini-2025-04-14", "ollama/llama3", ""}

// The figures add up over a task tree of three levels: each session's own
// figure is exactly the usage of the messages it stores (also those
// before a clear, and not those a forked task inherits), each total is
// its own figure plus its children's totals, and the dollar amounts agree
// with the per-session ones.
func TestPropertyTreeAddsUp(t *testing.T) {
	ctx := context.Background()
	st := agenttest.Store(t, t.TempDir())
	rapid.Check(t, func(rt *rapid.T) {
		appendSome := func(n *node, label string) {
			count := rapid.IntRange(0, 4).Draw(rt, label+"/messages")
			for i := range count {
				u := sa.Usage{
					InputTokens:      rapid.Int64Range(0, 50_000).Draw(rt, fmt.Sprintf("%s/%d/in", label, i)),
					OutputTokens:     rapid.Int64Range(0, 5_000).Draw(rt, fmt.Sprintf("%s/%d/out", label, i)),
					CacheReadTokens:  rapid.Int64Range(0, 100_000).Draw(rt, fmt.Sprintf("%s/%d/read", label, i)),
					CacheWriteTokens: rapid.Int64Range(0, 20_000).Draw(rt, fmt.Sprintf("%s/%d/write", label, i)),
				}
				model := rapid.SampledFrom(models).Draw(rt, fmt.Sprintf("%s/%d/model", label, i))
				msgs := []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("go on")}}}
				if rapid.Bool().Draw(rt, fmt.Sprintf("%s/%d/clear", label, i)) {
					msgs = append(msgs, sa.ClearMessage())
				}
				m := sa.Message{Role: sa.RoleAssistant, Model: model, Usage: u, Parts: []sa.Part{sa.TextPart("ok")}}
				if _, err := st.Append(ctx, n.id, append(msgs, m)...); err != nil {
					rt.Fatal(err)
				}
				n.want = n.want.Add(cost.Message(m))
			}
		}
		var launch func(parent *node, label string, depth int)
		launch = func(parent *node, label string, depth int) {
			if depth > 3 {
				return
			}
			for i := range rapid.IntRange(0, 3-depth/2).Draw(rt, label+"/tasks") {
				childLabel := fmt.Sprintf("%s.%d", label, i)
				task, err := st.CreateTask(ctx, sa.NewTask{
					Task: sa.Task{ParentSessionID: parent.id, ParentAgent: "general", Description: childLabel, Prompt: "do it",
						Agent: "general", BatchID: "b", Timeout: sa.Seconds(60e9)},
					Fork:    rapid.Bool().Draw(rt, childLabel+"/fork"),
					Session: sa.NewSession{Agent: "general", Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("do it")}}}},
				})
				if err != nil {
					rt.Fatal(err)
				}
				child := &node{id: task.ID, want: cost.Figure{}}
				parent.children = append(parent.children, child)
				appendSome(child, childLabel)
				launch(child, childLabel, depth+1)
				if rapid.Bool().Draw(rt, childLabel+"/resumed") {
					appendSome(child, childLabel+"/resume") // a resume runs in the task's own session
				}
				if rapid.Bool().Draw(rt, childLabel+"/cleared") {
					if _, err := st.UpdateTask(ctx, task.ID, func(t *sa.Task) error { now := t.CreatedAt; t.ClearedAt = &now; return nil }); err != nil {
						rt.Fatal(err)
					}
				}
			}
		}
		sess, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
		if err != nil {
			rt.Fatal(err)
		}
		root := &node{id: sess.ID}
		appendSome(root, "root")
		launch(root, "root", 1)

		tree, err := cost.TaskTree(ctx, st, root.id)
		if err != nil {
			rt.Fatal(err)
		}
		check(rt, root, tree)
		checkListing(rt, st, root)
	})
}

// check compares a tree with the generated one and returns the sum of
// its sessions' own dollar amounts.
func check(rt *rapid.T, want *node, got cost.Tree) float64 {
	if got.ID != want.id {
		rt.Fatalf("tree node %s, want %s", got.ID, want.id)
	}
	if d := cmp.Diff(want.want.Usage(), got.Own.Usage()); d != "" || !sameByModel(want.want, got.Own) {
		rt.Fatalf("own figure of %s differs: want %v, got %v", want.id, want.want.ByModel, got.Own.ByModel)
	}
	if len(got.Children) != len(want.children) {
		rt.Fatalf("%s has %d children, want %d", want.id, len(got.Children), len(want.children))
	}
	total := got.Own
	usd := got.Own.Price(prices).USD
	for i, c := range want.children {
		usd += check(rt, c, got.Children[i])
		total = total.Add(got.Children[i].Total)
	}
	if !sameByModel(total, got.Total) {
		rt.Fatalf("total of %s is not its own figure plus its children's: %v vs %v", want.id, got.Total.ByModel, total.ByModel)
	}
	if p := got.Total.Price(prices).USD; math.Abs(p-usd) > 1e-9*math.Max(1, usd) {
		rt.Fatalf("total of %s costs $%v, its sessions $%v", want.id, p, usd)
	}
	return usd
}

// sameByModel compares two figures, a model with no tokens being the same
// as an absent one.
func sameByModel(a, b cost.Figure) bool {
	for _, f := range []struct{ x, y cost.Figure }{{a, b}, {b, a}} {
		for model, u := range f.x.ByModel {
			if u != f.y.ByModel[model] {
				return false
			}
		}
	}
	return true
}
