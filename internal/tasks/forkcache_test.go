package tasks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
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
			user(fmt.Sprintf("parent: step %d. %s", i, strings.Repeat("Please look at the next module and say what it does. ", 18))),
			sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
				sa.TextPart(fmt.Sprintf("Reading module %d. %s", i, strings.Repeat("It handles requests and keeps state. ", 16))),
				{Type: sa.PartToolCall, CallID: id, Name: "read", Input: []byte(fmt.Sprintf(`{"path":"module_%d.go"}`, i))},
			}},
			sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: id, Name: "read",
				Output: fmt.Sprintf("package module%d\n%s", i, strings.Repeat("func handle(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 22))}}},
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
	}, withFork(func(c *config.Config) {
		// claude-sonnet-4-5's prices.
		c.Models["anthropic/claude-test"] = config.Model{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	}))
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
		// The launch answer says what the fork inherits and expects to pay.
		fc := task.ForkContext
		if fc == nil || fc.Tokens < 30_000 || fc.USD == nil ||
			i == 0 && fc.CacheReadTokens != 0 || i > 0 && fc.CacheWriteTokens != 0 {
			t.Errorf("fork %d: launch estimate %+v, want about 45,000 tokens, written by the first, read by the others", i+1, fc)
		}
		results = append(results, sa.Part{Type: sa.PartToolResult, CallID: fmt.Sprint("launch_", i), Name: "superagents_task",
			Output: "Launched task " + task.ID})
	}
	if _, err := h.store.Append(ctx, parent.ID, sa.Message{Role: sa.RoleTool, Parts: results}); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if got := h.wait(id); got.Status != sa.TaskCompleted {
			t.Fatalf("fork %d: %s %s", i+1, got.Status, got.Error)
		}
	}
	// The forks in the order their first requests reached the server.
	var order []string
	var sent []time.Time
	for _, r := range h.srv.Requests() {
		for i, id := range ids {
			if strings.Contains(string(r.Body), fmt.Sprintf("Review part %d of", i)) && !slices.Contains(order, id) {
				order, sent = append(order, id), append(sent, r.Received)
			}
		}
	}
	// What the siblings waited for (measured, not asserted): the first's
	// answer to begin, which the server holds back by WriteDelay.
	for i := 1; i < len(sent); i++ {
		t.Logf("fork %d sent its first request %v after the first fork's", i+1, sent[i].Sub(sent[0]).Round(time.Millisecond))
	}
	var cost, uncached float64
	for i, id := range order {
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
	if fc := fifth.ForkContext; fc == nil || fc.CacheReadTokens < fc.Tokens/2 || fc.CacheWriteTokens == 0 {
		t.Errorf("fifth fork: launch estimate %+v, want its stable start read and the rest written", fc)
	} else {
		t.Logf("fifth fork: estimated %d tokens, %d read, %d written, $%.4f", fc.Tokens, fc.CacheReadTokens, fc.CacheWriteTokens, *fc.USD)
	}
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

// A fork's later steps and its resume read what its earlier requests
// wrote: its digest stays its first message, byte for byte.
func TestForkLaterStepsAndResumeReadTheirCache(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if f.isChild() && f.LastTool == "" && strings.Contains(f.LastUser, "Read notes.txt") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("read", map[string]string{"path": "notes.txt"})}}
		}
		return llmtest.Reply{Text: "done"}
	})
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv.CacheMinTokens = 1024
	parent := h.parent(bigParent(60)...)
	task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true, Prompt: "Read notes.txt."})
	if got := h.wait(task.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("fork: %s %s", got.Status, got.Error)
	}
	if _, err := h.mgr.Resume(context.Background(), task.ID, "And now?", ""); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(task.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("resume: %s %s", got.Status, got.Error)
	}
	msgs, err := h.store.MessagesAfter(context.Background(), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var usages []sa.Usage
	for _, m := range msgs {
		if m.Role == sa.RoleAssistant {
			usages = append(usages, m.Usage)
		}
	}
	names := []string{"first step", "second step", "resume"}
	if len(usages) != len(names) {
		t.Fatalf("%d answers, want %d", len(usages), len(names))
	}
	for i, u := range usages[1:] {
		before := prompt(usages[i])
		t.Logf("%s: prompt %d, read %d, wrote %d", names[i+1], prompt(u), u.CacheReadTokens, u.CacheWriteTokens)
		if u.CacheReadTokens < before {
			t.Errorf("%s read %d tokens from the cache, want at least the %d of the request before it", names[i+1], u.CacheReadTokens, before)
		}
	}
}
