// Package mdterm renders Markdown for a terminal: styled with SGR
// sequences and wrapped to a width. It parses with goldmark (CommonMark
// and GitHub's tables, strikethrough and task lists) and does nothing at
// package initialisation: no style registry, no syntax highlighter, no
// templates. (A renderer built on text/template's reflective executor
// keeps every exported method of the program linked, and a highlighter's
// lexer tables cost milliseconds at every start of the program.)
package mdterm

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Options say how to render.
type Options struct {
	// Width is the number of columns lines are wrapped to, the margin
	// included; below 20 it is taken as 20.
	Width int
	// Light picks colours for a light background.
	Light bool
}

// margin is the indentation of the whole document.
const margin = "  "

// palette is the SGR parameters of each element.
type palette struct {
	heading, code, codeBlock, quote, link, rule, item string
}

var (
	dark  = palette{heading: "1;38;5;39", code: "38;5;203;48;5;236", codeBlock: "38;5;251", quote: "38;5;246", link: "4;38;5;30", rule: "38;5;240", item: "38;5;246"}
	light = palette{heading: "1;38;5;27", code: "38;5;160;48;5;254", codeBlock: "38;5;238", quote: "38;5;243", link: "4;38;5;31", rule: "38;5;250", item: "38;5;243"}
)

// Render returns the Markdown text rendered. It never fails: text that is
// not Markdown is shown as paragraphs.
func Render(src string, o Options) string {
	width := max(o.Width, 20) - len(margin)
	p := dark
	if o.Light {
		p = light
	}
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))
	doc := md.Parser().Parse(text.NewReader(source))
	r := renderer{src: source, p: p}
	lines := r.blocks(doc, width)
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if line != "" {
			b.WriteString(margin)
			b.WriteString(line)
		}
	}
	return b.String()
}

type renderer struct {
	src []byte
	p   palette
}

// blocks renders the children of a block node as lines, a blank line
// between blocks (none between the items of a tight list).
func (r renderer) blocks(n ast.Node, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight(c) {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// tight reports whether a block follows its previous sibling without a
// blank line: the items of a tight list and the text of a tight item.
func tight(n ast.Node) bool {
	if l, ok := n.Parent().(*ast.List); ok && l.IsTight {
		return true
	}
	if _, ok := n.Parent().(*ast.ListItem); ok {
		if l, ok := n.Parent().Parent().(*ast.List); ok && l.IsTight {
			return true
		}
	}
	return false
}

func (r renderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		prefix := ""
		if n.Level > 1 {
			prefix = strings.Repeat("#", n.Level) + " "
		}
		return wrap(r.inline(n, []string{r.p.heading}, prefix), width)
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inline(n, nil, ""), width)
	case *ast.ThematicBreak:
		return []string{sgr(r.p.rule, strings.Repeat("─", min(width, 40)))}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.code(n)
	case *ast.HTMLBlock:
		return r.code(n)
	case *ast.Blockquote:
		bar := sgr(r.p.quote, "│") + " "
		return prefixed(r.blocks(n, width-2), bar, bar)
	case *ast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n)
	}
	if n.Type() == ast.TypeBlock {
		return r.blocks(n, width)
	}
	return nil
}

// code renders a code block's lines as they are, indented, not wrapped.
func (r renderer) code(n ast.Node) []string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(r.src))
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		line = strings.ReplaceAll(printable(line), "\t", "    ")
		if line == "" {
			out = append(out, "")
			continue
		}
		out = append(out, "  "+sgr(r.p.codeBlock, line))
	}
	return out
}

func (r renderer) list(l *ast.List, width int) []string {
	var out []string
	number := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(number) + ". "
			number++
		}
		indent := strings.Repeat(" ", len(marker))
		lines := r.blocks(item, width-len(marker))
		if len(lines) == 0 {
			lines = []string{""}
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		out = append(out, prefixed(lines, sgr(r.p.item, marker), indent)...)
	}
	return out
}

// table renders a table with its columns aligned; it is not wrapped.
func (r renderer) table(t *east.Table) []string {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, r.inline(cell, nil, ""))
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(cell))
		}
	}
	bar := sgr(r.p.rule, "│")
	var out []string
	for i, row := range rows {
		var b strings.Builder
		for j, w := range widths {
			if j > 0 {
				b.WriteString(" " + bar + " ")
			}
			cell := ""
			if j < len(row) {
				cell = row[j]
			}
			pad := w - ansi.StringWidth(cell)
			if j < len(t.Alignments) && t.Alignments[j] == east.AlignRight {
				b.WriteString(strings.Repeat(" ", pad) + cell)
			} else {
				b.WriteString(cell + strings.Repeat(" ", pad))
			}
		}
		out = append(out, b.String())
		if i == 0 {
			var sep []string
			for _, w := range widths {
				sep = append(sep, strings.Repeat("─", w))
			}
			out = append(out, sgr(r.p.rule, strings.Join(sep, "─┼─")))
		}
	}
	return out
}

// inline renders the inline children of n as one styled line, to be
// wrapped. Styles open and close around each word, so a line break
// between words never leaves a style open across a prefix.
func (r renderer) inline(n ast.Node, base []string, prefix string) string {
	w := inlineWriter{}
	w.styles = append(w.styles, base...)
	if prefix != "" {
		w.text(prefix)
	}
	r.inlines(&w, n)
	return w.b.String()
}

func (r renderer) inlines(w *inlineWriter, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inlineNode(w, c)
	}
}

func (r renderer) inlineNode(w *inlineWriter, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		w.text(string(n.Segment.Value(r.src)))
		if n.HardLineBreak() {
			w.b.WriteByte('\n')
		} else if n.SoftLineBreak() {
			w.text(" ")
		}
	case *ast.String:
		w.text(string(n.Value))
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(r.src))
			}
		}
		w.styled(r.p.code, func() { w.text(b.String()) })
	case *ast.Emphasis:
		code := "3"
		if n.Level >= 2 {
			code = "1"
		}
		w.styled(code, func() { r.inlines(w, n) })
	case *east.Strikethrough:
		w.styled("9", func() { r.inlines(w, n) })
	case *ast.Link:
		label := r.plain(n)
		r.inlines(w, n)
		if dest := string(n.Destination); dest != "" && dest != label {
			w.text(" ")
			w.styled(r.p.link, func() { w.text(dest) })
		}
	case *ast.AutoLink:
		w.styled(r.p.link, func() { w.text(string(n.URL(r.src))) })
	case *ast.Image:
		w.text("Image: " + r.plain(n) + " → ")
		w.styled(r.p.link, func() { w.text(string(n.Destination)) })
	case *east.TaskCheckBox:
		if n.IsChecked {
			w.text("[✓] ")
		} else {
			w.text("[ ] ")
		}
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			w.text(string(seg.Value(r.src)))
		}
	default:
		r.inlines(w, n)
	}
}

// plain is the text of an inline node without its styles.
func (r renderer) plain(n ast.Node) string {
	w := inlineWriter{}
	r.inlines(&w, n)
	return ansi.Strip(w.b.String())
}

// inlineWriter writes text with the styles in effect, word by word.
type inlineWriter struct {
	b      strings.Builder
	styles []string
}

func (w *inlineWriter) styled(code string, f func()) {
	w.styles = append(w.styles, code)
	f()
	w.styles = w.styles[:len(w.styles)-1]
}

func (w *inlineWriter) text(s string) {
	s = printable(s)
	if len(w.styles) == 0 {
		w.b.WriteString(s)
		return
	}
	code := strings.Join(w.styles, ";")
	for s != "" {
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i == 0 {
			j := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
			if j < 0 {
				j = len(s)
			}
			w.b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		if i < 0 {
			i = len(s)
		}
		w.b.WriteString(sgr(code, s[:i]))
		s = s[i:]
	}
}

// sgr wraps text in an SGR sequence and its reset.
func sgr(code, s string) string {
	if code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[m"
}

// printable drops control characters from the text of a document, so
// that an answer cannot move the cursor or restyle the terminal. A tab
// is kept; a code block turns it into spaces.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r != '\t' && (unicode.IsControl(r) || r == unicode.ReplacementChar) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// wrap wraps a styled line (and its hard breaks) to the width.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(s, max(width, 1), ""), "\n")
}

// prefixed puts first before the first line and rest before the others;
// blank lines stay blank.
func prefixed(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if line == "" && i > 0 {
			out[i] = strings.TrimRight(p, " ")
			continue
		}
		out[i] = p + line
	}
	return out
}
