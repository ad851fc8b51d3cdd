package openai_test

import (
	"context"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/llm/openai"
)

// A forked task's requests carry a prompt_cache_key made of the model, the
// agent's prompt and the first part of its digest: sibling forks and later
// forks of the same parent share it, other conversations send none.
func TestForkPromptCacheKey(t *testing.T) {
	digest := func(parts ...string) sa.Message {
		m := sa.Message{Role: sa.RoleSystem}
		for _, p := range parts {
			m.Parts = append(m.Parts, sa.TextPart(p))
		}
		return m
	}
	tests := []struct {
		name     string
		system   string
		messages []sa.Message
		group    string // requests of one group share a key; "" sends none
	}{
		{"a sibling fork", "agent", []sa.Message{digest("start", "rest A"), sa.UserMessage("do A")}, "fork"},
		{"another sibling", "agent", []sa.Message{digest("start", "rest A"), sa.UserMessage("do B")}, "fork"},
		{"a later fork", "agent", []sa.Message{digest("start", "rest B, longer"), sa.UserMessage("do C")}, "fork"},
		{"a later step of a fork", "agent", []sa.Message{digest("start", "rest A"), sa.UserMessage("do A"), {Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("ok")}}, sa.UserMessage("more")}, "fork"},
		{"another agent's fork", "other agent", []sa.Message{digest("start", "rest A"), sa.UserMessage("do A")}, "other"},
		{"a conversation", "agent", []sa.Message{sa.UserMessage("hello")}, ""},
	}
	srv := llmtest.NewOpenAI(t)
	srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
	p, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), APIKey: "k", Limits: llmtest.SuiteLimits()})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for i, tt := range tests {
		for _, err := range p.Stream(context.Background(), sa.ModelRequest{Model: "gpt-test", System: tt.system, Messages: tt.messages}) {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		key, _ := srv.Requests()[i].JSON()["prompt_cache_key"].(string)
		switch {
		case tt.group == "" && key != "":
			t.Errorf("%s: prompt_cache_key %q, want none", tt.name, key)
		case tt.group == "":
		case key == "":
			t.Errorf("%s: no prompt_cache_key", tt.name)
		case keys[tt.group] == "":
			for g, k := range keys {
				if k == key {
					t.Errorf("%s: the key of group %s", tt.name, g)
				}
			}
			keys[tt.group] = key
		case keys[tt.group] != key:
			t.Errorf("%s: key %q, want %q as the rest of its group", tt.name, key, keys[tt.group])
		}
	}
}
