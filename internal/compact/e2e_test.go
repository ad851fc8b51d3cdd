package compact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/agent"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/compact"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/anthropic"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/sqlite"
)

// e2e is a real store in a directory (so it can be reopened), the read
// tool over a real workspace, and the Anthropic SDK talking to the fake
// Messages API.
type e2e struct {
	t       *testing.T
	dir     string
	store   *sqlite.Store
	srv     *llmtest.Server
	loop    *agent.Loop
	session sa.Session
}

func newE2E(t *testing.T, window int) *e2e {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st := agenttest.Store(t, dir)
	var log strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&log, "line %d: %s\n", i, strings.Repeat("data ", 60))
	}
	set := agenttest.Tools(t, map[string]string{"log.txt": log.String()}, "read")
	srv := llmtest.NewAnthropic(t)
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.BaseURL(), APIKey: "test", Limits: llmtest.SuiteLimits()})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	var auto *compact.Auto
	if window > 0 {
		auto = &compact.Auto{Window: window, Threshold: 0.8}
	}
	loop := &agent.Loop{Store: st, Provider: p, Model: "claude-test", ModelLabel: "anthropic/claude-test",
		System: "You read files carefully.", Tools: set, MaxSteps: 60, Compaction: auto}
	return &e2e{t: t, dir: dir, store: st, srv: srv, loop: loop, session: sess}
}

// isSummaryRequest reports whether a request asks for a summary.
func isSummaryRequest(r llmtest.Request) bool {
	return bytes.Contains(r.Body, []byte("Write that summary now"))
}

// script makes the model read log.txt one line per step for n steps, then
// answer; a summary request gets a summary of how far it got.
func (e *e2e) script(n int) {
	steps, summaries := 0, 0
	e.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if isSummaryRequest(r) {
			summaries++
			return llmtest.Reply{Text: fmt.Sprintf("Summary %d: the user wants log.txt read one line per step up to line %d; lines 1 to %d are read; continue with line %d.", summaries, n, steps, steps+1)}
		}
		steps++
		if steps > n {
			return llmtest.Reply{Text: fmt.Sprintf("All %d lines read.", n)}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: fmt.Sprintf(`{"path":"log.txt","offset":%d,"limit":1}`, steps)}}}
	})
}

func (e *e2e) history() []sa.Message {
	e.t.Helper()
	h, err := e.store.History(context.Background(), e.session.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// A 40-step task on a small context window compacts automatically and
// finishes; its history holds each marker followed by its summary, no
// request passes the window, later requests start at the summary, a fork
// made afterwards starts at the summary, and the history read back after
// a restart is identical.
func TestLongTaskCompactsAndFinishes(t *testing.T) {
	const window, steps = 3000, 40
	e := newE2E(t, window)
	e.script(steps)
	var compactions int
	e.loop.OnEvent = func(ev sa.TurnEvent) {
		if ev.Type == agent.EventCompacted {
			compactions++
		}
	}
	out, err := e.loop.Run(context.Background(), e.session.ID, engine.UserMessage(fmt.Sprintf("Read log.txt one line per step, lines 1 to %d.", steps)))
	if err != nil {
		t.Fatalf("the task died: %v (after %d steps)", err, out.Steps)
	}
	if want := fmt.Sprintf("All %d lines read.", steps); out.Text != want || out.Steps != steps+1 {
		t.Fatalf("outcome %q after %d steps, want %q after %d", out.Text, out.Steps, want, steps+1)
	}
	t.Logf("%d steps, %d compactions, %d requests", out.Steps, compactions, len(e.srv.Requests()))
	if compactions < 2 {
		t.Fatalf("%d compactions, want at least 2 on a %d-token window", compactions, window)
	}

	history := e.history()
	var markers, summaries int
	var lastSummary sa.Message
	for i, m := range history {
		if m.Role == sa.RoleUser && m.Parts[0].Type == sa.PartCompaction {
			markers++
			if i+1 >= len(history) || !history[i+1].Summary || history[i+1].Role != sa.RoleAssistant {
				t.Fatalf("marker %d is not followed by its summary", m.ID)
			}
		}
		if m.Summary {
			summaries++
			lastSummary = m
		}
		if m.Role == sa.RoleAssistant {
			if total := m.Usage.InputTokens + m.Usage.CacheReadTokens + m.Usage.CacheWriteTokens; total > window {
				t.Errorf("message %d: a request of %d tokens passed the %d-token window", m.ID, total, window)
			}
		}
	}
	if markers != compactions || summaries != compactions {
		t.Fatalf("%d markers and %d summaries stored for %d compactions", markers, summaries, compactions)
	}

	// The last request started at the latest summary.
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1].JSON()
	first := last["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(first, lastSummary.Text()) {
		t.Fatalf("the last request starts with %q, not the latest summary", first)
	}

	// A fork made now starts at the summary (FORK-PIPE-2).
	child, err := e.store.Fork(context.Background(), e.session.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	childHistory, err := e.store.History(context.Background(), child.ID)
	if err != nil {
		t.Fatal(err)
	}
	pipeline, err := forkctx.New(forkctx.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.Build(childHistory)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Stats.Compaction; !c.Found || c.SummaryMessageID != lastSummary.ID || c.Boundaries != compactions {
		t.Fatalf("fork context: compaction %+v, want the summary %d of %d", c, lastSummary.ID, compactions)
	}
	if !strings.Contains(res.Digest, lastSummary.Text()) || strings.Contains(res.Digest, "line 1:") {
		t.Fatalf("the fork digest does not start at the summary:\n%s", res.Digest)
	}

	// Replay after a restart is identical.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := sqlite.OpenDir(context.Background(), e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	again, err := reopened.History(context.Background(), e.session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(history, again); d != "" {
		t.Fatalf("history after a restart differs:\n%s", d)
	}
	if d := cmp.Diff(compact.View(history), compact.View(again)); d != "" {
		t.Fatalf("model view after a restart differs:\n%s", d)
	}
}

// Without compaction the same task dies of its full context: the fake
// API refuses a prompt larger than the window, as the real one does.
func TestLongTaskWithoutCompactionOverflows(t *testing.T) {
	const window = 3000
	e := newE2E(t, 0)
	e.srv.Handle(overflowing(window))
	_, err := e.loop.Run(context.Background(), e.session.ID, engine.UserMessage("Read log.txt one line per step, lines 1 to 40."))
	if err == nil || !strings.Contains(err.Error(), "prompt is too long") {
		t.Fatalf("err = %v, want the API's prompt-too-long refusal", err)
	}
}

// overflowing wraps the scripted handler: a request whose body passes the
// window (at four bytes a token) is refused with the API's 400.
func overflowing(window int) func(llmtest.Request) llmtest.Reply {
	steps := 0
	return func(r llmtest.Request) llmtest.Reply {
		if len(r.Body)/4 > window {
			return llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", len(r.Body)/4, window)}
		}
		steps++
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: fmt.Sprintf(`{"path":"log.txt","offset":%d,"limit":1}`, steps)}}}
	}
}

// A summary request that fails leaves the marker as a compaction in
// progress, which the view ignores; the next assistant message abandons it.
func TestFailedCompaction(t *testing.T) {
	e := newE2E(t, 0)
	ctx := context.Background()
	e.srv.Push(llmtest.Reply{Text: "Hello."})
	if _, err := e.loop.Run(ctx, e.session.ID, engine.UserMessage("Hi")); err != nil {
		t.Fatal(err)
	}
	c := compact.Compactor{Store: e.store, Provider: e.loop.Provider, Model: "claude-test", ModelLabel: "anthropic/claude-test"}

	e.srv.Push(llmtest.Reply{Status: 400, ErrorMessage: "bad request"})
	if _, err := c.Compact(ctx, e.session.ID, ""); err == nil {
		t.Fatal("a failed summary request compacted")
	}
	if _, pending := compact.Boundary(e.history()); !pending {
		t.Fatal("the marker of the failed compaction is not pending")
	}
	e.srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"log.txt"}`}}})
	if _, err := c.Compact(ctx, e.session.ID, ""); !errors.Is(err, compact.ErrNoSummary) {
		t.Fatalf("err = %v, want ErrNoSummary", err)
	}

	e.srv.Push(llmtest.Reply{Text: "Still here."})
	if _, err := e.loop.Run(ctx, e.session.ID, engine.UserMessage("Still there?")); err != nil {
		t.Fatal(err)
	}
	if s, pending := compact.Boundary(e.history()); s != -1 || pending {
		t.Fatalf("Boundary = %d, %v after the next answer; want none", s, pending)
	}

	// Then a manual compaction with instructions.
	e.srv.Push(llmtest.Reply{Text: "The user said hi twice."})
	res, err := c.Compact(ctx, e.session.ID, "mention greetings")
	if err != nil {
		t.Fatal(err)
	}
	if res.Marker.Parts[0].Type != sa.PartCompaction || res.Marker.Parts[0].Text != "mention greetings" || !res.Summary.Summary || res.Summary.Usage.IsZero() {
		t.Fatalf("stored %+v then %+v", res.Marker, res.Summary)
	}
	reqs := e.srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "Also: mention greetings") {
		t.Fatalf("the instructions were not sent: %s", body)
	}
	// Nothing left to compact: only a summary.
	if _, err := c.Compact(ctx, e.session.ID, ""); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("compacting a lone summary: err = %v", err)
	}
}
