package compact_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/compact"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func agentSays(text string) sa.Message {
	return sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart(text)}}
}

func summary(text string) sa.Message {
	m := agentSays(text)
	m.Summary = true
	return m
}

// texts lists a view as "role: text".
func texts(msgs []sa.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, fmt.Sprintf("%s: %s", m.Role, m.Text()))
	}
	return strings.Join(out, " | ")
}

// The boundary cases of FORK-PIPE-2: none, one, several (the latest wins), a
// compaction in progress (ignored for the previous one), an abandoned
// marker, and a clear after a compaction.
func TestBoundaryAndView(t *testing.T) {
	lead := "The conversation before this point was compacted to save room. Its summary:\n\n"
	tests := []struct {
		name    string
		history []sa.Message
		summary int
		pending bool
		view    string
	}{
		{"none", []sa.Message{user("a"), agentSays("b")}, -1, false, "user: a | assistant: b"},
		{"one", []sa.Message{user("a"), agentSays("b"), compact.Marker(""), summary("S1"), user("c")}, 3, false,
			"user: " + lead + "S1 | user: c"},
		{"latest of several", []sa.Message{user("a"), compact.Marker(""), summary("S1"), user("b"), compact.Marker("keep names"), summary("S2"), agentSays("c")}, 5, false,
			"user: " + lead + "S2 | assistant: c"},
		{"in progress", []sa.Message{user("a"), compact.Marker(""), summary("S1"), user("b"), compact.Marker("")}, 2, true,
			"user: " + lead + "S1 | user: b | user: "},
		{"abandoned", []sa.Message{user("a"), compact.Marker(""), agentSays("not a summary"), user("b")}, -1, false,
			"user: a | user:  | assistant: not a summary | user: b"},
		{"summary flag without marker", []sa.Message{user("a"), summary("imported")}, -1, false, "user: a | assistant: imported"},
		{"clear after", []sa.Message{compact.Marker(""), summary("S1"), sa.ClearMessage(), user("b")}, -1, false, "user:  | assistant: S1 | system:  | user: b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pending := compact.Boundary(tt.history)
			if got != tt.summary || pending != tt.pending {
				t.Errorf("Boundary = %d, %v; want %d, %v", got, pending, tt.summary, tt.pending)
			}
			if v := texts(compact.View(tt.history)); v != tt.view {
				t.Errorf("View =\n%s\nwant\n%s", v, tt.view)
			}
		})
	}
}

func TestViewLeavesHistoryAlone(t *testing.T) {
	h := []sa.Message{user("a"), compact.Marker(""), summary("S"), user("b")}
	compact.View(h)
	if h[2].Role != sa.RoleAssistant || !h[2].Summary || h[2].Text() != "S" {
		t.Fatalf("the history was modified: %+v", h[2])
	}
}

func TestDue(t *testing.T) {
	big := strings.Repeat("x", 4000) // 1,000 tokens
	withUsage := func(m sa.Message, u sa.Usage) sa.Message { m.Usage = u; return m }
	auto := compact.Auto{Window: 1000, Threshold: 0.8}
	tests := []struct {
		name    string
		history []sa.Message
		due     bool
	}{
		{"small", []sa.Message{user("hi")}, false},
		{"estimated from bytes", []sa.Message{user(big)}, true},
		{"reported usage counts", []sa.Message{user("a"), withUsage(agentSays("b"), sa.Usage{InputTokens: 100, CacheReadTokens: 650, OutputTokens: 60})}, true},
		{"under the limit", []sa.Message{user("a"), withUsage(agentSays("b"), sa.Usage{InputTokens: 100, CacheReadTokens: 600})}, false},
		{"a summary's usage is the old context", []sa.Message{user("a"), compact.Marker(""), withUsage(summary("S"), sa.Usage{InputTokens: 5000}), user("go on")}, false},
		{"a lone summary is never due", []sa.Message{compact.Marker(""), summary(big)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used, due := auto.Due(tt.history, "system", nil)
			if due != tt.due {
				t.Errorf("Due = %d tokens, %v; want %v (limit %d)", used, due, tt.due, auto.Limit())
			}
		})
	}
}
