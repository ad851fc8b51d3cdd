package repl

import (
	"io"
	"strings"

	sa "github.com/superagents/superagents"
)

// style turns the pieces of a transcript into text. The plain style
// leaves them as they are; the terminal's colours them and renders
// Markdown.
type style interface {
	header(s sa.Session) string
	user(text string) string
	answer(markdown string) string
	note(text string) string
	problem(text string) string
	tool(line string) string
	notice(text string) string
}

// plainStyle is the transcript of piped output: no escape codes at all.
type plainStyle struct{}

func (plainStyle) header(s sa.Session) string    { return Rule(HeaderLabel(s), PlainWidth) }
func (plainStyle) user(text string) string       { return "> " + text }
func (plainStyle) answer(markdown string) string { return markdown }
func (plainStyle) note(text string) string       { return text }
func (plainStyle) problem(text string) string    { return "error: " + text }
func (plainStyle) tool(line string) string       { return line }
func (plainStyle) notice(text string) string     { return text }

// writer lays out a transcript: blank lines between paragraphs, tool
// lines grouped, streamed text closed properly whatever comes next. The
// same layout serves a restored history and a live turn, so both read
// the same.
type writer struct {
	out   io.Writer
	style style
	// inText: streamed text was written and its paragraph is still open;
	// atLineStart tells whether it ended with a newline.
	inText      bool
	atLineStart bool
	// inTools: the last lines written were tool lines.
	inTools bool
}

func (w *writer) write(s string) { io.WriteString(w.out, s) }

// closeGroup ends an open paragraph of streamed text or group of tool
// lines with a blank line.
func (w *writer) closeGroup() {
	switch {
	case w.inText:
		if !w.atLineStart {
			w.write("\n")
		}
		w.write("\n")
	case w.inTools:
		w.write("\n")
	}
	w.inText, w.inTools = false, false
}

// paragraph writes text followed by a blank line.
func (w *writer) paragraph(text string) {
	w.closeGroup()
	w.write(strings.TrimRight(text, "\n") + "\n\n")
}

// chunk writes a piece of transcript laid out elsewhere (a turn's, kept
// until it ended), after what is open.
func (w *writer) chunk(s string) {
	w.closeGroup()
	w.write(s)
}

// block writes one block of the transcript.
func (w *writer) block(b Block) {
	b.Text = printable(b.Text)
	switch b.Kind {
	case BlockHeader:
		w.closeGroup()
		w.write(w.style.header(b.Session) + "\n")
	case BlockNote:
		w.paragraph(w.style.note(b.Text))
	case BlockError:
		w.paragraph(w.style.problem(b.Text))
	case BlockUser:
		w.paragraph(w.style.user(b.Text))
	case BlockAnswer:
		if strings.TrimSpace(b.Text) != "" {
			w.paragraph(w.style.answer(b.Text))
		}
	case BlockTool:
		w.toolLine(b.Text)
	case BlockNotice:
		w.paragraph(w.style.notice(b.Text))
	}
}

// text streams a piece of an answer as it is (but for what is not
// printable).
func (w *writer) text(delta string) {
	delta = printable(delta)
	if delta == "" {
		return
	}
	if w.inTools {
		w.closeGroup()
	}
	w.write(delta)
	w.inText, w.atLineStart = true, strings.HasSuffix(delta, "\n")
}

// toolLine writes the line of a tool call, in the group of its neighbours.
func (w *writer) toolLine(line string) {
	if w.inText {
		w.closeGroup()
	}
	w.write(w.style.tool(printable(line)) + "\n")
	w.inTools = true
}

// end closes a turn: its last paragraph, and how it ended when it did not
// end well.
func (w *writer) end(e Event) {
	switch {
	case e.Cancelled:
		w.paragraph(w.style.note("Cancelled."))
	case e.Err != nil:
		w.paragraph(w.style.problem(oneLine(e.Err.Error())))
	default:
		w.closeGroup()
	}
}

// oneLine keeps a message on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
