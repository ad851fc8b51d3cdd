package repl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxLine is the longest line RunPlain reads.
const maxLine = 1 << 20

// ErrInterrupted: the chat was stopped from outside (its context ended).
var ErrInterrupted = errors.New("interrupted")

// RunPlain runs the chat on lines read from in and prints a plain-text
// transcript to out, without escape codes, for scripts: the header of the
// agent in view, then for every line "> " and the line, then what it did.
// A message waits for the agent's answer before the next line is read.
// Background tasks' notifications, and the turns they wake, are printed
// between lines as they come. Once the input ends (or at /exit), it waits
// for the running tasks and the turns they wake, within the chat's settle
// limit; /exit! does not wait. It returns an error when a line failed;
// the transcript says why.
func RunPlain(ctx context.Context, c *Chat, in io.Reader, out io.Writer) error {
	p := &plainPrinter{chat: c, w: &writer{out: out, style: plainStyle{}}, turns: map[*Turn]*turnTranscript{}}
	c.SetSink(p.event)
	defer c.SetSink(nil)
	p.print(c.Opening(ctx)...)

	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	lines, readErr := readLines(readCtx, in)
	force := false
	for line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		reply := p.handle(ctx, line)
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		if reply.Quit {
			force = reply.Force
			break
		}
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err := readErr(); err != nil {
		return fmt.Errorf("read the chat's input: %w", err)
	}
	if !force {
		if err := p.settle(ctx); err != nil {
			return err
		}
	}
	if n := p.failed(); n > 0 {
		return fmt.Errorf("%s of the chat failed (the transcript says why)", plural(n, "line"))
	}
	return nil
}

// plainPrinter writes the piped transcript. A turn's transcript is
// printed whole when the turn ends, so that turns running at once (an
// agent woken by its tasks while another answers) never mix; and while a
// line is handled, what else happens waits until its output is complete.
type plainPrinter struct {
	chat *Chat

	mu       sync.Mutex
	w        *writer
	turns    map[*Turn]*turnTranscript
	line     string   // the agent whose turn the current line runs
	holding  bool     // a line is being handled
	held     []string // output waiting for the line to end
	failures int
}

// turnTranscript is a running turn's transcript, kept until it ends.
// Its streamed text is laid out once whole (up to the next tool call),
// so that an escape sequence split between pieces is still removed.
type turnTranscript struct {
	buf  bytes.Buffer
	w    *writer
	text strings.Builder
}

// flush lays out the text streamed since the last tool call.
func (t *turnTranscript) flush() {
	t.w.text(t.text.String())
	t.text.Reset()
}

// handle prints a line, carries it out and waits for the turn it starts.
// A script cannot see when an agent is busy: a message, /fork or /clear
// comes after the turns the agent in view runs (woken by its tasks),
// rather than be refused.
func (p *plainPrinter) handle(ctx context.Context, line string) Reply {
	in, err := ParseLine(line)
	idle := err == nil && in.needsIdle()
	var reply Reply
	for {
		if idle && !p.waitIdle(ctx) {
			return Reply{}
		}
		p.mu.Lock()
		p.holding = true
		p.mu.Unlock()
		reply = p.chat.Submit(ctx, line)
		if reply.busy == nil {
			break
		}
		// A wake began meanwhile: its transcript goes first.
		p.release()
		idle = true
	}
	p.mu.Lock()
	p.w.block(Block{Kind: BlockUser, Text: strings.TrimSpace(line)})
	for _, b := range reply.Blocks {
		p.w.block(b)
	}
	if reply.Failed {
		p.failures++
	}
	if t := reply.Turn(); t != nil {
		p.line = t.Session()
	}
	p.mu.Unlock()
	if t := reply.Turn(); t != nil {
		<-t.Start()
	}
	p.release()
	return reply
}

// release ends the handling of a line: what was held back is printed.
func (p *plainPrinter) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding, p.line = false, ""
	for _, s := range p.held {
		p.w.chunk(s)
	}
	p.held = nil
}

// waitIdle waits until the agent in view runs no turn (a turn may wake
// the next); false when ctx ended first.
func (p *plainPrinter) waitIdle(ctx context.Context) bool {
	for {
		t := p.chat.runningTurn(p.chat.Current().ID)
		if t == nil {
			return true
		}
		if !waitTurn(ctx, t) {
			return false
		}
	}
}

// waitTurn waits for a turn (if any) to end; false when ctx ended first.
func waitTurn(ctx context.Context, t *Turn) bool {
	if t == nil {
		return true
	}
	select {
	case <-t.done:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *plainPrinter) print(blocks ...Block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range blocks {
		p.w.block(b)
	}
}

func (p *plainPrinter) failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

// event takes the chat's events.
func (p *plainPrinter) event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case TurnStart:
		t := &turnTranscript{}
		t.w = &writer{out: &t.buf, style: plainStyle{}}
		p.turns[e.turn] = t
	case TurnText:
		if t := p.turns[e.turn]; t != nil {
			t.text.WriteString(e.Text)
		}
	case TurnTool, TurnToolFailed:
		if t := p.turns[e.turn]; t != nil {
			t.flush()
			t.w.toolLine(e.Text)
		}
	case TurnEnd:
		if e.Err != nil {
			p.failures++
		}
		t := p.turns[e.turn]
		if t == nil {
			return
		}
		delete(p.turns, e.turn)
		t.flush()
		t.w.end(e)
		text := t.buf.String()
		if e.Session != p.chat.Current().ID {
			text = agentLabel(e.Session) + ":\n" + text
		}
		p.output(text, e.Session == p.line && !e.Wake)
	case TaskNotice:
		// One for the agent answering the line now is printed at once:
		// its answer may read it, and must not come before it.
		p.output(render(Block{Kind: BlockNotice, Text: noticeText(e, p.chat.Current().ID)}), e.Session == p.line)
	case TaskOutput:
		b := waitResult(e)
		if b.Kind == BlockError {
			p.failures++
		}
		p.w.block(b)
	}
}

// output prints a finished piece of transcript, or keeps it until the
// line being handled is done (unless it is that line's own).
func (p *plainPrinter) output(text string, ownLine bool) {
	if p.holding && !ownLine {
		p.held = append(p.held, text)
		return
	}
	p.w.chunk(text)
}

// render lays a block out on its own.
func render(b Block) string {
	var buf bytes.Buffer
	(&writer{out: &buf, style: plainStyle{}}).block(b)
	return buf.String()
}

// settle waits, once the input has ended, for the background tasks and
// the turns they wake, so that a script sees their notifications.
func (p *plainPrinter) settle(ctx context.Context) error {
	c := p.chat
	if n := c.RunningTasks(); n > 0 {
		p.print(Block{Kind: BlockNote, Text: fmt.Sprintf("Waiting for %s to end…", plural(n, "background task"))})
	}
	limited, cancel := context.WithTimeout(ctx, c.settle)
	defer cancel()
	err := c.Settle(limited)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ErrInterrupted
	case errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("gave up waiting for the background tasks after %s", c.settle)
		if warning := c.QuitWarning(); warning != "" {
			msg += ": " + strings.ToLower(warning[:1]) + warning[1:]
		}
		p.print(Block{Kind: BlockError, Text: msg})
		p.mu.Lock()
		p.failures++
		p.mu.Unlock()
		return nil
	}
	return fmt.Errorf("wait for the background tasks: %w", err)
}

// readLines reads lines in the background, so that a chat waiting for
// input still notices its context ending. The returned function reports
// the read error once the channel is closed (or ctx ended).
func readLines(ctx context.Context, in io.Reader) (<-chan string, func() error) {
	lines := make(chan string)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64*1024), maxLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		err = sc.Err()
	}()
	return lines, func() error {
		select {
		case <-done:
			return err
		default:
			return nil // stopped early: what is left unread does not matter
		}
	}
}
