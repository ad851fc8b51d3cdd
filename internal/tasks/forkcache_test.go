package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
)

// bigParent is a parent conversation of about 300,000 characters: rounds
// of a request, an answer that reads a file, and the file's content.
func bigParent(rounds int) []sa.Message {
	var msgs []sa.Message
	for i := range rounds {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			user(fmt.Sprintf("parent: step %d. %s", i, strings.Repeat("Please look at the next module and say what it does. ", 14))),
			sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
				sa.TextPart(fmt.Sprintf("Reading module %d. %s", i, strings.Repeat("It handles requests and keeps state. ", 12))),
				{Type: sa.PartToolCall, CallID: id, Name: "read", Input: []byte(fmt.Sprintf(`{"path":"module_%d.go"}`, i))},
			}},
			sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: id, Name: "read",
				Output: fmt.Sprintf("package module%d\n%s", i, strings.Repeat("func handle(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 24))}}},
		)
	}
	return msgs
}

// forkUsage is what a task's first model request read, wrote and sent
// uncached, from the usage stored with its first answer.
func (h *harness) forkUsage(taskID string) sa.Usage {
	h.t.Helper()
	msgs, err := h.store.MessagesAfter(context.Background(), taskID, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == sa.RoleAssistant {
			return m.Usage
		}
	}
	h.t.Fatalf("task %s stored no answer", taskID)
	return sa.Usage{}
}

func prompt(u sa.Usage) int64 { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// promptCost is a prompt's cost in units of the input price: Anthropic bills a
// 5-minute cache write at 1.25 times the input price and a read at 0.1.
func promptCost(u sa.Usage) float64 {
	return float64(u.InputTokens) + 1.25*float64(u.CacheWriteTokens) + 0.1*float64(u.CacheReadTokens)
}

// Four forks launched at once from one point of a large parent, as a
// model's parallel tool calls launch them, against a server whose cache
// follows Anthropic's rules (an entry is readable once its writer's answer
// began): the second to the fourth read their shared prefix, and a fork
// launched later, after the parent received the tasks' notices, reads the
// older part of its digest.
func TestSiblingForksShareThePromptCache(t *testing.T) {
	var mu sync.Mutex
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		return llmtest.Reply{Text: "done"}
	})
	h.srv.CacheMinTokens = 1024
	h.srv.WriteDelay = 300 * time.Millisecond // the prefill of a long prompt
	ctx := context.Background()
	history := bigParent(100)
	chars := 0
	for _, m := range history {
		for _, p := range m.Parts {
			chars += len(p.Text) + len(p.Input) + len(p.Output)
		}
	}
	if chars < 280_000 {
		t.Fatalf("the parent holds %d characters, want about 300,000", chars)
	}
	parent := h.parent(history...)
	// The parent's model calls superagents_task four times in one answer.
	var calls []sa.Part
	for i := range 4 {
		calls = append(calls, sa.Part{Type: sa.PartToolCall, CallID: fmt.Sprint("launch_", i), Name: "superagents_task", Input: []byte(`{"fork":true}`)})
	}
	if _, err := h.store.Append(ctx, parent.ID, sa.Message{Role: sa.RoleAssistant, Parts: calls}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var results []sa.Part
	for i := range 4 {
		task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true, Description: fmt.Sprint("part ", i),
			Prompt: fmt.Sprintf("Review part %d of the modules.", i)})
		ids = append(ids, task.ID)
		results = append(results, sa.Part{Type: sa.PartToolResult, CallID: fmt.Sprint("launch_", i), Name: "superagents_task",
			Output: "Launched task " + task.ID})
	}
	if _, err := h.store.Append(ctx, parent.ID, sa.Message{Role: sa.RoleTool, Parts: results}); err != nil {
		t.Fatal(err)
	}
	var cost, uncached float64
	for i, id := range ids {
		if got := h.wait(id); got.Status != sa.TaskCompleted {
			t.Fatalf("fork %d: %s %s", i+1, got.Status, got.Error)
		}
		u := h.forkUsage(id)
		cost, uncached = cost+promptCost(u), uncached+float64(prompt(u))
		share := float64(u.CacheReadTokens) / float64(prompt(u))
		t.Logf("fork %d: prompt %d tokens, read %d (%.0f%%), wrote %d, uncached %d", i+1, prompt(u), u.CacheReadTokens, 100*share, u.CacheWriteTokens, u.InputTokens)
		if i > 0 && share < 0.8 {
			t.Errorf("fork %d read %.0f%% of its first prompt from the cache, want at least 80%%", i+1, 100*share)
		}
	}
	t.Logf("the four forks' prompts cost %.0f%% of the same prompts uncached", 100*cost/uncached)
	if cost > 0.45*uncached {
		t.Errorf("the four forks' prompts cost %.0f%% of the same prompts uncached, want at most 45%%", 100*cost/uncached)
	}

	// The parent reads the notices and answers; then it forks again.
	if _, err := h.store.Append(ctx, parent.ID, assistant("parent: all four parts are reviewed.")); err != nil {
		t.Fatal(err)
	}
	fifth := h.launch(parent.ID, tasks.LaunchRequest{Fork: true, Description: "fifth", Prompt: "Sum up the reviews."})
	if got := h.wait(fifth.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("fifth fork: %s %s", got.Status, got.Error)
	}
	u := h.forkUsage(fifth.ID)
	share := float64(u.CacheReadTokens) / float64(prompt(u))
	t.Logf("fifth fork: prompt %d tokens, read %d (%.0f%%), wrote %d", prompt(u), u.CacheReadTokens, 100*share, u.CacheWriteTokens)
	if share < 0.6 {
		t.Errorf("a fork launched after the notices read %.0f%% of its first prompt from the cache, want at least 60%%", 100*share)
	}
}
