package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	sa "github.com/superagents/superagents"
)

// TerminalOptions configure RunTerminal.
type TerminalOptions struct {
	In  io.Reader
	Out io.Writer
	// Environ is the environment the terminal is described by (TERM...);
	// nil means the process's.
	Environ []string
	// HistoryFile keeps the lines typed from one chat to the next; ""
	// keeps them for this chat only.
	HistoryFile string
	// Notice is shown first, as a notice (the model chosen by default).
	Notice string
}

// RunTerminal runs the chat in a terminal. The transcript goes into the
// terminal's own scrollback, above the prompt; only the answer being
// written, the status line and the prompt are redrawn.
func RunTerminal(ctx context.Context, c *Chat, opts TerminalOptions) error {
	hist, histErr := LoadHistory(opts.HistoryFile)
	frame := newFirstFrame(opts.Out)
	box := newOutbox(frame.drawn, firstFrameTimeout)
	m := newTerminalModel(ctx, c, hist, box)
	// Shown once the screen's width is known, so that they wrap.
	if opts.Notice != "" {
		m.startup = append(m.startup, Block{Kind: BlockNotice, Text: opts.Notice})
	}
	if histErr != nil {
		m.startup = append(m.startup, Block{Kind: BlockError, Text: histErr.Error()})
	}
	progOpts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(opts.In), tea.WithOutput(frame.output())}
	if opts.Environ != nil {
		progOpts = append(progOpts, tea.WithEnvironment(opts.Environ))
	}
	p := tea.NewProgram(m, progOpts...)
	c.SetSink(func(e Event) { p.Send(eventMsg(e)) })
	box.start(p)
	_, err := p.Run()
	box.stop()
	switch {
	case ctx.Err() != nil, errors.Is(err, tea.ErrInterrupted):
		return ErrInterrupted
	case err != nil:
		return fmt.Errorf("terminal: %w", err)
	}
	return nil
}

// eventMsg brings the chat's events into the terminal's update loop.
type eventMsg Event

// printer prints finished lines above the prompt, in order, and quits
// after the last.
type printer interface {
	print(text string)
	quit()
}

// outbox is the terminal's printer. Bubble Tea runs commands
// concurrently, so two Println commands may land in either order; the
// outbox hands every line to the program from one goroutine, in order,
// and only once the first frame is drawn (see firstFrame).
type outbox struct {
	mu    sync.Mutex
	items []outItem
	wake  chan struct{}
	done  chan struct{}
	halt  chan struct{}
	// drawn closes when the first frame is on the screen; the outbox
	// waits for it no longer than firstWait.
	drawn     <-chan struct{}
	firstWait time.Duration
}

type outItem struct {
	text string
	quit bool
}

func newOutbox(drawn <-chan struct{}, firstWait time.Duration) *outbox {
	return &outbox{wake: make(chan struct{}, 1), done: make(chan struct{}), halt: make(chan struct{}),
		drawn: drawn, firstWait: firstWait}
}

func (o *outbox) push(it outItem) {
	o.mu.Lock()
	o.items = append(o.items, it)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) print(text string) { o.push(outItem{text: text}) }
func (o *outbox) quit()             { o.push(outItem{quit: true}) }

// start delivers the items to p until stop.
func (o *outbox) start(p *tea.Program) {
	go func() {
		defer close(o.done)
		first := time.NewTimer(o.firstWait)
		defer first.Stop()
		select {
		case <-o.halt:
			return
		case <-o.drawn:
		case <-first.C:
		}
		for {
			select {
			case <-o.halt:
				return
			case <-o.wake:
			}
			o.mu.Lock()
			items := o.items
			o.items = nil
			o.mu.Unlock()
			for _, it := range items {
				if it.quit {
					p.Quit()
					continue
				}
				// Send, unlike Program.Println, gives up once the
				// program has ended.
				p.Send(tea.Println(it.text)())
			}
		}
	}()
}

func (o *outbox) stop() {
	close(o.halt)
	<-o.done
}

// terminalModel is the Bubble Tea model of the chat. Its Update does the
// work; it runs without a terminal in tests.
type terminalModel struct {
	ctx    context.Context
	chat   *Chat
	out    printer
	input  textinput.Model
	spin   spinner.Model
	hist   *History
	md     *markdown
	style  termStyle
	width  int
	height int

	// buf collects the transcript written during one update; w lays it
	// out.
	buf bytes.Buffer
	w   *writer
	// live is the answer being written, per turn, since its last tool
	// call, and latest each agent's newest turn (an agent's next turn may
	// begin before the end of the one before is shown). unseen holds what
	// agents out of view did, shown when the user moves to them.
	live   map[*Turn]*strings.Builder
	latest map[string]*Turn
	unseen map[string][]Block

	opened   bool    // the opening was printed
	startup  []Block // shown before the opening, once the screen's width is known
	spinning bool
	armed    bool // Ctrl+C was pressed once at the idle prompt
	// quitArmed: leaving was asked for while background tasks run, and
	// the warning shown; the next /exit or Ctrl+C leaves.
	quitArmed bool
	hint      string // a one-off line under the prompt
	quitting  bool
}

func newTerminalModel(ctx context.Context, c *Chat, hist *History, out printer) *terminalModel {
	in := textinput.New()
	in.Prompt = "> "
	in.Placeholder = "Ask anything; /help lists the commands"
	in.ShowSuggestions = true
	var names []string
	for _, cmd := range Commands() {
		names = append(names, "/"+cmd.Name)
	}
	in.SetSuggestions(names)
	in.Focus()
	m := &terminalModel{
		ctx: ctx, chat: c, out: out, input: in, hist: hist,
		spin:   spinner.New(spinner.WithSpinner(spinner.Dot)),
		md:     newMarkdown(),
		width:  80,
		live:   map[*Turn]*strings.Builder{},
		latest: map[string]*Turn{},
		unseen: map[string][]Block{},
	}
	m.style = newTermStyle(m.md, &m.width)
	m.w = &writer{out: &m.buf, style: m.style}
	return m
}

// open prints the opening of the chat, once the terminal's width is known.
func (m *terminalModel) open() {
	if m.opened {
		return
	}
	m.opened = true
	for _, b := range m.startup {
		m.w.block(b)
	}
	for _, b := range m.chat.Opening(m.ctx) {
		m.w.block(b)
	}
}

func (m *terminalModel) Init() tea.Cmd {
	return tea.Batch(textinput.Blink, tea.RequestBackgroundColor)
}

// flush prints what the update wrote to the transcript.
func (m *terminalModel) flush() {
	if m.buf.Len() == 0 {
		return
	}
	m.out.print(strings.TrimSuffix(m.buf.String(), "\n"))
	m.buf.Reset()
}

func (m *terminalModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.quitting {
		return m, nil
	}
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), msg.Height
		m.input.SetWidth(m.width - 3)
		m.md.setWidth(m.width)
		m.open()
	case tea.BackgroundColorMsg:
		m.md.setDark(msg.IsDark())
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case eventMsg:
		m.event(Event(msg))
	case spinner.TickMsg:
		if m.chat.Activity().Busy() {
			m.spin, cmd = m.spin.Update(msg)
		} else {
			m.spinning = false
		}
	default:
		m.input, cmd = m.input.Update(msg)
	}
	m.flush()
	if !m.spinning && !m.quitting && m.chat.Activity().Busy() {
		m.spinning = true
		cmd = tea.Batch(cmd, m.spin.Tick)
	}
	return m, cmd
}

// key handles a key press.
func (m *terminalModel) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c":
		return m.interrupt()
	case "ctrl+d":
		if m.input.Value() == "" {
			m.leave(false)
			return nil
		}
	case "esc":
		m.disarm()
		if m.chat.Interrupt() {
			m.hint = "Stopping the turn…"
		}
		return nil
	case "enter":
		return m.submit()
	case "up":
		m.disarm() // a line comes back: Ctrl+C clears it first
		if line, ok := m.hist.Prev(m.input.Value()); ok {
			m.input.SetValue(line)
			m.input.CursorEnd()
		}
		return nil
	case "down":
		m.disarm()
		if line, ok := m.hist.Next(); ok {
			m.input.SetValue(line)
			m.input.CursorEnd()
		}
		return nil
	}
	m.armed, m.hint = false, ""
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// interrupt is Ctrl+C: it stops the running turn (or the waits for
// tasks). At the idle prompt it clears what was typed, or leaves when the
// Ctrl+C before was there too; else it says a second Ctrl+C leaves.
func (m *terminalModel) interrupt() tea.Cmd {
	switch {
	case m.chat.Interrupt():
		m.armed, m.hint = false, "Stopping…"
	case m.input.Value() != "":
		m.input.Reset()
		m.arm()
	case m.quitArmed, m.armed && m.chat.QuitWarning() == "":
		m.quit()
	default:
		m.arm()
	}
	return nil
}

// disarm undoes arm: the next Ctrl+C does not leave.
func (m *terminalModel) disarm() {
	if m.armed {
		m.armed, m.hint = false, ""
	}
}

// arm makes the next Ctrl+C at an empty prompt leave, and says so, with
// what leaving would stop.
func (m *terminalModel) arm() {
	m.armed, m.hint = true, "Press Ctrl+C again to exit (or type /exit)."
	if warning := m.chat.QuitWarning(); warning != "" {
		m.quitArmed, m.hint = true, warning+" Press Ctrl+C again (or /exit) to quit."
	}
}

// leave quits, unless background tasks run and this is the first time:
// then it says what quitting stops and waits for a second request. force
// quits at once.
func (m *terminalModel) leave(force bool) {
	if warning := m.chat.QuitWarning(); !force && !m.quitArmed && warning != "" {
		m.quitArmed = true
		m.w.block(Block{Kind: BlockNote, Text: warning + " Type /exit again or press Ctrl+C to quit, or /exit! to quit at once."})
		return
	}
	m.quit()
}

func (m *terminalModel) quit() {
	m.quitting = true
	m.flush()
	m.out.quit()
}

// submit sends the line typed to the chat.
func (m *terminalModel) submit() tea.Cmd {
	line := m.input.Value()
	m.armed, m.hint = false, ""
	if strings.TrimSpace(line) == "" {
		return nil
	}
	m.input.Reset()
	m.open()
	if err := m.hist.Add(line); err != nil {
		m.w.block(Block{Kind: BlockError, Text: err.Error()})
	}
	m.w.block(Block{Kind: BlockUser, Text: strings.TrimSpace(line)})
	reply := m.chat.Submit(m.ctx, line)
	for _, b := range reply.Blocks {
		m.w.block(b)
		if b.Kind == BlockHeader {
			m.showUnseen(b.Session.ID)
		}
	}
	if reply.Quit {
		m.leave(reply.Force)
		return nil
	}
	m.quitArmed = false
	if t := reply.Turn(); t != nil {
		t.Start()
	}
	return nil
}

// showUnseen prints what an agent did while it was out of view.
func (m *terminalModel) showUnseen(id string) {
	for _, b := range m.unseen[id] {
		m.w.block(b)
	}
	delete(m.unseen, id)
}

// event shows what a turn did: in the transcript for the agent in view,
// kept for later for the others. Task notifications and waits are shown
// at once, for every agent.
func (m *terminalModel) event(e Event) {
	current := m.chat.Current().ID
	inView := e.Session == current
	switch e.Kind {
	case TurnStart:
		m.live[e.turn], m.latest[e.Session] = &strings.Builder{}, e.turn
		return
	case TurnText:
		if b := m.live[e.turn]; b != nil {
			b.WriteString(e.Text)
		}
		return
	case TaskNotice:
		// Printed above the prompt: the answer being written, if any,
		// stays below and is printed when complete.
		m.w.block(Block{Kind: BlockNotice, Text: noticeText(e, current)})
		return
	case TaskOutput:
		m.w.block(waitResult(e))
		if e.Cancelled {
			m.hint = ""
		}
		return
	case TasksChanged:
		return // the status line shows it
	}
	blocks := m.takeLive(e.turn)
	switch e.Kind {
	case TurnTool, TurnToolFailed:
		blocks = append(blocks, Block{Kind: BlockTool, Text: e.Text})
	case TurnEnd:
		delete(m.live, e.turn)
		if m.latest[e.Session] == e.turn {
			delete(m.latest, e.Session)
		}
		switch {
		case e.Cancelled:
			blocks = append(blocks, Block{Kind: BlockNote, Text: "Cancelled."})
		case e.Err != nil:
			blocks = append(blocks, Block{Kind: BlockError, Text: oneLine(e.Err.Error())})
		}
		if inView {
			m.hint = ""
		}
	}
	if inView {
		for _, b := range blocks {
			m.w.block(b)
		}
		if e.Kind == TurnEnd {
			m.w.closeGroup()
		}
		return
	}
	m.unseen[e.Session] = append(m.unseen[e.Session], blocks...)
	if e.Kind == TurnEnd {
		id := sa.ShortID(e.Session)
		text := fmt.Sprintf("%s has finished its turn: /switch %s shows its answer.", id, id)
		switch {
		case e.Cancelled:
			text = fmt.Sprintf("%s was stopped: /switch %s shows what it did.", id, id)
		case e.Err != nil:
			text = fmt.Sprintf("%s failed: /switch %s shows why.", id, id)
		}
		m.w.block(Block{Kind: BlockNote, Text: text})
	}
}

// takeLive returns the answer a turn has written so far as a block, and
// starts a new one.
func (m *terminalModel) takeLive(t *Turn) []Block {
	b := m.live[t]
	if b == nil || strings.TrimSpace(b.String()) == "" {
		return nil
	}
	text := b.String()
	b.Reset()
	return []Block{{Kind: BlockAnswer, Text: text}}
}

func (m *terminalModel) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	var b strings.Builder
	if t, ok := m.latest[m.chat.Current().ID]; ok && m.live[t] != nil && m.live[t].Len() > 0 {
		live := m.live[t]
		// Only the end of a long answer fits; all of it is printed above
		// when it is complete.
		lines := strings.Split(lipgloss.Wrap(strings.TrimRight(printable(live.String()), "\n"), m.width, ""), "\n")
		lines = lines[max(len(lines)-max(m.height-4, 3), 0):]
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	if status := m.status(); status != "" {
		b.WriteString(status + "\n")
	}
	b.WriteString(m.input.View())
	// The hint's row is there, blank, when there is no hint: the view
	// does not shrink when it goes, which would leave it on the screen.
	b.WriteString("\n" + m.style.faint.Render(ansi.Truncate(m.hint, m.width, "…")))
	return tea.NewView(b.String())
}

// status is the line above the prompt: what the agents and their
// background tasks are doing.
func (m *terminalModel) status() string {
	act := m.chat.Activity()
	var parts []string
	if act.Current {
		parts = append(parts, sa.ShortID(m.chat.Current().ID)+" is working (Esc stops it)")
	}
	if act.Others > 0 {
		parts = append(parts, plural(act.Others, "other agent")+" working")
	}
	if act.Waiting {
		parts = append(parts, "waiting for a task (Ctrl+C stops waiting)")
	}
	if act.Tasks > 0 {
		parts = append(parts, tasksStatus(act))
	}
	if len(parts) == 0 {
		return ""
	}
	if act.Cost != "" {
		parts = append(parts, act.Cost+" so far")
	}
	return m.style.faint.Render(strings.TrimSpace(m.spin.View()) + " " + strings.Join(parts, " · "))
}

// tasksStatus sums up the running background tasks: how many, and the
// tool calls they made.
func tasksStatus(act Activity) string {
	s := plural(act.Tasks, "background task") + " running"
	if act.Task != "" {
		s += " (" + clip(act.Task, 40) + ")"
	}
	return s + ", " + plural(act.ToolCalls, "tool call")
}
