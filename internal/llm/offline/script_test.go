package offline

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

const demoScript = `
# A demo: read a file the user names, then answer from what the tool read.
[[rules]]
matches = '(?i)read (\S+)'
step = 1
reply = "Let me read {{group 1}}."
tool_calls = [{ name = "read", input = { path = "{{group 1}}", limit = 10 } }]

[[rules]]
after_tool = "list"
reply = "read gave {{tool_result \"read\"}}; list gave {{tool_result \"list\"}}"

[[rules]]
after_tool = "read"
reply = "The file says: {{last_tool_result}}"

[[rules]]
contains = "weather"
reply = "It is sunny in the script. You asked: {{last_user}}"

[[rules]]
contains = "two tools"
tool_calls = [{ name = "read", input = { path = "a" } }, { name = "list" }]

[[rules]]
contains = "unknown tool"
tool_calls = [{ name = "delete_everything" }]

[[rules]]
contains = "bad group"
matches = "bad (group)"
reply = "{{group 5}}"
`

func TestScript(t *testing.T) {
	script, err := ParseScript("demo.toml", []byte(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Script: script})
	tools := []superagents.ToolSpec{{Name: "read"}, {Name: "list"}}
	call := func(id, name, input string) superagents.Part {
		return superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(input)}
	}
	result := func(id, name, out string) superagents.Message {
		return superagents.Message{Role: superagents.RoleTool, Parts: []superagents.Part{{Type: superagents.PartToolResult, CallID: id, Name: name, Output: out}}}
	}
	readCall := call("call_1_1", "read", `{"limit":10,"path":"notes.txt"}`)
	tests := []struct {
		name      string
		msgs      []superagents.Message
		wantText  string
		wantCalls []superagents.Part
		wantErr   string
	}{
		{
			name:      "matches with groups, in the reply and the input",
			msgs:      []superagents.Message{user("Please read notes.txt")},
			wantText:  "Let me read notes.txt.",
			wantCalls: []superagents.Part{readCall},
		},
		{
			name: "after the tool, quoting its result",
			msgs: []superagents.Message{
				user("Please read notes.txt"),
				{Role: superagents.RoleAssistant, Parts: []superagents.Part{superagents.TextPart("Let me read notes.txt."), readCall}},
				result("call_1_1", "read", "buy milk"),
			},
			wantText: "The file says: buy milk",
		},
		{
			name:     "contains, ignoring case, with last_user",
			msgs:     []superagents.Message{user("How is the WEATHER?")},
			wantText: "It is sunny in the script. You asked: How is the WEATHER?",
		},
		{
			name:      "several calls with fresh ids",
			msgs:      []superagents.Message{user("x"), agent("y"), user("use two tools")},
			wantCalls: []superagents.Part{call("call_3_1", "read", `{"path":"a"}`), call("call_3_2", "list", `{}`)},
		},
		{
			name: "tool_result by name",
			msgs: []superagents.Message{
				user("use two tools"),
				{Role: superagents.RoleAssistant, Parts: []superagents.Part{call("a", "read", `{}`), call("b", "list", `{}`)}},
				{Role: superagents.RoleTool, Parts: []superagents.Part{
					{Type: superagents.PartToolResult, CallID: "a", Name: "read", Output: "AAA"},
					{Type: superagents.PartToolResult, CallID: "b", Name: "list", Output: "BBB"},
				}},
			},
			wantText: "read gave AAA; list gave BBB",
		},
		{
			name:     "step: the read rule does not fire again later in the turn",
			msgs:     []superagents.Message{user("read x"), {Role: superagents.RoleAssistant, Parts: []superagents.Part{call("c", "grep", `{}`)}}, result("c", "grep", "g")},
			wantText: "The grep tool returned:\ng",
		},
		{
			name:     "no rule matches: the built-in answers",
			msgs:     []superagents.Message{user("What is 2+2?")},
			wantText: "2+2 equals 4.",
		},
		{
			name:    "a tool the request does not offer",
			msgs:    []superagents.Message{user("call an unknown tool")},
			wantErr: `demo.toml:25: rule 6 calls tool "delete_everything", which this request does not offer (offered: read, list)`,
		},
		{
			name:    "a group that does not exist",
			msgs:    []superagents.Message{user("bad group")},
			wantErr: "demo.toml:29: rule 7: template: reply:1:2: executing \"reply\" at <group 5>: error calling group: group 5 does not exist (the rule's regexp has 1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(tt.msgs...)
			req.Tools = tools
			got, err := llmtest.Collect(t.Context(), p, req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Text() != tt.wantText {
				t.Errorf("text = %q, want %q", got.Text(), tt.wantText)
			}
			if diff := cmp.Diff(tt.wantCalls, got.ToolCalls()); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			wantStop := superagents.StopEndTurn
			if len(tt.wantCalls) > 0 {
				wantStop = superagents.StopToolUse
			}
			if got.Stop() != wantStop {
				t.Errorf("stop = %q, want %q", got.Stop(), wantStop)
			}
		})
	}
}

func TestScriptErrors(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"no rules", "# nothing\n", "s.toml: the script has no rules"},
		{"unknown key", "[[rules]]\nreply = \"x\"\nreplly = \"y\"\n", "s.toml:3:1: rules.replly: unknown key"},
		{"wrong type", "[[rules]]\nstep = \"one\"\nreply = \"x\"\n", "s.toml:2:"},
		{"no answer", "[[rules]]\nreply = \"x\"\n\n[[rules]]\ncontains = \"y\"\n", "s.toml:4: rules.1: a rule needs a reply or tool_calls"},
		{"bad regexp", "[[rules]]\nmatches = \"(\"\nreply = \"x\"\n", "s.toml:1: rules.0: matches: error parsing regexp"},
		{"bad template", "[[rules]]\nreply = \"{{nope}}\"\n", `s.toml:1: rules.0: template: template:1: function "nope" not defined`},
		{"bad input template", "[[rules]]\ntool_calls = [{ name = \"read\", input = { path = \"{{\" } }]\n", "s.toml:1: rules.0: tool call 1: template"},
		{"tool without a name", "[[rules]]\ntool_calls = [{ input = {} }]\n", "s.toml:1: rules.0: tool call 1 has no name"},
		{"negative step", "[[rules]]\nstep = -1\nreply = \"x\"\n", "step must be 1 or more"},
		{"syntax", "[[rules]\n", "s.toml:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript("s.toml", []byte(tt.script))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *config.Error", err)
			}
		})
	}
}

func TestLoadScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.toml")
	if err := os.WriteFile(path, []byte(demoScript), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(path)
	if err != nil || len(s.Rules) != 7 || s.Path != path {
		t.Fatalf("LoadScript: %v, %+v", err, s)
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.toml")); err == nil || !strings.Contains(err.Error(), "offline script") {
		t.Fatalf("error = %v", err)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add(demoScript)
	f.Add("[[rules]]\nreply = \"x\"\n")
	f.Add("[[rules]]\nmatches = '(a)'\nreply = '{{group 1}}'\ntool_calls = [{ name = 't', input = { a = ['{{last_user}}', 1, { b = true }] } }]\n")
	f.Add("[[rules]]\n[rules.x]\n")
	f.Fuzz(func(t *testing.T, data string) {
		s, err := ParseScript("f.toml", []byte(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// A script that parses must answer without panicking.
		req := request(user("read something"), agent("ok"), user(data))
		for _, r := range s.Rules {
			for _, c := range r.ToolCalls {
				req.Tools = append(req.Tools, superagents.ToolSpec{Name: c.Name})
			}
		}
		for e, err := range New(Options{Script: s}).Stream(t.Context(), req) {
			if err != nil {
				break
			}
			if e.ToolCall != nil && !json.Valid(e.ToolCall.Input) {
				t.Fatalf("tool call input %q is not JSON", e.ToolCall.Input)
			}
		}
	})
}

// TestScriptedRoundTrip runs the live tests' round trip against a script:
// it checks the helper the live tests use, and that a script can drive a
// tool round trip whose answer comes from the tool's result.
func TestScriptedRoundTrip(t *testing.T) {
	script, err := ParseScript("round.toml", []byte(`
[[rules]]
contains = "single word"
reply = "pong"

[[rules]]
contains = "add tool"
step = 1
tool_calls = [{ name = "add", input = { a = 1234, b = 4321 } }]

[[rules]]
after_tool = "add"
reply = "The result is {{last_tool_result}}."
`))
	if err != nil {
		t.Fatal(err)
	}
	llmtest.LiveRoundTrip(t, New(Options{Script: script}), "offline")
}

// TestDocumentedExample runs the script of the documentation.
func TestDocumentedExample(t *testing.T) {
	s, err := LoadScript("testdata/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Script: s})
	req := request(user("please read notes.txt"))
	req.Tools = []superagents.ToolSpec{{Name: "read"}}
	got, err := llmtest.Collect(t.Context(), p, req)
	if err != nil || got.Text() != "Let me read notes.txt." || len(got.ToolCalls()) != 1 {
		t.Fatalf("%q %v: %v", got.Text(), got.ToolCalls(), err)
	}
	call := got.ToolCalls()[0]
	req.Messages = append(req.Messages,
		superagents.Message{Role: superagents.RoleAssistant, Parts: []superagents.Part{superagents.TextPart(got.Text()), call}},
		superagents.Message{Role: superagents.RoleTool, Parts: []superagents.Part{{Type: superagents.PartToolResult, CallID: call.CallID, Name: "read", Output: "buy milk"}}})
	got, err = llmtest.Collect(t.Context(), p, req)
	if err != nil || got.Text() != "The file says: buy milk" {
		t.Fatalf("%q: %v", got.Text(), err)
	}
}
