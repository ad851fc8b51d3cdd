package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/golden"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, baseURL, apiKey string, l config.Limits) superagents.Provider {
	t.Helper()
	return newProviderWith(t, Options{APIKey: apiKey, BaseURL: baseURL, Limits: l, StreamUsage: true})
}

func newProviderWith(t *testing.T, o Options) *Provider {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	llmtest.Suite{Name: "openai", NewServer: llmtest.NewOpenAI, NewProvider: newProvider}.Run(t)
}

// TestSharedIndex is the Ollama quirk: every parallel call has index 0.
func TestSharedIndex(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Push(llmtest.Reply{SharedIndex: true, ToolCalls: []llmtest.ToolCall{
		{ID: "call_1", Name: "read", Input: `{"path":"a.txt"}`},
		{ID: "call_2", Name: "read", Input: `{"path":"b.txt"}`},
		{ID: "call_3", Name: "bash", Input: `{"command":"ls -la"}`},
	}})
	got, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "", llmtest.SuiteLimits()), llmtest.UserRequest("qwen3", "read both"))
	if err != nil {
		t.Fatal(err)
	}
	want := []superagents.Part{
		{Type: superagents.PartToolCall, CallID: "call_1", Name: "read", Input: json.RawMessage(`{"path":"a.txt"}`)},
		{Type: superagents.PartToolCall, CallID: "call_2", Name: "read", Input: json.RawMessage(`{"path":"b.txt"}`)},
		{Type: superagents.PartToolCall, CallID: "call_3", Name: "bash", Input: json.RawMessage(`{"command":"ls -la"}`)},
	}
	if diff := cmp.Diff(want, got.ToolCalls()); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if got.Stop() != superagents.StopToolUse {
		t.Errorf("stop = %q", got.Stop())
	}
}

// TestStopAfterToolCalls: Ollama says "stop" after tool calls.
func TestStopAfterToolCalls(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Push(llmtest.Reply{StopReason: "stop", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "read"}}})
	got, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "", llmtest.SuiteLimits()), llmtest.UserRequest("m", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Stop() != superagents.StopToolUse {
		t.Errorf("stop = %q, want tool_use", got.Stop())
	}
}

func TestStopReasons(t *testing.T) {
	for finish, want := range map[string]superagents.StopReason{
		"stop": superagents.StopEndTurn, "length": superagents.StopMaxTokens,
		"content_filter": superagents.StopOther, "tool_calls": superagents.StopToolUse,
	} {
		if got := stopReason(finish, false); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", finish, got, want)
		}
	}
}

func TestUsageInStream(t *testing.T) {
	for _, on := range []bool{true, false} {
		srv := llmtest.NewOpenAI(t)
		srv.Push(llmtest.Reply{Text: "hi", Usage: llmtest.Usage{InputTokens: 30, OutputTokens: 2, CacheReadTokens: 10}})
		p := newProviderWith(t, Options{BaseURL: srv.BaseURL(), Limits: llmtest.SuiteLimits(), StreamUsage: on})
		got, err := llmtest.Collect(t.Context(), p, llmtest.UserRequest("m", "x"))
		if err != nil {
			t.Fatal(err)
		}
		body := srv.Requests()[0].JSON()
		_, asked := body["stream_options"]
		if asked != on {
			t.Errorf("stream_usage %v: stream_options sent = %v", on, asked)
		}
		want := superagents.Usage{}
		if on {
			// prompt_tokens includes the cached ones; InputTokens does not.
			want = superagents.Usage{InputTokens: 20, OutputTokens: 2, CacheReadTokens: 10}
		}
		if got.Usage() != want {
			t.Errorf("stream_usage %v: usage = %+v, want %+v", on, got.Usage(), want)
		}
		if got.Stop() != superagents.StopEndTurn {
			t.Errorf("stop = %q", got.Stop())
		}
	}
}

func TestMaxTokensParameter(t *testing.T) {
	tests := []struct {
		completion bool
		limit, req int
		key        string
		want       any
	}{
		{completion: false, limit: 0, req: 0, key: "max_tokens", want: nil},
		{completion: false, limit: 500, req: 0, key: "max_tokens", want: float64(500)},
		{completion: false, limit: 500, req: 100, key: "max_tokens", want: float64(100)},
		{completion: true, limit: 500, req: 0, key: "max_completion_tokens", want: float64(500)},
	}
	for _, tt := range tests {
		srv := llmtest.NewOpenAI(t)
		srv.Push(llmtest.Reply{Text: "ok"})
		l := llmtest.SuiteLimits()
		l.MaxOutputTokens = tt.limit
		p := newProviderWith(t, Options{BaseURL: srv.BaseURL(), Limits: l, MaxCompletionTokens: tt.completion})
		req := llmtest.UserRequest("m", "x")
		req.MaxTokens = tt.req
		if _, err := llmtest.Collect(t.Context(), p, req); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].JSON()[tt.key]; got != tt.want {
			t.Errorf("%+v: %s = %v", tt, tt.key, got)
		}
	}
}

func TestReasoningContent(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Push(llmtest.Reply{Reasoning: "Let me think about it.", Text: "4"})
	got, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "", llmtest.SuiteLimits()), llmtest.UserRequest("deepseek", "2+2?"))
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := got.Reasoning(); text != "Let me think about it." || got.Text() != "4" {
		t.Errorf("reasoning %q, text %q", text, got.Text())
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Push(llmtest.Reply{Text: "ok"})
	t.Setenv("OPENAI_API_KEY", "from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	if _, err := llmtest.Collect(t.Context(), newProvider(t, srv.BaseURL(), "", llmtest.SuiteLimits()), llmtest.UserRequest("m", "x")); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" || h.Get("Openai-Organization") != "" {
		t.Errorf("the environment leaked into a keyless request: %v", h)
	}
}

func TestRequestTranslationGolden(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Push(llmtest.Reply{Text: "ok"})
	l := llmtest.SuiteLimits()
	l.MaxOutputTokens = 2048
	p := newProviderWith(t, Options{BaseURL: srv.BaseURL(), Limits: l, StreamUsage: true, MaxCompletionTokens: true})
	if _, err := llmtest.Collect(t.Context(), p, llmtest.Conversation("gpt-test")); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "request.golden", llmtest.IndentedBody(t, srv.Requests()[0]))
}

// BenchmarkStream measures the whole path of a streamed answer: the fake
// server on loopback, the SDK's decoding and this provider, for a reply of
// 1,000 text deltas and 3 parallel tool calls sharing index 0.
func BenchmarkStream(b *testing.B) {
	srv := llmtest.NewOpenAI(b)
	reply := llmtest.Reply{Text: strings.Repeat("word ", 1000), SharedIndex: true, ToolCalls: []llmtest.ToolCall{
		{ID: "c1", Name: "read", Input: `{"path":"a.go"}`}, {ID: "c2", Name: "read", Input: `{"path":"b.go"}`}, {ID: "c3", Name: "read", Input: `{"path":"c.go"}`},
	}}
	srv.Handle(func(llmtest.Request) llmtest.Reply { return reply })
	p, err := New(Options{BaseURL: srv.BaseURL(), Limits: llmtest.SuiteLimits(), StreamUsage: true})
	if err != nil {
		b.Fatal(err)
	}
	req := llmtest.UserRequest("m", "hi")
	events := 0
	for b.Loop() {
		got, err := llmtest.Collect(b.Context(), p, req)
		if err != nil || len(got.ToolCalls()) != 3 {
			b.Fatal(err)
		}
		events += len(got)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
