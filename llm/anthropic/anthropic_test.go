package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/config"
	"github.com/superagents/superagents/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, baseURL, apiKey string, l config.Limits) superagents.Provider {
	t.Helper()
	p, err := New(Options{APIKey: apiKey, BaseURL: baseURL, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	llmtest.Suite{Name: "anthropic", NewServer: llmtest.NewAnthropic, NewProvider: newProvider}.Run(t)
}

func TestDefaultsSent(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	p := newProvider(t, srv.BaseURL(), "k", llmtest.SuiteLimits())
	if _, err := llmtest.Collect(t.Context(), p, llmtest.UserRequest("claude-test", "hi")); err != nil {
		t.Fatal(err)
	}
	l := llmtest.SuiteLimits()
	l.MaxOutputTokens = 321
	req := llmtest.UserRequest("claude-test", "hi")
	if _, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "k", l), req); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[0].JSON()["max_tokens"]; got != float64(config.DefaultAnthropicMaxTokens) {
		t.Errorf("default max_tokens = %v", got)
	}
	if got := reqs[1].JSON()["max_tokens"]; got != float64(321) {
		t.Errorf("configured max_tokens = %v", got)
	}
	if h := reqs[0].Header; h.Get("X-Api-Key") != "k" && h.Get("Authorization") != "Bearer k" {
		t.Errorf("the API key was not sent: %v", h)
	}
	if reqs[0].Header.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
}

func TestThinkingAndSignature(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Reasoning: "I should read the file first.", Signature: "sig-123", ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read"}}})
	got, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "k", llmtest.SuiteLimits()), llmtest.UserRequest("m", "what is in the file?"))
	if err != nil {
		t.Fatal(err)
	}
	if text, sig := got.Reasoning(); text != "I should read the file first." || sig != "sig-123" {
		t.Errorf("reasoning %q, signature %q", text, sig)
	}
}

func TestOverloadedMessage(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"})
	l := llmtest.SuiteLimits()
	l.MaxRetries = 0
	_, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "k", l), llmtest.UserRequest("m", "hi"))
	if want := "anthropic: 529: overloaded_error: Overloaded"; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// conversation exercises every translation rule; its request body is the
// golden file testdata/request.golden.
func conversation() superagents.ModelRequest {
	user := func(s string) superagents.Message {
		return superagents.Message{Role: superagents.RoleUser, Parts: []superagents.Part{superagents.TextPart(s)}}
	}
	call := func(id, name, input string) superagents.Part {
		return superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(input)}
	}
	result := func(id, name, out string, isErr bool) superagents.Part {
		return superagents.Part{Type: superagents.PartToolResult, CallID: id, Name: name, Output: out, IsError: isErr}
	}
	return superagents.ModelRequest{
		Model:     "claude-test",
		System:    "You are a helpful agent.",
		MaxTokens: 1000,
		Messages: []superagents.Message{
			{Role: superagents.RoleSystem, Parts: []superagents.Part{superagents.TextPart("Context from the parent:\nUser: What is 2+2?")}},
			user("What is 2+2?"),
			{Role: superagents.RoleAssistant, Parts: []superagents.Part{
				{Type: superagents.PartReasoning, Text: "old thinking", Signature: "old-sig"},
				superagents.TextPart("2+2 equals 4."),
			}},
			{Role: superagents.RoleUser, Kind: superagents.KindCommand, Parts: []superagents.Part{superagents.TextPart("/fork")}},
			{Role: superagents.RoleSystem, Kind: superagents.KindFork, Parts: []superagents.Part{superagents.TextPart("forked from abc123")}},
			{Role: superagents.RoleUser, Kind: superagents.KindNotification, Parts: []superagents.Part{
				superagents.TextPart("Task abc123 completed."),
				{Type: superagents.PartText, Text: "Use superagents_output to read its result.", Hidden: true},
			}},
			user("Read a.txt and b.txt"),
			{Role: superagents.RoleAssistant, Parts: []superagents.Part{
				{Type: superagents.PartReasoning, Text: "Two reads.", Signature: "sig-1"},
				{Type: superagents.PartReasoning, Signature: "redacted-data"},
				{Type: superagents.PartReasoning, Text: "unsigned thoughts"},
				call("toolu_a", "read", `{"path":"a.txt"}`),
				call("toolu_b", "read", `{"path":"b.txt"}`),
				call("toolu_c", "bash", ``),
			}},
			{Role: superagents.RoleTool, Parts: []superagents.Part{result("toolu_b", "read", "bbb", false)}},
			{Role: superagents.RoleTool, Parts: []superagents.Part{result("toolu_a", "read", "", true), result("toolu_zz", "read", "orphan", false)}},
		},
		Tools: []superagents.ToolSpec{{
			Name:        "read",
			Description: "Read a file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
		}},
	}
}

func TestRequestTranslationGolden(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Text: "ok"})
	if _, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "k", llmtest.SuiteLimits()), conversation()); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	if err := json.Indent(&body, srv.Requests()[0].Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	llmtest.Golden(t, "testdata/request.golden", body.Bytes(), *update)
}
