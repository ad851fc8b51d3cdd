package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// lastToolOutput digs the newest tool result out of a request body, in
// either wire format: Anthropic sends it as a tool_result block in the
// last user message, OpenAI as the content of the last "tool" message.
func lastToolOutput(t *testing.T, req llmtest.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := req.Decode(&body); err != nil {
		t.Fatalf("decode request: %v", err)
	}
	for i := len(body.Messages) - 1; i >= 0; i-- {
		m := body.Messages[i]
		if m.Role == "tool" {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			return s
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(b.Content, &s) == nil {
				return s
			}
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(b.Content, &parts)
			if len(parts) > 0 {
				return parts[0].Text
			}
		}
	}
	t.Fatal("the request holds no tool result")
	return ""
}

// TestRunGrepThenRead drives `superagents run` against each fake wire
// server: the model greps the workspace, reads the file grep found, and
// answers with what it read. The stored session must hold every step.
func TestRunGrepThenRead(t *testing.T) {
	servers := []struct {
		name  string
		start func(t testing.TB) *llmtest.Server
		env   map[string]string
		model string
	}{
		{"anthropic", llmtest.NewAnthropic, map[string]string{"ANTHROPIC_API_KEY": "test-key"}, "anthropic/claude-test"},
		{"openai", llmtest.NewOpenAI, map[string]string{"OPENAI_API_KEY": "test-key"}, "openai/gpt-test"},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.MkdirAll(filepath.Join(ws, "notes"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{
				"notes/launch.txt": "Shopping list\nThe launch code is 4711-ALPHA.\n",
				"notes/other.txt":  "Nothing to see here.\n",
				"main.go":          "package main\n",
			} {
				if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			srv := s.start(t)
			srv.APIKey = "test-key"
			step := 0
			pathRE := regexp.MustCompile(`(notes/\w+\.txt):\d+:`)
			srv.Handle(func(req llmtest.Request) llmtest.Reply {
				step++
				switch step {
				case 1:
					return llmtest.Reply{Text: "Let me search.", ToolCalls: []llmtest.ToolCall{{Name: "grep", Input: `{"pattern":"launch code"}`}}}
				case 2:
					m := pathRE.FindStringSubmatch(lastToolOutput(t, req))
					if m == nil {
						return llmtest.Reply{Text: "grep found nothing"}
					}
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"` + m[1] + `"}`}}}
				default:
					code := regexp.MustCompile(`\d{4}-[A-Z]+`).FindString(lastToolOutput(t, req))
					return llmtest.Reply{Text: "The launch code is " + code + "."}
				}
			})

			h := newHarness(t)
			for k, v := range s.env {
				h.env[k] = v
			}
			key := "ANTHROPIC_BASE_URL"
			if s.name == "openai" {
				key = "OPENAI_BASE_URL"
			}
			h.env[key] = srv.BaseURL()

			out := h.ok("", "run", "--workspace", ws, "--model", s.model, "What is the launch code?")
			if out != "The launch code is 4711-ALPHA." {
				t.Fatalf("answer = %q, want the code read from the file", out)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Fatalf("the model was called %d times, want 3 (grep, read, answer)", n)
			}

			// The stored session holds every step, in order.
			var sessions []struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(h.ok("", "sessions", "--json")), &sessions); err != nil || len(sessions) != 1 {
				t.Fatalf("sessions: %v, %v", sessions, err)
			}
			var shape []string
			for _, line := range strings.Split(h.ok("", "export", sessions[0].ID), "\n") {
				var m struct {
					Role  string `json:"role"`
					Parts []struct {
						Type   string `json:"type"`
						Name   string `json:"name"`
						Output string `json:"output"`
					} `json:"parts"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				step := m.Role
				for _, p := range m.Parts {
					step += " " + p.Type
					if p.Name != "" {
						step += ":" + p.Name
					}
					if p.Type == "tool_result" && p.Name == "read" && !strings.Contains(p.Output, "4711-ALPHA") {
						t.Fatalf("stored read result %q lacks the file's content", p.Output)
					}
				}
				shape = append(shape, step)
			}
			want := []string{
				"user text",
				"assistant text tool_call:grep",
				"tool tool_result:grep",
				"assistant tool_call:read",
				"tool tool_result:read",
				"assistant text",
			}
			if strings.Join(shape, " | ") != strings.Join(want, " | ") {
				t.Fatalf("stored session =\n  %s\nwant\n  %s", strings.Join(shape, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no prompt", []string{"run", "--workspace", ws}, 2, "no prompt"},
		{"unknown agent", []string{"run", "--workspace", ws, "--agent", "nobody", "hi"}, 2, `unknown agent "nobody": available agents are explore, general`},
		{"unknown provider", []string{"run", "--workspace", ws, "--model", "nope/x", "hi"}, 2, `unknown provider "nope"`},
		{"missing key", []string{"run", "--workspace", ws, "--model", "anthropic/claude", "hi"}, 1, "ANTHROPIC_API_KEY"},
		{"agent with session", []string{"run", "--workspace", ws, "--agent", "explore", "--session", "abcd", "hi"}, 2, "a session keeps its own agent"},
		{"workspace missing", []string{"run", "--workspace", filepath.Join(ws, "nope"), "hi"}, 2, "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.run(tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
	// None of the failures left a session behind.
	if out := h.ok("", "sessions", "--json"); out != "[]" {
		t.Fatalf("failed runs created sessions: %s", out)
	}
}

func TestRunOfflineJSON(t *testing.T) {
	h := newHarness(t)
	out := h.ok("", "run", "--workspace", t.TempDir(), "--json", "What is 2+2?")
	lines := strings.Split(out, "\n")
	var last struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
		Text      string `json:"text"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Type != "done" || last.Text != "2+2 equals 4." || last.SessionID == "" {
		t.Fatalf("last event = %+v", last)
	}
	var text strings.Builder
	for _, l := range lines {
		var e struct{ Type, Text string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		if e.Type == "text" {
			text.WriteString(e.Text)
		}
	}
	if text.String() != "2+2 equals 4." {
		t.Fatalf("text events add up to %q", text.String())
	}
	// Continuing the session recalls the first question.
	if got := h.ok("", "run", "--workspace", t.TempDir(), "--session", last.SessionID, "What was my first question?"); got != `Your first question was "What is 2+2?"` {
		t.Fatalf("recall = %q", got)
	}
}
