package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agent"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/llm/openai"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a real store, a real workspace with the built-in tools, and
// the real OpenAI SDK talking to a fake server.
type fixture struct {
	t       testing.TB
	store   *sqlite.Store
	srv     *llmtest.Server
	ws      *tools.Workspace
	loop    *agent.Loop
	session sa.Session
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := tools.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := tools.Builtins(ws, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	p, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), APIKey: "k",
		Limits: config.Limits{RequestTimeout: config.Duration{Duration: 10 * time.Second}, StreamIdleTimeout: config.Duration{Duration: 10 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(context.Background(), sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: st, srv: srv, ws: ws, session: sess,
		loop: &agent.Loop{Store: st, Provider: p, Model: "gpt-test", ModelLabel: "openai/gpt-test", System: "test", Tools: set}}
}

func (f *fixture) run(ctx context.Context, prompt string) (sa.TurnOutcome, error) {
	return f.loop.Run(ctx, f.session.ID, sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(prompt)}})
}

// shape lists the stored history as role and part types.
func (f *fixture) shape() []string {
	f.t.Helper()
	hist, err := f.store.History(context.Background(), f.session.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, m := range hist {
		s := string(m.Role)
		for _, p := range m.Parts {
			s += " " + string(p.Type)
			if p.IsError {
				s += "!"
			}
		}
		out = append(out, s)
	}
	return out
}

func bashCall(id, command string) llmtest.ToolCall {
	in, _ := json.Marshal(map[string]any{"command": command, "timeout_seconds": 20})
	return llmtest.ToolCall{ID: id, Name: "bash", Input: string(in)}
}

func TestParallelToolCallsRunConcurrently(t *testing.T) {
	f := newFixture(t)
	// Each command waits for the other's file: run one after the other,
	// the first would time out.
	f.srv.Push(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			bashCall("a", "touch a; for i in $(seq 200); do [ -f b ] && exit 0; sleep 0.05; done; exit 7"),
			bashCall("b", "touch b; for i in $(seq 200); do [ -f a ] && exit 0; sleep 0.05; done; exit 7"),
		}},
		llmtest.Reply{Text: "both done"},
	)
	out, err := f.run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "both done" || out.ToolCalls != 2 || out.Steps != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	hist, _ := f.store.History(context.Background(), f.session.ID)
	for _, m := range hist {
		for _, p := range m.Parts {
			if p.Type == sa.PartToolResult && (p.IsError || !strings.Contains(p.Output, "exit code 0")) {
				t.Fatalf("call %s failed: the calls did not run at the same time: %q", p.CallID, p.Output)
			}
		}
	}
}

func TestToolFailureGoesBackToTheModel(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "r", Name: "read", Input: `{"path":"../../etc/passwd"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "x", Name: "no_such_tool", Input: `{}`}}},
		llmtest.Reply{Text: "I could not read it."},
	)
	out, err := f.run(context.Background(), "read it")
	if err != nil || out.Text != "I could not read it." {
		t.Fatalf("outcome %+v, %v: a tool failure must not end the turn", out, err)
	}
	want := "user text|assistant tool_call|tool tool_result!|assistant tool_call|tool tool_result!|assistant text"
	if got := strings.Join(f.shape(), "|"); got != want {
		t.Fatalf("history = %s\nwant      %s", got, want)
	}
	// The model saw the error text in the next request.
	if body := string(f.srv.Requests()[1].Body); !strings.Contains(body, "outside") && !strings.Contains(body, "escape") {
		t.Fatalf("the second request does not carry the refusal: %s", body)
	}
}

func TestLoopDetector(t *testing.T) {
	f := newFixture(t)
	f.loop.RepeatLimit = 3
	same := llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("", "echo same")}}
	f.srv.Push(same, same, same, llmtest.Reply{Text: "never asked"})
	out, err := f.run(context.Background(), "loop")
	if !errors.Is(err, agent.ErrLoopDetected) {
		t.Fatalf("error = %v, want ErrLoopDetected", err)
	}
	if n := len(f.srv.Requests()); n != 3 {
		t.Fatalf("%d model requests, want 3 (the turn stops at the third identical call)", n)
	}
	hist, _ := f.store.History(context.Background(), f.session.ID)
	last := hist[len(hist)-1].Parts[0]
	if !last.IsError || !strings.Contains(last.Output, "not run") {
		t.Fatalf("the repeated call's result = %+v, want an error saying it was not run", last)
	}
	if out.ToolCalls != 3 {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestMaxSteps(t *testing.T) {
	f := newFixture(t)
	f.loop.MaxSteps = 3
	var n atomic.Int32
	f.srv.Handle(func(llmtest.Request) llmtest.Reply {
		i := n.Add(1)
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("", "echo step "+string(rune('0'+i)))}}
	})
	_, err := f.run(context.Background(), "never stop")
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("error = %v, want ErrMaxSteps", err)
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("%d model requests, want 3", got)
	}
}

func TestProviderErrorEndsTheTurn(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "context too long for this model"})
	_, err := f.run(context.Background(), "hi")
	if err == nil || !strings.Contains(err.Error(), "context too long for this model") {
		t.Fatalf("error = %v, want the provider's message", err)
	}
	if got := strings.Join(f.shape(), "|"); got != "user text" {
		t.Fatalf("history after a failed request = %s", got)
	}
}

func TestStreamCutKeepsWhatWasSaid(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(llmtest.Reply{Text: "one two three four five six", Fault: llmtest.Cut, FaultAfter: 3})
	_, err := f.run(context.Background(), "count")
	if err == nil {
		t.Fatal("a cut stream must fail the turn")
	}
	hist, _ := f.store.History(context.Background(), f.session.ID)
	last := hist[len(hist)-1]
	if last.Role != sa.RoleAssistant || !strings.HasPrefix(last.Text(), "one two") || !strings.HasSuffix(last.Text(), "[interrupted]") {
		t.Fatalf("last message = %q, want the partial answer marked interrupted", last.Text())
	}
}

func TestCancelStopsToolsAndLeavesAConsistentSession(t *testing.T) {
	f := newFixture(t)
	pidFile := filepath.Join(f.ws.Dir(), "pid")
	f.srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("long", "echo started; echo $$ > pid; sleep 60")}})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	f.loop.OnEvent = func(e sa.TurnEvent) {
		if e.Type == sa.TurnEventToolStart {
			close(started)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.run(ctx, "wait")
		done <- err
	}()
	<-started
	// Wait until the command runs, then cancel.
	for i := 0; ; i++ {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if i > 500 {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancel did not stop the turn")
	}
	want := "user text|assistant tool_call|tool tool_result!"
	if got := strings.Join(f.shape(), "|"); got != want {
		t.Fatalf("history = %s\nwant      %s", got, want)
	}
	// The result keeps what the command printed, and says it was stopped.
	history, err := f.store.History(context.Background(), f.session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if out := history[len(history)-1].Parts[0].Output; !strings.Contains(out, "started") || !strings.Contains(out, "[cancelled: the command and its processes were killed]") {
		t.Fatalf("the cancelled call's result = %q", out)
	}
}

func TestDanglingCallIsAnsweredBeforeTheNextTurn(t *testing.T) {
	f := newFixture(t)
	// As a crash leaves it: a call stored, its result never.
	_, err := f.store.Append(context.Background(), f.session.ID,
		sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("start")}},
		sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, CallID: "lost", Name: "bash", Input: json.RawMessage(`{"command":"make"}`)}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Push(llmtest.Reply{Text: "resumed"})
	if _, err := f.run(context.Background(), "are you there?"); err != nil {
		t.Fatal(err)
	}
	want := "user text|assistant tool_call|tool tool_result!|user text|assistant text"
	if got := strings.Join(f.shape(), "|"); got != want {
		t.Fatalf("history = %s\nwant      %s", got, want)
	}
	body := string(f.srv.Requests()[0].Body)
	if !strings.Contains(body, `"tool_call_id":"lost"`) || !strings.Contains(body, "interrupted") {
		t.Fatalf("the request does not answer the dangling call: %s", body)
	}
}

// TestNotificationDuringTheLastRequestIsAnswered: a task notification
// stored while the model writes what would be the turn's last answer was
// not in that request; the turn goes on so the model sees it.
func TestNotificationDuringTheLastRequestIsAnswered(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	f.srv.Handle(func(req llmtest.Request) llmtest.Reply {
		switch calls.Add(1) {
		case 1:
			// The notification lands while this answer is being written.
			_, err := f.store.Append(context.Background(), f.session.ID, sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification,
				Parts: []sa.Part{sa.TextPart(`✓ Agent "late" finished in 1s.`)}})
			if err != nil {
				t.Error(err)
			}
			return llmtest.Reply{Text: "first answer"}
		default:
			if !strings.Contains(string(req.Body), `Agent \"late\" finished`) {
				return llmtest.Reply{Text: "the notification is missing"}
			}
			return llmtest.Reply{Text: "noted the late task"}
		}
	})
	out, err := f.run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "noted the late task" || out.Steps != 2 {
		t.Fatalf("outcome = %+v: the turn must answer a notification that arrived during its last request", out)
	}
	// A turn with nothing late ends after one request.
	f.srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "plain"} })
	if out, err := f.run(context.Background(), "again"); err != nil || out.Steps != 1 {
		t.Fatalf("outcome = %+v, %v", out, err)
	}
}

// historyReads counts the history reads of a real store: whole (n) and
// since a message (after).
type historyReads struct {
	sa.Sessions
	n, after atomic.Int32
}

func (h *historyReads) History(ctx context.Context, id string) ([]sa.Message, error) {
	h.n.Add(1)
	return h.Sessions.History(ctx, id)
}

func (h *historyReads) MessagesAfter(ctx context.Context, id string, afterID int64) ([]sa.Message, error) {
	h.after.Add(1)
	return h.Sessions.MessagesAfter(ctx, id, afterID)
}

// TestARunWithoutInputReadsOnceBeforeItsRequest: a run given no input (a
// task's, whose prompt came with the task) reads the history once before
// its first request, not once to repair it and again for the request. A
// turn with input reads again after storing it.
func TestARunWithoutInputReadsOnceBeforeItsRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		input      bool
		newSession bool  // Loop.NewSession: read as the messages since none
		wantWhole  int32 // whole reads before the request
		wantAfter  int32 // reads since a message before the request
	}{
		{"no input", false, false, 1, 0},
		{"input", true, false, 1, 1},
		{"new session", false, true, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			reads := &historyReads{Sessions: f.store}
			f.loop.Store = reads
			f.loop.NewSession = tc.newSession
			prompt := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("the prompt")}}
			var input []sa.Message
			if tc.input {
				input = append(input, prompt)
			} else if _, err := f.store.Append(ctx, f.session.ID, prompt); err != nil {
				t.Fatal(err)
			}
			var whole, after int32
			f.srv.Handle(func(req llmtest.Request) llmtest.Reply {
				if !strings.Contains(string(req.Body), "the prompt") {
					t.Errorf("the request misses the prompt: %s", req.Body)
				}
				whole, after = reads.n.Load(), reads.after.Load()
				return llmtest.Reply{Text: "done"}
			})
			if _, err := f.loop.Run(ctx, f.session.ID, input...); err != nil {
				t.Fatal(err)
			}
			if whole != tc.wantWhole || after != tc.wantAfter {
				t.Errorf("before the request: %d whole reads and %d since a message, want %d and %d", whole, after, tc.wantWhole, tc.wantAfter)
			}
		})
	}
}

// A new session is read as its own messages; one that holds a clear
// after all (the flag is a promise the caller may get wrong) is read
// whole again, so that the request holds only what follows the clear.
func TestANewSessionWithAClearIsReadWhole(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reads := &historyReads{Sessions: f.store}
	f.loop.Store, f.loop.NewSession = reads, true
	if _, err := f.store.Append(ctx, f.session.ID, sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("before the clear")}},
		sa.ClearMessage(), sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("the prompt")}}); err != nil {
		t.Fatal(err)
	}
	f.srv.Handle(func(req llmtest.Request) llmtest.Reply {
		if text := string(req.Body); !strings.Contains(text, "the prompt") || strings.Contains(text, "before the clear") {
			t.Errorf("the request is not the history after the clear: %s", text)
		}
		return llmtest.Reply{Text: "done"}
	})
	if _, err := f.loop.Run(ctx, f.session.ID); err != nil {
		t.Fatal(err)
	}
	if got := reads.n.Load(); got != 1 {
		t.Errorf("%d whole reads, want 1 (after the clear was seen)", got)
	}
}

// TestEachRequestHoldsTheWholeHistory: a turn reads the history whole
// once, then only what was stored since; each request still holds
// exactly what History holds at that moment, with what another writer
// stored meanwhile (a notification), and after a clear nothing from
// before it (read whole again).
func TestEachRequestHoldsTheWholeHistory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reads := &historyReads{Sessions: f.store}
	f.loop.Store = reads
	var calls atomic.Int32
	f.srv.Handle(func(req llmtest.Request) llmtest.Reply {
		hist, err := f.store.History(ctx, f.session.ID)
		if err != nil {
			t.Error(err)
		}
		var body struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Error(err)
		}
		n := calls.Add(1)
		// The system prompt, then one message each.
		if len(body.Messages) != 1+len(hist) {
			t.Errorf("request %d holds %d messages, the history %d (and the system prompt)", n, len(body.Messages), len(hist))
		}
		text := string(req.Body)
		switch n {
		case 1:
			if _, err := f.store.Append(ctx, f.session.ID, sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification,
				Parts: []sa.Part{sa.TextPart(`✓ Agent "side" finished in 1s.`)}}); err != nil {
				t.Error(err)
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("c1", "true")}}
		case 2:
			if !strings.Contains(text, `Agent \"side\" finished`) || !strings.Contains(text, `"tool_call_id":"c1"`) {
				t.Errorf("request 2 misses the notification or the tool result: %s", text)
			}
			if _, err := f.store.Append(ctx, f.session.ID, sa.ClearMessage(),
				sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("a fresh start")}}); err != nil {
				t.Error(err)
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("c2", "true")}}
		default:
			if !strings.Contains(text, "a fresh start") || strings.Contains(text, "the first prompt") || strings.Contains(text, `Agent \"side\"`) {
				t.Errorf("request 3 is not the history after the clear: %s", text)
			}
			return llmtest.Reply{Text: "done"}
		}
	})
	out, err := f.run(ctx, "the first prompt")
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "done" || out.Steps != 3 {
		t.Fatalf("outcome = %+v", out)
	}
	if got := reads.n.Load(); got != 2 {
		t.Errorf("the turn read the whole history %d times, want 2 (at its start, after the clear)", got)
	}
}
