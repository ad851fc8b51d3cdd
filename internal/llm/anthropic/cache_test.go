package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/agent"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/llm/anthropic"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/sqlite"
)

// cacheFixture is a real store, the read tool over a real workspace, and
// the SDK talking to the fake Messages API with its prompt cache.
type cacheFixture struct {
	t     testing.TB
	store *sqlite.Store
	srv   *llmtest.Server
	loop  *agent.Loop
}

func newCacheFixture(t testing.TB, noCache bool) *cacheFixture {
	t.Helper()
	st := agenttest.Store(t, t.TempDir())
	var big strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&big, "%d %s\n", i, strings.Repeat("lorem ipsum ", 160))
	}
	set := agenttest.Tools(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "big.txt": big.String()}, "read")
	srv := llmtest.NewAnthropic(t)
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.BaseURL(), APIKey: "test", Limits: llmtest.SuiteLimits(), NoPromptCache: noCache})
	if err != nil {
		t.Fatal(err)
	}
	loop := &agent.Loop{Store: st, Provider: p, Model: "claude-test", ModelLabel: "anthropic/claude-test",
		System: "You are a careful assistant.", Tools: set}
	return &cacheFixture{t: t, store: st, srv: srv, loop: loop}
}

// readCalls scripts one read of each file, then a final answer.
func (f *cacheFixture) readCalls(files ...string) {
	for _, name := range files {
		f.srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: fmt.Sprintf(`{"path":%q}`, name)}}})
	}
	f.srv.Push(llmtest.Reply{Text: "Done reading."})
}

func (f *cacheFixture) run(sessionID string, input ...sa.Message) {
	f.t.Helper()
	if _, err := f.loop.Run(context.Background(), sessionID, input...); err != nil {
		f.t.Fatal(err)
	}
}

// TestCacheBreakpointsGolden runs a multi-step task, a forked child of it
// (digest stored as the child's first message, as the task manager does)
// and a resume of the child, and checks where every request puts its
// cache_control marks and what the fake API reports as read and written.
func TestCacheBreakpointsGolden(t *testing.T) {
	f := newCacheFixture(t, false)
	ctx := context.Background()
	parent, err := f.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	f.readCalls("a.txt", "b.txt")
	f.run(parent.ID, engine.UserMessage("Read a.txt and b.txt."))

	child, err := f.store.Fork(ctx, parent.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	history, err := f.store.History(ctx, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	pipeline, err := forkctx.New(forkctx.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	digest, err := pipeline.Build(history)
	if err != nil {
		t.Fatal(err)
	}
	f.readCalls("a.txt")
	f.run(child.ID, sa.ClearMessage(), sa.Message{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart(digest.Text())}},
		engine.UserMessage("Check a.txt again."))
	f.readCalls("b.txt")
	f.run(child.ID, engine.UserMessage("And b.txt?")) // the resume

	var out strings.Builder
	reqs := f.srv.Requests()
	names := []string{"task step 1", "task step 2", "task step 3", "fork step 1", "fork step 2", "resume step 1", "resume step 2"}
	if len(reqs) != len(names) {
		t.Fatalf("%d requests, want %d", len(reqs), len(names))
	}
	usages := f.storedUsage(parent.ID, child.ID)
	for i, r := range reqs {
		marks := describe(t, &out, names[i], r.Body)
		if marks > 4 {
			t.Errorf("%s: %d cache marks, the API allows 4", names[i], marks)
		}
		u := usages[i]
		fmt.Fprintf(&out, "  usage: input %d, cache read %d, cache write %d\n", u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens)
		// Every step after the first of a run reads what the one before wrote.
		if i != 0 && i != 3 && u.CacheReadTokens == 0 {
			t.Errorf("%s read nothing from the cache", names[i])
		}
	}
	golden.Check(t, "cache_breakpoints.golden", []byte(out.String()))
}

// storedUsage returns the usage stored on the assistant messages of the
// sessions, in order: each is what the API reported for one request.
func (f *cacheFixture) storedUsage(ids ...string) []sa.Usage {
	f.t.Helper()
	var out []sa.Usage
	seen := map[int64]bool{}
	for _, id := range ids {
		hist, err := f.store.History(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, m := range hist {
			if m.Role == sa.RoleAssistant && !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m.Usage)
			}
		}
	}
	return out
}

// describe writes one line per block of a request body, in the order the
// API caches them (tools, system, messages), with "*" on the marked ones,
// and returns the number of marks.
func describe(t *testing.T, out *strings.Builder, name string, body []byte) int {
	t.Helper()
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	marks := 0
	line := func(b map[string]any, label string) {
		mark := " "
		if b["cache_control"] != nil {
			mark = "*"
			marks++
		}
		fmt.Fprintf(out, "  %s %s\n", mark, label)
	}
	fmt.Fprintf(out, "%s:\n", name)
	for _, tool := range req.Tools {
		line(tool, fmt.Sprintf("tool %v", tool["name"]))
	}
	for _, s := range req.System {
		line(s, "system "+clip(fmt.Sprint(s["text"])))
	}
	for i, m := range req.Messages {
		for _, b := range m.Content {
			label := fmt.Sprintf("%d %s %v", i, m.Role, b["type"])
			switch b["type"] {
			case "text":
				label += " " + clip(fmt.Sprint(b["text"]))
			case "tool_use":
				label += fmt.Sprintf(" %v %v", b["name"], b["input"])
			case "tool_result":
				label += fmt.Sprintf(" %v", b["tool_use_id"])
			}
			line(b, label)
		}
	}
	return marks
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// A forked task's digest comes in parts (forkctx.Result.Parts): each is a
// system block, and a first step, which has no previous step to mark,
// marks the end of the digest's stable start; later steps and a resume
// mark the previous step instead.
func TestCacheMarksTheStableStartOfADigest(t *testing.T) {
	f := newCacheFixture(t, false)
	ctx := context.Background()
	child, err := f.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	digest := sa.Message{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart("chunk one"), sa.TextPart("chunk two"), sa.TextPart("the rest")}}
	f.readCalls("a.txt")
	f.run(child.ID, digest, engine.UserMessage("Check a.txt."))
	f.readCalls()
	f.run(child.ID, engine.UserMessage("Again?")) // the resume
	tests := []struct {
		name   string
		system []bool // which system blocks are marked
	}{
		{"first step", []bool{false, false, true, true}},
		{"second step", []bool{false, false, false, true}},
		{"resume", []bool{false, false, false, true}},
	}
	reqs := f.srv.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("%d requests, want %d", len(reqs), len(tests))
	}
	for i, tt := range tests {
		var body struct {
			System []map[string]any `json:"system"`
		}
		if err := reqs[i].Decode(&body); err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, b := range body.System {
			got = append(got, b["cache_control"] != nil)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.system) {
			t.Errorf("%s: system blocks marked %v, want %v", tt.name, got, tt.system)
		}
		var out strings.Builder
		if marks := describe(t, &out, tt.name, reqs[i].Body); marks > 4 {
			t.Errorf("%s: %d marks:\n%s", tt.name, marks, out.String())
		}
	}
}
