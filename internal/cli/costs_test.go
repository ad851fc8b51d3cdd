package cli_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
)

type listedCost struct {
	ID       string `json:"id"`
	Cost     price  `json:"cost"`
	TreeCost price  `json:"tree_cost"`
}

type price struct {
	USD          float64  `json:"usd"`
	Unpriced     []string `json:"unpriced"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
}

// sessions --json and tasks --json carry each one's own cost and the cost
// of its task tree, priced from the built-in model table.
func TestCostsInJSON(t *testing.T) {
	h := newHarness(t)
	root := h.ok(`{"role":"user","text":"Q"}
{"role":"assistant","text":"A","model":"anthropic/claude-sonnet-4-5","usage":{"input_tokens":1000000,"output_tokens":100000}}
`, "import", "-")
	fork := h.ok("", "fork", root)

	// A task of the root, and a task of that task on a local model.
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, h.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	newTask := func(parent string, m sa.Message) string {
		task, err := st.CreateTask(ctx, sa.NewTask{
			Task:    sa.Task{ParentSessionID: parent, ParentAgent: "general", Description: "d", Prompt: "p", Agent: "general", BatchID: "b", Timeout: sa.Seconds(60e9)},
			Session: sa.NewSession{Agent: "general", Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("p")}}, m}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	child := newTask(root, sa.Message{Role: sa.RoleAssistant, Model: "openai/gpt-4.1", Usage: sa.Usage{InputTokens: 500_000}, Parts: []sa.Part{sa.TextPart("x")}})
	grandchild := newTask(child, sa.Message{Role: sa.RoleAssistant, Model: "ollama/llama3", Usage: sa.Usage{InputTokens: 7}, Parts: []sa.Part{sa.TextPart("y")}})
	st.Close()

	var sessions []listedCost
	if err := json.Unmarshal([]byte(h.ok("", "sessions", "--json")), &sessions); err != nil {
		t.Fatal(err)
	}
	var tasks []listedCost
	if err := json.Unmarshal([]byte(h.ok("", "tasks", "--json")), &tasks); err != nil {
		t.Fatal(err)
	}
	byID := map[string]listedCost{}
	for _, l := range append(sessions, tasks...) {
		byID[l.ID] = l
	}
	tests := []struct {
		name           string
		id             string
		own, tree      float64
		treeUnpriced   int
		ownInputTokens int64
	}{
		{"root", root, 3 + 1.5, 3 + 1.5 + 1, 1, 1_000_000},
		{"fork inherits messages, not their cost", fork, 0, 0, 0, 0},
		{"task", child, 1, 1, 1, 500_000},
		{"local model", grandchild, 0, 0, 1, 7},
	}
	for _, tt := range tests {
		got, ok := byID[tt.id]
		if !ok {
			t.Fatalf("%s: %s not listed", tt.name, tt.id)
		}
		if math.Abs(got.Cost.USD-tt.own) > 1e-9 || math.Abs(got.TreeCost.USD-tt.tree) > 1e-9 ||
			len(got.TreeCost.Unpriced) != tt.treeUnpriced || got.Cost.InputTokens != tt.ownInputTokens {
			t.Errorf("%s: cost %+v, tree %+v; want $%v, $%v with %d unpriced, %d input tokens", tt.name, got.Cost, got.TreeCost, tt.own, tt.tree, tt.treeUnpriced, tt.ownInputTokens)
		}
	}
}
