package repl

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2/tree"

	sa "github.com/superagents/superagents"
)

// PlainWidth is the width of header rules when the terminal's is unknown
// (piped output): the width of the transcript in the specification.
const PlainWidth = 69

// minRule is the shortest run of ─ on each side of a header.
const minRule = 3

// HeaderLabel names an agent in its header: "agent [abc123...]", with
// the profile's name in front when it is not the default one.
func HeaderLabel(s sa.Session) string {
	label := "agent [" + sa.ShortID(s.ID) + "]"
	if s.Agent != "" && s.Agent != sa.DefaultAgent {
		label = s.Agent + " " + label
	}
	return label
}

// Rule centres label in a line of ─ that is width cells wide, keeping at
// least a few ─ on each side when the width is too small.
func Rule(label string, width int) string {
	label = " " + label + " "
	rest := max(width-utf8.RuneCountInString(label), 2*minRule)
	left := rest / 2
	return strings.Repeat("─", left) + label + strings.Repeat("─", rest-left)
}

// toolArgKeys are the arguments that say best what a tool call does, in
// order of preference: the compact line of a call shows the first present.
var toolArgKeys = []string{"path", "file_path", "pattern", "command", "query", "url", "description", "prompt"}

// maxToolLine caps the argument part of a compact tool line, in runes.
const maxToolLine = 100

// ToolLine is the compact form of a tool call: "→ read main.go".
func ToolLine(call sa.Part) string {
	arg := toolArg(call.Input)
	if arg == "" {
		return "→ " + call.Name
	}
	return "→ " + call.Name + " " + arg
}

// toolArg picks the telling argument of a call, else its JSON, on one line.
func toolArg(input json.RawMessage) string {
	var args map[string]any
	if err := json.Unmarshal(input, &args); err != nil || len(args) == 0 {
		return ""
	}
	for _, k := range toolArgKeys {
		if v, ok := args[k].(string); ok && v != "" {
			return clip(v, maxToolLine)
		}
	}
	compact, err := json.Marshal(args) // keys sorted: deterministic
	if err != nil {
		return ""
	}
	return clip(string(compact), maxToolLine)
}

// failedMark starts the line of a tool call that failed.
const failedMark = "✗ "

// ToolFailedLine reports a tool call that failed: "✗ read: no such file".
func ToolFailedLine(result sa.Part) string {
	return failedMark + result.Name + ": " + clip(result.Output, maxToolLine)
}

// clip puts s on one line, printable, and cuts it to at most n runes,
// with "…".
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(printable(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printable is text from outside the chat (a model's answer, a tool's
// output, a task's description) made safe to show: escape sequences and
// control characters other than newlines and tabs are removed, so that a
// command's colours or cursor moves cannot clear the screen, restyle it,
// or leak into a script's transcript; bytes that are not UTF-8 become
// U+FFFD. (ansi.Strip would also drop all the text after a string
// sequence left open.)
func printable(s string) string {
	if !strings.ContainsFunc(s, isControl) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == '\x1b' {
			i += escapeLen(s[i:])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isControl(r) {
			b.WriteRune(r) // a byte that is not UTF-8 shows as U+FFFD
		}
		i += size
	}
	return b.String()
}

// escapeLen is the length of the escape sequence s starts with (ECMA-48).
// A string sequence (OSC, DCS, SOS, PM, APC) runs to its terminator on
// the same line; one left open loses only its introducer, not the text
// after it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for i := 2; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 0x40 && c <= 0x7e:
				return i + 1
			case c < 0x20 || c > 0x3f:
				return i // broken off: the rest is text
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_':
		if end := strings.IndexAny(s[2:], "\x07\x1b\n"); end >= 0 {
			end += 2
			switch {
			case s[end] == '\x07':
				return end + 1
			case s[end] == '\x1b' && end+1 < len(s) && s[end+1] == '\\':
				return end + 2
			}
		}
		return 2
	}
	// ESC, intermediates, then one final character: "ESC ( B".
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// isControl: a control character other than a newline or a tab, ESC (the
// start of escape sequences) included.
func isControl(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r)
}

// AgentTree is the tree of agents of a chat, for /agents.
type AgentTree struct {
	Session  sa.Session
	Status   Status
	Current  bool
	Children []*AgentTree
}

// String draws the tree, one agent per line:
//
//	agent [abc123...] idle
//	└── agent [xyz789...] working ← current
func (t *AgentTree) String() string {
	return t.node().String()
}

func (t *AgentTree) node() *tree.Tree {
	n := tree.Root(t.line())
	for _, c := range t.Children {
		if len(c.Children) == 0 {
			n.Child(c.line())
		} else {
			n.Child(c.node())
		}
	}
	return n
}

func (t *AgentTree) line() string {
	s := HeaderLabel(t.Session) + " " + string(t.Status)
	if t.Current {
		s += " ← current"
	}
	return s
}
