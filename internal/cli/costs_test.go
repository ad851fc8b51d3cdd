package cli_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
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

// TestCostsCommand: `costs ID` shows the session and each task it
// launched, indented under its launcher, with what the prompt cache
// read, wrote and saved; --json is the tree the HTTP API answers.
func TestCostsCommand(t *testing.T) {
	h := newHarness(t)
	root := h.ok(`{"role":"user","text":"Q"}
{"role":"assistant","text":"A","model":"anthropic/claude-sonnet-4-5","usage":{"input_tokens":1000,"output_tokens":100}}
`, "import", "-")
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, h.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	newTask := func(parent, desc string, u sa.Usage) string {
		task, err := st.CreateTask(ctx, sa.NewTask{
			Task: sa.Task{ParentSessionID: parent, ParentAgent: "general", Description: desc, Prompt: "p", Agent: "general", BatchID: "b", Timeout: sa.Seconds(60e9)},
			Session: sa.NewSession{Agent: "general", Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("p")}},
				{Role: sa.RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Usage: u, Parts: []sa.Part{sa.TextPart("x")}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	fork := newTask(root, "forked reader", sa.Usage{InputTokens: 2000, CacheReadTokens: 1_000_000, CacheWriteTokens: 100_000})
	newTask(fork, "its helper", sa.Usage{InputTokens: 10})
	st.Close()

	text := h.ok("", "costs", root[:8])
	for _, want := range []string{
		"Session " + sa.ShortID(root) + ": $",
		`- task ` + sa.ShortID(fork) + ` "forked reader" (queued, agent general): $`,
		"  tokens: 2000 in, 0 out; cache: 1000000 read, 100000 written, saved $2.62",
		`  - task `,
		`"its helper"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("costs output lacks %q:\n%s", want, text)
		}
	}
	var tree struct {
		Tasks []struct {
			ID   string `json:"id"`
			Cost struct {
				CacheSaved float64 `json:"cache_saved_usd"`
				CacheRead  int64   `json:"cache_read_tokens"`
			} `json:"cost"`
			Tasks []json.RawMessage `json:"tasks"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "costs", root, "--json")), &tree); err != nil {
		t.Fatal(err)
	}
	if len(tree.Tasks) != 1 || tree.Tasks[0].ID != fork || math.Abs(tree.Tasks[0].Cost.CacheSaved-2.625) > 1e-9 ||
		tree.Tasks[0].Cost.CacheRead != 1_000_000 || len(tree.Tasks[0].Tasks) != 1 {
		t.Fatalf("costs --json: %+v", tree)
	}
	if r := h.run("costs"); r.code != 2 || !strings.Contains(r.stderr, "session id") {
		t.Errorf("costs without an id: exit %d, %q", r.code, r.stderr)
	}
}
