package repl

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders answers for the terminal with Glamour, wrapped to the
// terminal's width, in the dark or light style that suits its background.
// The renderer is built again only when the width or background changes.
type markdown struct {
	width    int
	dark     bool
	renderer *glamour.TermRenderer
}

func newMarkdown() *markdown { return &markdown{width: 80, dark: true} }

func (m *markdown) setWidth(w int) {
	if w != m.width {
		m.width, m.renderer = w, nil
	}
}

func (m *markdown) setDark(dark bool) {
	if dark != m.dark {
		m.dark, m.renderer = dark, nil
	}
}

// render returns the answer rendered, or as it is if it cannot be: an
// answer is never lost to a rendering problem.
func (m *markdown) render(text string) string {
	if m.renderer == nil {
		style := styles.DarkStyle
		if !m.dark {
			style = styles.LightStyle
		}
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(m.width-4, 20)))
		if err != nil {
			return text
		}
		m.renderer = r
	}
	out, err := m.renderer.Render(text)
	if err != nil {
		return text
	}
	return trimLineEnds(trimBlankLines(out))
}

// trimLineEnds drops the spaces Glamour pads every line with up to the
// full width: once the terminal is made narrower, the padding would wrap
// into blank rows. A trimmed line ends with its style reset.
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

// trimBlankLines drops the blank lines Glamour puts around a document.
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
