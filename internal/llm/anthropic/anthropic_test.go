package anthropic

import (
	"testing"

	"github.com/superagents/superagents/internal/golden"

	"go.uber.org/goleak"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

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

func TestRequestTranslationGolden(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Text: "ok"})
	if _, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "k", llmtest.SuiteLimits()), llmtest.Conversation("claude-test")); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "request.golden", llmtest.IndentedBody(t, srv.Requests()[0]))
}

// TestEnvironmentIgnored: only the given key and base URL are used.
func TestEnvironmentIgnored(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	t.Setenv("ANTHROPIC_API_KEY", "from-the-environment")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-the-environment")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	srv.Push(llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	for _, key := range []string{"given", ""} {
		if _, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), key, llmtest.SuiteLimits()), llmtest.UserRequest("m", "x")); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if h := reqs[0].Header; h.Get("Authorization") != "Bearer given" && h.Get("X-Api-Key") != "given" {
		t.Errorf("the given key was not sent: %v", h)
	}
	if h := reqs[1].Header; h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("a key from the environment was sent: %v", h)
	}
}
