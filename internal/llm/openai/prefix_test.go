package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agent"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/llm/openai"
)

// TestPrefixByteStable runs a five-step task with the built-in tools and
// checks that every request starts with the exact bytes of the one before
// (same tools in the same order, same system prompt, same earlier
// messages), which is what OpenAI's automatic prompt caching needs, and
// that the cached tokens the API reports are stored on the messages.
func TestPrefixByteStable(t *testing.T) {
	ctx := context.Background()
	st := agenttest.Store(t, t.TempDir())
	set := agenttest.Tools(t, map[string]string{"a.txt": "alpha\n"}, "*")
	srv := llmtest.NewOpenAI(t)
	p, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), APIKey: "k", StreamUsage: true, Limits: llmtest.SuiteLimits()})
	if err != nil {
		t.Fatal(err)
	}
	const steps = 5
	for i := range steps - 1 {
		srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: fmt.Sprintf(`{"path":"a.txt","offset":%d}`, i+1)}}})
	}
	srv.Push(llmtest.Reply{Text: "done"})
	sess, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	loop := &agent.Loop{Store: st, Provider: p, Model: "gpt-test", ModelLabel: "openai/gpt-test", System: "You are careful.", Tools: set}
	if _, err := loop.Run(ctx, sess.ID, engine.UserMessage("Read a.txt line by line.")); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != steps {
		t.Fatalf("%d requests, want %d", len(reqs), steps)
	}
	var prevTools []byte
	var prevMsgs []json.RawMessage
	for i, r := range reqs {
		var body struct {
			Tools    json.RawMessage   `json:"tools"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if !bytes.Equal(body.Tools, prevTools) {
				t.Errorf("request %d: the tools changed", i+1)
			}
			if len(body.Messages) <= len(prevMsgs) {
				t.Fatalf("request %d: %d messages, no more than before", i+1, len(body.Messages))
			}
			for j, m := range prevMsgs {
				if !bytes.Equal(m, body.Messages[j]) {
					t.Errorf("request %d: message %d changed:\n%s\n%s", i+1, j, m, body.Messages[j])
				}
			}
		}
		prevTools, prevMsgs = body.Tools, body.Messages
	}

	hist, err := st.History(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	for _, m := range hist {
		if m.Role != sa.RoleAssistant {
			continue
		}
		step++
		if step > 1 && m.Usage.CacheReadTokens == 0 {
			t.Errorf("step %d: no cached tokens recorded: %+v", step, m.Usage)
		}
		if m.Usage.InputTokens <= 0 {
			t.Errorf("step %d: no uncached input recorded: %+v", step, m.Usage)
		}
	}
}
