package repl

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/superagents/superagents/internal/mdterm"
)

// markdown renders answers for the terminal, wrapped to the terminal's
// width, in the dark or light style that suits its background.
type markdown struct {
	width int
	dark  bool
}

func newMarkdown() *markdown { return &markdown{width: 80, dark: true} }

func (m *markdown) setWidth(w int) {
	if w != m.width {
		m.width = w
	}
}

func (m *markdown) setDark(dark bool) {
	if dark != m.dark {
		m.dark = dark
	}
}

// render returns the answer rendered. An answer is never lost to
// rendering: text that is not Markdown shows as paragraphs.
func (m *markdown) render(text string) string {
	out := mdterm.Render(text, mdterm.Options{Width: max(m.width-4, 20), Light: !m.dark})
	return trimLineEnds(trimBlankLines(out))
}

// trimLineEnds drops spaces at the ends of lines: once the terminal is
// made narrower, they would wrap into blank rows. A trimmed line ends
// with its style reset.
func trimLineEnds(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = trimLineEnd(line)
	}
	return strings.Join(lines, "\n")
}

// trimLineEnd removes the spaces at the end of a line, and the style
// sequences among them, scanning back from its end.
func trimLineEnd(line string) string {
	end, spaces := len(line), false
	for end > 0 {
		if line[end-1] == ' ' {
			end, spaces = end-1, true
			continue
		}
		start := strings.LastIndex(line[:end], "\x1b[")
		if line[end-1] != 'm' || start < 0 || strings.Trim(line[start+2:end-1], "0123456789;:") != "" {
			break
		}
		end = start // a style sequence: "ESC [ digits ; ... m"
	}
	if !spaces {
		return line
	}
	return line[:end] + "\x1b[m"
}

// trimBlankLines drops blank lines around a document.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	blank := func(line string) bool { return strings.TrimSpace(ansi.Strip(line)) == "" }
	start, end := 0, len(lines)
	for start < end && blank(lines[start]) {
		start++
	}
	for end > start && blank(lines[end-1]) {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}
