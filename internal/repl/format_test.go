package repl

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
)

// TestRule: the header rule of an agent, as the walkthrough shows it
// (FORK-HIST-4).
func TestRule(t *testing.T) {
	want := "───────────────────────── agent [abc123...] ─────────────────────────"
	if got := Rule(HeaderLabel(sa.Session{ID: "abc123abc123abcd"}), PlainWidth); got != want {
		t.Fatalf("Rule = %q, want the walkthrough's %q", got, want)
	}
	for _, width := range []int{0, 10, 24, 25, 80, 200} {
		got := Rule("agent [abc123...]", width)
		n := utf8.RuneCountInString(got)
		if width >= 25 && n != width {
			t.Errorf("width %d: rule is %d wide", width, n)
		}
		if !strings.HasPrefix(got, "───") || !strings.HasSuffix(got, "───") {
			t.Errorf("width %d: %q lacks the rule on both sides", width, got)
		}
	}
	if got := HeaderLabel(sa.Session{ID: "xyz789xyz789xyzz", Agent: "explore"}); got != "explore agent [xyz789...]" {
		t.Errorf("label of an explore agent = %q", got)
	}
}

func TestToolLine(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"read", `{"path":"main.go"}`, "→ read main.go"},
		{"bash", `{"command":"go test ./...\n  && echo ok","description":"run tests"}`, "→ bash go test ./... && echo ok"},
		{"grep", `{"pattern":"func main","path":"."}`, "→ grep . "},
		{"custom", `{"b":1,"a":"x"}`, `→ custom {"a":"x","b":1}`},
		{"none", `{}`, "→ none"},
		{"broken", `not json`, "→ broken"},
		{"long", `{"path":"` + strings.Repeat("x", 300) + `"}`, "→ long " + strings.Repeat("x", 99) + "…"},
	}
	for _, tt := range tests {
		got := ToolLine(sa.Part{Type: sa.PartToolCall, Name: tt.name, Input: json.RawMessage(tt.input)})
		if tt.name == "grep" {
			// path comes first in the order of preference.
			tt.want = "→ grep ."
		}
		if got != tt.want {
			t.Errorf("%s: ToolLine = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := ToolFailedLine(sa.Part{Name: "read", Output: "no such file:\n  main.go"}); got != "✗ read: no such file: main.go" {
		t.Errorf("ToolFailedLine = %q", got)
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text is left alone", "2+2 equals 4.\n\tindented — ✓ 日本", "2+2 equals 4.\n\tindented — ✓ 日本"},
		{"colours", "\x1b[31mRED\x1b[0m ok", "RED ok"},
		{"clear screen and cursor moves", "before\x1b[2J\x1b[1;1HOVERWRITTEN", "beforeOVERWRITTEN"},
		{"window title (OSC)", "\x1b]0;pwned\x07title", "title"},
		{"carriage returns and backspaces", "50%\r100%\r\nnext\bx", "50%100%\nnextx"},
		{"C1 control", "a\u009b31mb", "a31mb"},
		{"bell and NUL", "a\x07b\x00c", "abc"},
		{"a hyperlink (OSC ended by ST)", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ ok", "link ok"},
		{"a string sequence left open keeps the text after it", "before \x1bPhello\nworld", "before hello\nworld"},
		{"charset selection", "\x1b(Bok", "ok"},
		{"a CSI broken off", "\x1b[31\nnext", "\nnext"},
		{"a lone ESC at the end", "a\x1b", "a"},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("%s: printable(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	// What the transcript shows of a failing coloured command.
	failed := ToolFailedLine(sa.Part{Name: "bash", Output: "\x1b[2J\x1b[31mFAIL\x1b[0m: 2 tests\r\n"})
	if failed != "✗ bash: FAIL: 2 tests" {
		t.Errorf("ToolFailedLine = %q", failed)
	}
	var out strings.Builder
	w := &writer{out: &out, style: plainStyle{}}
	w.text("\x1b[1mbold\x1b[0m answer")
	w.toolLine("→ bash printf '\x1b[2J'")
	w.block(Block{Kind: BlockNotice, Text: "✓ Agent \"\x1b[31mx\" finished in 1s."})
	if strings.ContainsFunc(out.String(), isControl) {
		t.Errorf("the transcript holds control characters: %q", out.String())
	}
}

func TestAgentTreeGolden(t *testing.T) {
	s := func(id, agent string) sa.Session { return sa.Session{ID: id, Agent: agent} }
	tree := &AgentTree{Session: s("aaaaaa0000000000", ""), Status: StatusIdle, Children: []*AgentTree{
		{Session: s("bbbbbb0000000000", "general"), Status: StatusWorking, Children: []*AgentTree{
			{Session: s("cccccc0000000000", ""), Status: StatusStopped, Current: true},
			{Session: s("dddddd0000000000", "explore"), Status: StatusFailed},
		}},
		{Session: s("eeeeee0000000000", ""), Status: StatusIdle},
	}}
	golden.Check(t, "agents.golden", []byte(tree.String()+"\n"))
}

func TestLatestSession(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	ctx := context.Background()
	if _, err := LatestSession(ctx, eng.Store); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("LatestSession of an empty store: %v", err)
	}
	a, _ := eng.Store.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("q")}}}})
	b, _ := eng.Store.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("q")}}}})
	empty, _ := eng.Store.CreateSession(ctx, sa.NewSession{})
	latest := func(want sa.Session, why string) {
		t.Helper()
		got, err := LatestSession(ctx, eng.Store)
		if err != nil || got.ID != want.ID {
			t.Fatalf("%s: LatestSession = %s, %v; want %s", why, got.ID, err, want.ID)
		}
	}
	latest(b, "the newest message wins over a newer empty session")
	_ = empty
	eng.Store.Append(ctx, a.ID, sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("again")}})
	latest(a, "a message makes a session the latest")
	child, _ := eng.Store.Fork(ctx, a.ID, sa.ForkOptions{})
	latest(child, "a fresh fork is as recent as its fork point, and newer")
}

func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "chat_history")
	h, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"one", "two", "two", "  ", "multi\nline"} {
		if err := h.Add(line); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v, mode %v; want private", err, info.Mode())
	}
	again, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		line, ok := again.Prev("draft")
		if !ok {
			break
		}
		got = append(got, line)
	}
	if want := []string{"multi line", "two", "one"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history read back = %q, want %q", got, want)
	}
	// Past the newest comes the draft back.
	for range 2 {
		again.Next()
	}
	if line, ok := again.Next(); !ok || line != "draft" {
		t.Fatalf("Next at the end = %q, %v; want the draft", line, ok)
	}
	if _, ok := again.Next(); ok {
		t.Fatal("Next past the draft moved")
	}
}

func TestHistoryIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat_history")
	var b strings.Builder
	for i := range maxHistory + 50 {
		b.WriteString(strings.Repeat("x", i%7+1) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.entries) != maxHistory {
		t.Fatalf("%d entries kept, want %d", len(h.entries), maxHistory)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != maxHistory {
		t.Fatalf("the file keeps %d lines, want %d", n, maxHistory)
	}
	if _, err := LoadHistory(t.TempDir()); err == nil {
		t.Fatal("a directory read as a history file")
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"", "hi", "/fork", "/fork x y", `/fork "x"`, `/fork ""`, "//x", "/switch abc123...", "/kill a b", "/", "/ ", "/model a/b", "\x00/\xff",
		"/task general go", `/task --desc "a b" --fork general "p \" q"`, `/task general "x`, "/output --block abcd",
		`/resume abcd 'x'`, "/task --desc=", "/task --desc \"\x00", `/task general "a" b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		in, err := ParseLine(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error on more than one line: %q", err)
			}
			return
		}
		if in.Command != nil && in.Message != "" {
			t.Fatalf("%q parsed as both a command and a message", line)
		}
		if in.Command == nil && in.Args != "" {
			t.Fatalf("%q has arguments but no command", line)
		}
		if cmd := in.Command; cmd != nil && cmd.arg == parsedArgs {
			text, blank := in.parsed.text, strings.TrimSpace(in.parsed.text) == ""
			if len(in.parsed.words) != cmd.syntax.words || blank && (text != "" || cmd.syntax.text == requiredText) || cmd.syntax.text == noText && text != "" {
				t.Fatalf("%q parsed to %+v", line, in.parsed)
			}
		}
	})
}

func TestParagraphsOfATurn(t *testing.T) {
	const (
		request = "<request>"
		tool    = "<tool>"
	)
	tests := []struct {
		name   string
		events []string
		want   string
	}{
		{"one request", []string{request, "2+2 ", "equals 4."}, "2+2 equals 4."},
		{"an answer, then a notification read in the same turn", []string{request, "2+2 equals 4.", request, "Noted: ", "✓ done"}, "2+2 equals 4.\n\nNoted: ✓ done"},
		{"tool calls between", []string{request, "Let me look.", tool, request, "Found it."}, "Let me look.Found it."},
		{"a request with no text", []string{request, tool, request, request, "Done."}, "Done."},
		{"empty pieces", []string{request, "", request, "", "Done."}, "Done."},
	}
	for _, tt := range tests {
		var p paragraphs
		var got strings.Builder
		for _, e := range tt.events {
			switch e {
			case request:
				p.request()
			case tool:
				p.tool()
			default:
				got.WriteString(p.delta(e))
			}
		}
		if got.String() != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got.String(), tt.want)
		}
	}
}

func TestTrimLineEnd(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"no padding":          "no padding",
		"an item":             "an item",
		"\x1b[1mstyled\x1b[m": "\x1b[1mstyled\x1b[m",
		"padded   ":           "padded\x1b[m",
		"  \x1b[38;5;252mone\x1b[m\x1b[38;5;252m \x1b[m\x1b[38;5;252m \x1b[m": "  \x1b[38;5;252mone\x1b[m",
		"x \x1b[31m":      "x\x1b[m",
		"not a style m  ": "not a style m\x1b[m",
		"   ":             "\x1b[m",
	} {
		if got := trimLineEnd(in); got != want {
			t.Errorf("trimLineEnd(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPrintable: whatever a tool prints, what is shown is UTF-8 with no
// control characters but newlines and tabs, and loses nothing but escape
// sequences and control characters.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred\x1b[0m", "\x1b]0;t\x07x", "a\x1bPopen\nb", "50%\r100%", "\u009b1m", "\xff\x1b[", "日本\x1b(B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := printable(in)
		if strings.ContainsFunc(out, isControl) || !utf8.ValidString(out) || printable(out) != out {
			t.Fatalf("printable(%q) = %q", in, out)
		}
		if !strings.Contains(in, "\x1b") {
			want := strings.Map(func(r rune) rune {
				if isControl(r) {
					return -1
				}
				return r
			}, in)
			if out != want {
				t.Fatalf("printable(%q) = %q, want only the control characters gone: %q", in, out, want)
			}
		}
	})
}
