package repl

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	sa "github.com/superagents/superagents"
)

// termStyle is the transcript in the terminal: coloured (in the
// terminal's own 16 colours, which suit its theme), with answers rendered
// as Markdown.
type termStyle struct {
	md                                   *markdown
	width                                *int
	faint, bold, red, cyan, pink, yellow lipgloss.Style
}

func newTermStyle(md *markdown, width *int) termStyle {
	return termStyle{
		md: md, width: width,
		faint:  lipgloss.NewStyle().Faint(true),
		bold:   lipgloss.NewStyle().Bold(true),
		red:    lipgloss.NewStyle().Foreground(lipgloss.Red),
		cyan:   lipgloss.NewStyle().Foreground(lipgloss.Cyan),
		pink:   lipgloss.NewStyle().Foreground(lipgloss.Magenta),
		yellow: lipgloss.NewStyle().Foreground(lipgloss.Yellow),
	}
}

func (s termStyle) header(sess sa.Session) string {
	label := HeaderLabel(sess)
	rule := Rule(label, min(*s.width, 100))
	left, right, _ := strings.Cut(rule, " "+label+" ")
	return s.faint.Render(left) + " " + s.bold.Render(label) + " " + s.faint.Render(right)
}

func (s termStyle) user(text string) string       { return s.pink.Render(">") + " " + text }
func (s termStyle) notice(text string) string     { return s.lines(s.yellow, text) }
func (s termStyle) answer(markdown string) string { return s.md.render(markdown) }
func (s termStyle) note(text string) string       { return s.lines(s.faint, text) }
func (s termStyle) problem(text string) string    { return s.lines(s.red, "error: "+text) }

// lines wraps text to the terminal's width and styles each line on its
// own: a style given several lines at once pads them all to the widest,
// and the terminal would wrap the padding into blank rows.
func (s termStyle) lines(st lipgloss.Style, text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, l := range wrapLine(line, *s.width) {
			out = append(out, st.Render(l))
		}
	}
	return strings.Join(out, "\n")
}

// wrapLine breaks a line of plain text at word boundaries to fit width
// columns (a word longer than a line is cut). The lines that follow the
// first are indented under its text: under its second column when it has
// two, set apart by two spaces or more (as /help lays out the commands),
// else under its first word.
func wrapLine(line string, width int) []string {
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	prefix := line[:hangingIndent(line, width/2)]
	indent := ansi.StringWidth(prefix)
	lines := strings.Split(ansi.Wrap(line[len(prefix):], width-indent, ""), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", indent) + lines[i]
		}
	}
	return lines
}

// hangingIndent returns where the text the lines of a wrapped line are
// indented under starts: its second column, or its first word, when no
// wider than limit columns.
func hangingIndent(line string, limit int) int {
	start := len(line) - len(strings.TrimLeft(line, " "))
	if gap := strings.Index(line[start:], "  "); gap >= 0 {
		second := start + gap
		second += len(line[second:]) - len(strings.TrimLeft(line[second:], " "))
		if second < len(line) && ansi.StringWidth(line[:second]) <= limit {
			return second
		}
	}
	if ansi.StringWidth(line[:start]) <= limit {
		return start
	}
	return 0
}

func (s termStyle) tool(line string) string {
	if strings.HasPrefix(line, failedMark) {
		return s.red.Render(line)
	}
	return s.cyan.Render(line)
}
