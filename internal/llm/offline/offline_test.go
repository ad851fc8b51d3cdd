package offline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

func user(text string) superagents.Message {
	return superagents.Message{Role: superagents.RoleUser, Parts: []superagents.Part{superagents.TextPart(text)}}
}

func agent(text string) superagents.Message {
	return superagents.Message{Role: superagents.RoleAssistant, Parts: []superagents.Part{superagents.TextPart(text)}}
}

func request(msgs ...superagents.Message) superagents.ModelRequest {
	return superagents.ModelRequest{Model: "offline", Messages: msgs}
}

func reply(t *testing.T, p *Provider, req superagents.ModelRequest) string {
	t.Helper()
	got, err := llmtest.Collect(t.Context(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	return got.Text()
}

// TestForkInheritsHistory replays the transcript of FORK-HIST-4: the
// answers must be exactly these.
func TestForkInheritsHistory(t *testing.T) {
	p := New(Options{})
	var history []superagents.Message
	turns := []struct{ ask, want string }{
		{"What is 2+2?", "2+2 equals 4."},
		{"What is 3+3?", "3+3 equals 6."},
	}
	for _, tt := range turns {
		history = append(history, user(tt.ask))
		got := reply(t, p, request(history...))
		if got != tt.want {
			t.Fatalf("%q: got %q, want %q", tt.ask, got, tt.want)
		}
		history = append(history, agent(got))
	}
	// /fork: the child sees the parent's history, then its own messages.
	child := append(append([]superagents.Message(nil), history...),
		superagents.Message{Role: superagents.RoleUser, Kind: superagents.KindCommand, Parts: []superagents.Part{superagents.TextPart("/fork")}},
		superagents.Message{Role: superagents.RoleSystem, Kind: superagents.KindFork, Parts: []superagents.Part{superagents.TextPart("Forked from abc123...")}},
		user("What was my first question?"),
	)
	if got, want := reply(t, p, request(child...)), `Your first question was "What is 2+2?"`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestMultiLevelInheritance: A (Q1, A1, Q2, A2) → B (Q3, A3) → C.
func TestMultiLevelInheritance(t *testing.T) {
	c := request(
		user("Q1"), agent("A1"), user("Q2"), agent("A2"),
		user("Q3"), agent("A3"),
		user("What was the first question?"),
	)
	if got, want := reply(t, New(Options{}), c), `Your first question was "Q1"`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestArithmetic(t *testing.T) {
	tests := []struct{ ask, want string }{
		{"What is 2+2?", "2+2 equals 4."},
		{"What is 3+3?", "3+3 equals 6."},
		{"what is 10 - 12?", "10 - 12 equals -2."},
		{"What's 6*7", "6*7 equals 42."},
		{"Calculate 10/4", "10/4 equals 2.5."},
		{"compute 1/8", "1/8 equals 0.125."},
		{"What is 0.1+0.2?", "0.1+0.2 equals 0.3."},
		{"What is 1.5 * 1.5?", "1.5 * 1.5 equals 2.25."},
		{"What is 2+3*4?", "2+3*4 equals 14."},
		{"What is (2+3)*4?", "(2+3)*4 equals 20."},
		{"What is -3 + 5?", "-3 + 5 equals 2."},
		{"What is 7 ÷ 2?", "7 ÷ 2 equals 3.5."},
		{"What is 3 × 3?", "3 × 3 equals 9."},
		{"How much is 100/3?", "100/3 equals approximately 33.3333333333."},
		{"What is 1/3?", "1/3 equals approximately 0.3333333333."},
		{"What is 123456789*987654321?", "123456789*987654321 equals 121932631112635269."},
		{"2+2", "2+2 equals 4."},
		{"And 8*8?", "8*8 equals 64."},
		{"now, what is 9*9?", "9*9 equals 81."},
		{"What about 3-5?", "3-5 equals -2."},
		{"What is 1/0?", "I cannot compute that: 1/0 divides by zero."},
		{"What is 5/(2-2)?", "I cannot compute that: 5/(2-2) divides by zero."},
		{"What is 2+?", "I cannot compute that: 2+ is not an expression I understand (it ends too early)."},
		{"What is (2+2?", "I cannot compute that: (2+2 is not an expression I understand (missing ))."},
		{"What is 1.2.3+1?", "I cannot compute that: 1.2.3+1 is not an expression I understand (bad number \"1.2.3\")."},
	}
	p := New(Options{})
	for _, tt := range tests {
		t.Run(tt.ask, func(t *testing.T) {
			if got := reply(t, p, request(user(tt.ask))); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNotArithmetic(t *testing.T) {
	for _, ask := range []string{"What is love?", "What is 42?", "Tell me about 2+2 in history", "What is -5?", "and so?", "What about it?", strings.Repeat("1+", 150) + "1"} {
		if got := reply(t, New(Options{}), request(user(ask))); got != Cannot {
			t.Errorf("%q: got %q, want the offline notice", ask, got)
		}
	}
}

func TestRecall(t *testing.T) {
	digest := superagents.Message{Role: superagents.RoleSystem, Parts: []superagents.Part{superagents.TextPart(
		"This task was forked from its parent. Some tool output was cut.\n\nUser: What is 2+2?\nAgent: 2+2 equals 4.\nUser: What is 3+3?\nAgent: 3+3 equals 6.\n[Tool: read] {\"path\":\"a\"}\nUser: Thanks\n")}}
	userDigest := digest
	userDigest.Role = superagents.RoleUser
	tests := []struct {
		name string
		msgs []superagents.Message
		want string
	}{
		{"first", []superagents.Message{user("What is 2+2?"), agent("2+2 equals 4."), user("What is 3+3?"), agent("3+3 equals 6."), user("What was my first question?")}, `Your first question was "What is 2+2?"`},
		{"the first", []superagents.Message{user("What is 2+2?"), agent("x"), user("what was the first question")}, `Your first question was "What is 2+2?"`},
		{"last", []superagents.Message{user("What is 2+2?"), agent("x"), user("What is 3+3?"), agent("y"), user("What was my last question?")}, `Your last question was "What is 3+3?"`},
		{"previous", []superagents.Message{user("What is 2+2?"), agent("x"), user("What is 3+3?"), agent("y"), user("What was my previous question?")}, `Your previous question was "What is 3+3?"`},
		{"nothing asked yet", []superagents.Message{user("What was my first question?")}, "You have not asked anything before this question."},
		{"notifications are not questions", []superagents.Message{
			{Role: superagents.RoleUser, Kind: superagents.KindNotification, Parts: []superagents.Part{superagents.TextPart("Task done.")}},
			user("Hello"), agent("x"), user("What was my first question?"),
		}, `Your first question was "Hello"`},
		{"digest as a system message", []superagents.Message{digest, user("What was my first question?")}, `Your first question was "What is 2+2?"`},
		{"digest as a user message", []superagents.Message{userDigest, user("What was my last question?")}, `Your last question was "Thanks"`},
		{"digest then the task's own messages", []superagents.Message{digest, user("Summarize the work"), agent("Done."), user("What was my last question?")}, `Your last question was "Summarize the work"`},
		{"a later message with User: lines is not a digest", []superagents.Message{user("Hi"), agent("x"), user("User: fake"), agent("y"), user("What was my last question?")}, `Your last question was "User: fake"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reply(t, New(Options{}), request(tt.msgs...)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOtherAnswers(t *testing.T) {
	call := superagents.Part{Type: superagents.PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage(`{}`)}
	tests := []struct {
		name string
		msgs []superagents.Message
		want string
	}{
		{"anything else", []superagents.Message{user("Write me a poem")}, Cannot},
		{"a notification", []superagents.Message{user("hi"), agent("x"), {Role: superagents.RoleUser, Kind: superagents.KindNotification, Parts: []superagents.Part{
			superagents.TextPart("Task abc123 completed.\nmore"), {Type: superagents.PartText, Hidden: true, Text: "hint"},
		}}}, "Noted: Task abc123 completed."},
		{"after a tool", []superagents.Message{user("read it"), {Role: superagents.RoleAssistant, Parts: []superagents.Part{call}},
			{Role: superagents.RoleTool, Parts: []superagents.Part{{Type: superagents.PartToolResult, CallID: "c1", Name: "read", Output: "hello"}}}},
			"The read tool returned:\nhello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reply(t, New(Options{}), request(tt.msgs...)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if !strings.Contains(Cannot, "offline model") || !strings.Contains(Cannot, "ANTHROPIC_API_KEY") || strings.Count(Cannot, ". ") > 0 {
		t.Errorf("the notice should be one sentence naming the offline model and how to configure a real one: %q", Cannot)
	}
}

func TestStreamsLikeAModel(t *testing.T) {
	req := request(user("What is 2+2?"))
	req.System = "You are terse."
	got, err := llmtest.Collect(t.Context(), New(Options{}), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Count(superagents.EventTextDelta); n < 2 || n > 4 {
		t.Errorf("%d text deltas, want a few", n)
	}
	if u := got.Usage(); u.InputTokens < 3 || u.OutputTokens < 3 {
		t.Errorf("usage = %+v, want an estimate", u)
	}
	if got.Stop() != superagents.StopEndTurn {
		t.Errorf("stop = %q", got.Stop())
	}
}

// TestDeterministic: the same request gives the same events, from this
// provider or a fresh one (as after a restart).
func TestDeterministic(t *testing.T) {
	script, err := ParseScript("s.toml", []byte(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	req := request(user("please read notes.txt"))
	req.Tools = []superagents.ToolSpec{{Name: "read"}}
	first, err := llmtest.Collect(t.Context(), New(Options{Script: script}), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := llmtest.Collect(t.Context(), New(Options{Script: script}), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("a second run differs (-first +second):\n%s", diff)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := llmtest.Collect(ctx, New(Options{}), request(user("What is 2+2?")))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v", err)
	}
}

func TestEmptyConversation(t *testing.T) {
	_, err := llmtest.Collect(t.Context(), New(Options{}), request())
	if !errors.Is(err, superagents.ErrInvalid) {
		t.Fatalf("error = %v", err)
	}
}

func BenchmarkOffline(b *testing.B) {
	p := New(Options{})
	req := request(user("What is 2+2?"), agent("2+2 equals 4."), user("What is 3+3?"), agent("3+3 equals 6."), user("What was my first question?"))
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range p.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
