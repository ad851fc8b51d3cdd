package repl

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	sa "github.com/superagents/superagents"
)

// screen stands in for the terminal: it records what the model prints
// above the prompt.
type screen struct {
	mu    sync.Mutex
	lines []string
	raw   []string // as printed, escape codes and all
	quits int
}

func (s *screen) print(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, ansi.Strip(text))
	s.raw = append(s.raw, text)
}

func (s *screen) rawText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.raw, "\n")
}

func (s *screen) quit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quits++
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// tui drives a terminal model the way Bubble Tea would, minus the
// terminal: turn events come back through a channel into Update.
type tui struct {
	t      *testing.T
	m      *terminalModel
	screen *screen
	events *eventLog
}

func newTUI(t *testing.T, c *Chat, hist *History) *tui {
	t.Helper()
	s := &screen{}
	u := &tui{t: t, m: newTerminalModel(context.Background(), c, hist, s), screen: s, events: newEventLog()}
	c.SetSink(u.events.add)
	u.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return u
}

// startTUI opens a new chat in a terminal model.
func startTUI(t *testing.T) (*Chat, *tui) {
	t.Helper()
	c := openChat(t, testEngine(t, t.TempDir()), "")
	return c, newTUI(t, c, &History{})
}

func (u *tui) update(msg tea.Msg) {
	u.t.Helper()
	m, _ := u.m.Update(msg)
	u.m = m.(*terminalModel)
}

func (u *tui) key(k tea.KeyPressMsg) { u.update(k) }

// typeText types text into the prompt.
func (u *tui) typeText(text string) {
	u.t.Helper()
	for _, r := range text {
		u.key(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// typeLine types a line and presses Enter.
func (u *tui) typeLine(line string) {
	u.t.Helper()
	u.typeText(line)
	u.key(tea.KeyPressMsg{Code: tea.KeyEnter})
}

// until feeds turn events to the model until one matches.
func (u *tui) until(match func(Event) bool) {
	u.t.Helper()
	for {
		e := u.events.next(u.t)
		u.update(eventMsg(e))
		if match(e) {
			return
		}
	}
}

func endOf(id string) func(Event) bool {
	return func(e Event) bool { return e.Kind == TurnEnd && e.Session == id }
}

var (
	ctrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	ctrlD = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	esc   = tea.KeyPressMsg{Code: tea.KeyEscape}
)

func TestTerminalWalkthrough(t *testing.T) {
	c, u := startTUI(t)
	root := c.Current().ID
	u.typeLine("What is 2+2?")
	u.until(endOf(root))
	u.typeLine("/fork")
	child := c.Current().ID
	u.typeLine("What was my first question?")
	u.until(endOf(child))

	got := u.screen.text()
	for _, want := range []string{
		"─ agent [" + sa.ShortID(root) + "] ─",
		"> What is 2+2?",
		"2+2 equals 4.",
		"> /fork",
		"─ agent [" + sa.ShortID(child) + "] ─",
		"Forked from " + sa.ShortID(root),
		`Your first question was "What is 2+2?"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	if i, j := strings.Index(got, "2+2 equals 4."), strings.Index(got, "> /fork"); i < 0 || j < i {
		t.Errorf("the transcript is out of order:\n%s", got)
	}
	if v := u.m.View().Content; !strings.Contains(v, "> ") {
		t.Errorf("the view has no prompt: %q", v)
	}
}

func TestTerminalCtrlC(t *testing.T) {
	c, u := startTUI(t)
	id := c.Current().ID

	u.typeLine("please sleep")
	u.until(func(e Event) bool { return e.Kind == TurnTool })
	v := ansi.Strip(u.m.View().Content)
	if !strings.Contains(v, sa.ShortID(id)+" is working") {
		t.Fatalf("no status line while the agent works:\n%s", v)
	}
	if !strings.ContainsAny(v, strings.Join(spinner.Dot.Frames, "")) {
		t.Fatalf("no spinner on the status line:\n%s", v)
	}
	u.key(ctrlC)
	if u.m.armed || strings.Contains(u.m.hint, "Ctrl+C again") {
		t.Fatalf("the Ctrl+C that stops a turn prepares to exit: hint %q", u.m.hint)
	}
	u.until(endOf(id))
	if got := u.screen.text(); !strings.Contains(got, "→ bash sleep 30") || !strings.Contains(got, "Cancelled.") || strings.Contains(got, "✗") {
		t.Fatalf("screen after Ctrl+C (the call stopped with the turn is no failure):\n%s", got)
	}
	if u.screen.quits != 0 || u.m.hint != "" {
		t.Fatalf("after the cancel: quits %d, hint %q", u.screen.quits, u.m.hint)
	}
	u.key(ctrlC)
	if u.screen.quits != 0 || !strings.Contains(u.m.hint, "Press Ctrl+C again to exit") {
		t.Fatalf("the first Ctrl+C at the empty prompt: quits %d, hint %q", u.screen.quits, u.m.hint)
	}
	u.key(ctrlC)
	if u.screen.quits != 1 || !u.m.quitting {
		t.Fatal("the second Ctrl+C at an empty prompt did not exit")
	}
	if v := u.m.View().Content; v != "" {
		t.Fatalf("the view after quitting is %q, want nothing", v)
	}
}

// TestTerminalStreamsThenRendersMarkdown: an answer shows below the
// transcript as it streams in, then is printed rendered as Markdown, its
// lines not padded to the width.
func TestTerminalStreamsThenRendersMarkdown(t *testing.T) {
	c, u := startTUI(t)
	id := c.Current().ID
	u.update(eventMsg{Session: id, Kind: TurnStart})
	u.update(eventMsg{Session: id, Kind: TurnText, Text: "Here is **bold** text"})
	if v := ansi.Strip(u.m.View().Content); !strings.Contains(v, "Here is **bold** text") {
		t.Fatalf("the streamed answer is not in view:\n%s", v)
	}
	if strings.Contains(u.screen.text(), "Here is") {
		t.Fatal("the answer was printed before it was complete")
	}
	u.update(eventMsg{Session: id, Kind: TurnText, Text: " and a list:\n\n- one\n- two\n"})
	u.update(eventMsg{Session: id, Kind: TurnEnd})
	if v := ansi.Strip(u.m.View().Content); strings.Contains(v, "Here is") {
		t.Fatalf("the answer is still in view once printed:\n%s", v)
	}
	raw := u.screen.rawText()
	plain := ansi.Strip(raw)
	if !strings.Contains(plain, "Here is bold text and a list:") || strings.Contains(plain, "**") {
		t.Fatalf("the answer is not rendered:\n%s", plain)
	}
	if !regexp.MustCompile(`\x1b\[[0-9;]*;1m(\x1b\[[0-9;]*m)*bold`).MatchString(raw) && !strings.Contains(raw, "\x1b[1mbold") {
		t.Fatalf("bold is not bold: %q", raw)
	}
	for _, line := range strings.Split(plain, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Fatalf("a line is padded: %q", line)
		}
	}
}

func TestTerminalCtrlCAtThePrompt(t *testing.T) {
	_, u := startTUI(t)
	u.typeText("draft")
	u.key(ctrlC) // clears the draft
	if u.m.input.Value() != "" || u.screen.quits != 0 || !strings.Contains(u.m.hint, "Press Ctrl+C again to exit") {
		t.Fatalf("Ctrl+C on a draft: value %q, quits %d, hint %q", u.m.input.Value(), u.screen.quits, u.m.hint)
	}
	u.key(ctrlC)
	if u.screen.quits != 1 {
		t.Fatal("Ctrl+C at the prompt it emptied did not exit")
	}

	_, u = startTUI(t)
	height := func() int { return strings.Count(u.m.View().Content, "\n") + 1 }
	before := height()
	u.key(ctrlC)
	if u.screen.quits != 0 || !strings.Contains(u.m.hint, "Press Ctrl+C again to exit") {
		t.Fatalf("the first Ctrl+C at an empty prompt: quits %d, hint %q", u.screen.quits, u.m.hint)
	}
	shown := height()
	u.typeText("x") // typing disarms
	// The hint's row stays when the hint goes (the terminal would keep
	// the row of a view that shrinks).
	if after := height(); u.m.hint != "" || before != shown || shown != after {
		t.Fatalf("hint %q; the view is %d, %d then %d lines high", u.m.hint, before, shown, after)
	}
	u.key(tea.KeyPressMsg{Code: tea.KeyBackspace})
	u.key(ctrlC)
	if u.screen.quits != 0 {
		t.Fatal("Ctrl+C after typing exited at once")
	}
	u.key(ctrlC)
	if u.screen.quits != 1 {
		t.Fatal("Ctrl+C twice did not exit")
	}
}

func TestTerminalEscAndCtrlD(t *testing.T) {
	c, u := startTUI(t)
	id := c.Current().ID
	u.typeLine("please sleep")
	u.until(func(e Event) bool { return e.Kind == TurnTool })
	u.key(esc)
	u.until(endOf(id))
	if u.m.armed || u.screen.quits != 0 {
		t.Fatal("Esc armed or quit")
	}
	u.typeText("x")
	u.key(ctrlD)
	if u.screen.quits != 0 {
		t.Fatal("Ctrl+D with text in the prompt quit")
	}
	u.key(tea.KeyPressMsg{Code: tea.KeyBackspace})
	u.key(ctrlD)
	if u.screen.quits != 1 {
		t.Fatal("Ctrl+D at an empty prompt did not quit")
	}
}

func TestTerminalExitCommand(t *testing.T) {
	_, u := startTUI(t)
	u.typeLine("/exit")
	if u.screen.quits != 1 {
		t.Fatal("/exit did not quit")
	}
	u.typeLine("What is 2+2?") // ignored once quitting
	if strings.Contains(u.screen.text(), "2+2") {
		t.Fatal("input after /exit was handled")
	}
}

func TestTerminalHistoryKeys(t *testing.T) {
	_, u := startTUI(t)
	u.typeLine("/help")
	u.typeLine("/agents")
	u.typeText("dra")
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{up, "/agents"}, {up, "/help"}, {up, "/help"}, {down, "/agents"}, {down, "dra"}, {down, "dra"},
	}
	for i, s := range steps {
		u.key(s.key)
		if got := u.m.input.Value(); got != s.want {
			t.Fatalf("step %d: prompt %q, want %q", i+1, got, s.want)
		}
	}
	// A line brought back after a first Ctrl+C is not left to a second
	// one that would exit: that Ctrl+C clears it, as it would a draft.
	for _, back := range []tea.KeyPressMsg{up, down, esc} {
		u.typeText("x") // typing disarms
		u.m.input.Reset()
		u.key(ctrlC)
		if !u.m.armed {
			t.Fatal("Ctrl+C at the empty prompt did not arm")
		}
		u.key(back)
		if u.m.armed || u.m.hint != "" {
			t.Fatalf("after %s: armed %v, hint %q: want both gone", back, u.m.armed, u.m.hint)
		}
		if back == up {
			u.key(ctrlC)
			if u.screen.quits != 0 || u.m.input.Value() != "" {
				t.Fatalf("Ctrl+C on a line brought back: quits %d, prompt %q; want the line cleared", u.screen.quits, u.m.input.Value())
			}
		}
	}
}

// TestTerminalAgentOutOfView: what an agent does while another is in view
// is kept, announced when its turn ends, and shown on /switch.
func TestTerminalAgentOutOfView(t *testing.T) {
	c, u := startTUI(t)
	u.typeLine("/fork")
	child := c.Current().ID
	u.typeLine("please sleep")
	u.typeLine("/parent") // before the model sees any of the turn's events
	u.until(func(e Event) bool { return e.Kind == TurnTool })
	if v := ansi.Strip(u.m.View().Content); !strings.Contains(v, "1 other agent working") {
		t.Fatalf("status line:\n%s", v)
	}
	u.typeLine("/kill " + child)
	u.until(endOf(child))
	short := sa.ShortID(child)
	if got := u.screen.text(); !strings.Contains(got, short+" was stopped: /switch "+short+" shows what it did.") || strings.Contains(got, "Cancelled.") {
		t.Fatalf("screen while the child is out of view:\n%s", got)
	}
	u.typeLine("/switch " + child)
	got := u.screen.text()
	tail := got[strings.LastIndex(got, "> /switch"):]
	for _, want := range []string{"Sleeping now.", "→ bash sleep 30", "Cancelled."} {
		if !strings.Contains(tail, want) {
			t.Errorf("/switch does not show %q:\n%s", want, tail)
		}
	}
}

func TestTerminalRestoredTranscript(t *testing.T) {
	dataDir := t.TempDir()
	eng := testEngine(t, dataDir)
	first := openChat(t, eng, "")
	if _, err := runPlain(t, first, "What is 2+2?\nlist the files\nbreak something\n"); err != nil {
		t.Fatal(err)
	}
	c := openChat(t, testEngine(t, dataDir), first.Current().ID)
	u := newTUI(t, c, &History{})
	got := u.screen.text()
	if strings.Contains(u.screen.rawText(), "\x1b[2J") {
		t.Errorf("the command's escape codes reached the screen: %q", u.screen.rawText())
	}
	for _, want := range []string{"> What is 2+2?", "2+2 equals 4.", "Let me look.", "→ bash echo one two", "✗ bash: broken [exit code 3]"} {
		if !strings.Contains(got, want) {
			t.Errorf("restored screen lacks %q:\n%s", want, got)
		}
	}
}

// TestTerminalToolEscapes: what a failing command prints reaches the
// screen without its escape codes.
func TestTerminalToolEscapes(t *testing.T) {
	c, u := startTUI(t)
	u.typeLine("break something")
	u.until(endOf(c.Current().ID))
	if raw := u.screen.rawText(); strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\r") {
		t.Fatalf("the command's control codes reached the screen: %q", raw)
	}
	if got := u.screen.text(); !strings.Contains(got, "✗ bash: broken [exit code 3]") {
		t.Fatalf("screen:\n%s", got)
	}
}

func TestTerminalLiveAnswerFitsTheScreen(t *testing.T) {
	c, u := startTUI(t)
	u.update(tea.WindowSizeMsg{Width: 40, Height: 10})
	id := c.Current().ID
	u.update(eventMsg{Session: id, Kind: TurnStart})
	u.update(eventMsg{Session: id, Kind: TurnText, Text: strings.Repeat("a long line of streamed text ", 30)})
	view := ansi.Strip(u.m.View().Content)
	if n := strings.Count(view, "\n") + 1; n > 10 {
		t.Fatalf("the view is %d lines high on a 10-line screen:\n%s", n, view)
	}
	for _, line := range strings.Split(view, "\n") {
		if ansi.StringWidth(line) > 40 {
			t.Fatalf("line wider than the screen: %q", line)
		}
	}
}

// untilActivity feeds events to the model until the chat's activity
// satisfies ok.
func (u *tui) untilActivity(c *Chat, ok func(Activity) bool) {
	u.t.Helper()
	for !ok(c.Activity()) {
		u.update(eventMsg(u.events.next(u.t)))
	}
}

// TestTerminalTasks: a task the agent launched shows in the status line
// while it runs; its notification is printed when it ends, then the
// agent, woken, answers.
func TestTerminalTasks(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	u := newTUI(t, c, &History{})
	id := c.Current().ID
	u.typeLine("please delegate the sum")
	u.until(endOf(id))
	u.untilActivity(c, func(a Activity) bool { return a.Tasks == 1 && a.ToolCalls == 1 })
	if v := ansi.Strip(u.m.View().Content); !strings.Contains(v, "1 background task running (add), 1 tool call") {
		t.Fatalf("status line while the task runs:\n%s", v)
	}
	u.typeText("half a li") // typing goes on while the task ends
	eng.release(t)
	u.until(func(e Event) bool { return e.Kind == TurnEnd && e.Wake })
	got := u.screen.text()
	notice := strings.Index(got, `✓ Agent "add" finished in `)
	answer := strings.Index(got, `Noted: ✓ Agent "add" finished in `)
	if notice < strings.Index(got, "Launched.") || answer < notice || !strings.Contains(got, "Task Progress: 1/1") {
		t.Fatalf("screen:\n%s", got)
	}
	if u.m.input.Value() != "half a li" {
		t.Fatalf("the prompt holds %q: the task's end disturbed the typing", u.m.input.Value())
	}
	settle(t, c)
	u.update(eventMsg{Kind: TasksChanged})
	if v := ansi.Strip(u.m.View().Content); strings.Contains(v, "background task") {
		t.Fatalf("the status line still shows a task:\n%s", v)
	}
}

// TestTerminalNoticeOutOfView: the notification of an agent out of view
// names it; its woken answer waits for /switch, like its other turns.
func TestTerminalNoticeOutOfView(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	u := newTUI(t, c, &History{})
	u.typeLine("/fork")
	child := c.Current().ID
	u.typeLine("please delegate the sum")
	u.until(endOf(child))
	u.typeLine("/parent")
	eng.release(t)
	u.until(func(e Event) bool { return e.Kind == TurnEnd && e.Wake })
	short := sa.ShortID(child)
	got := u.screen.text()
	if !strings.Contains(got, "agent ["+short+`]: ✓ Agent "add" finished in `) || !strings.Contains(got, short+" has finished its turn: /switch "+short) || strings.Contains(got, "Noted:") {
		t.Fatalf("screen:\n%s", got)
	}
	u.typeLine("/switch " + child)
	if got := u.screen.text(); !strings.Contains(got[strings.LastIndex(got, "> /switch"):], `Noted: ✓ Agent "add"`) {
		t.Fatalf("/switch does not show the woken answer:\n%s", got)
	}
}

// TestTerminalQuitWithTasks: with a task running, leaving asks first,
// whichever way; /exit! does not.
func TestTerminalQuitWithTasks(t *testing.T) {
	const warning = "1 background task is still running: quitting stops it (it ends as interrupted)."
	tests := []struct {
		name  string
		first func(u *tui)
		then  func(u *tui)
	}{
		{"exit twice", func(u *tui) { u.typeLine("/exit") }, func(u *tui) { u.typeLine("/quit") }},
		{"exit then Ctrl+C", func(u *tui) { u.typeLine("/exit") }, func(u *tui) { u.key(ctrlC) }},
		{"Ctrl+C twice", func(u *tui) { u.key(ctrlC) }, func(u *tui) { u.key(ctrlC) }},
		{"Ctrl+C then exit", func(u *tui) { u.key(ctrlC) }, func(u *tui) { u.typeLine("/exit") }},
		{"Ctrl+D twice", func(u *tui) { u.key(ctrlD) }, func(u *tui) { u.key(ctrlD) }},
		{"exit!", nil, func(u *tui) { u.typeLine("/exit!") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := testEngine(t, t.TempDir())
			c := openChat(t, eng, "")
			u := newTUI(t, c, &History{})
			u.typeLine("/task general wait for release")
			if tt.first != nil {
				tt.first(u)
				if u.screen.quits != 0 {
					t.Fatal("quit without asking")
				}
				if !strings.Contains(u.screen.text()+u.m.hint, warning) {
					t.Fatalf("no warning; screen:\n%s\nhint %q", u.screen.text(), u.m.hint)
				}
			}
			tt.then(u)
			if u.screen.quits != 1 {
				t.Fatal("the second request did not quit")
			}
		})
	}
	// Anything else typed in between asks again.
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	u := newTUI(t, c, &History{})
	u.typeLine("/task general wait for release")
	u.typeLine("/exit")
	u.typeLine("/tasks")
	u.typeLine("/exit")
	if u.screen.quits != 0 || strings.Count(u.screen.text(), warning) != 2 {
		t.Fatalf("quits %d; screen:\n%s", u.screen.quits, u.screen.text())
	}
	eng.release(t)
	settle(t, c)
}

// TestTerminalCtrlCStopsWaitThenAsks: Ctrl+C stops a wait for a task;
// with the task still running, the next Ctrl+C shows the warning, and
// the one after leaves.
func TestTerminalCtrlCStopsWaitThenAsks(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	u := newTUI(t, c, &History{})
	u.typeLine("/task --desc waiter general wait for release")
	list, err := eng.Store.ListTasks(context.Background(), sa.TaskFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("tasks %v: %v", list, err)
	}
	u.typeLine("/output --block " + list[0].ID)
	if v := ansi.Strip(u.m.View().Content); !strings.Contains(v, "waiting for a task (Ctrl+C stops waiting)") {
		t.Fatalf("status line during the wait:\n%s", v)
	}
	u.key(ctrlC)
	u.until(func(e Event) bool { return e.Kind == TaskOutput })
	if !strings.Contains(u.screen.text(), "Stopped waiting.") || u.screen.quits != 0 || u.m.hint != "" {
		t.Fatalf("hint %q, screen after Ctrl+C:\n%s", u.m.hint, u.screen.text())
	}
	u.key(ctrlC)
	if !strings.Contains(u.m.hint, "1 background task is still running") || u.screen.quits != 0 {
		t.Fatalf("quits %d, hint %q", u.screen.quits, u.m.hint)
	}
	u.key(ctrlC)
	if u.screen.quits != 1 {
		t.Fatal("Ctrl+C after the warning did not quit")
	}
	eng.release(t)
	settle(t, c)
}

// TestTerminalNotesFitTheWidth: a note of several lines (/help) is
// wrapped to the terminal's width at word boundaries, each line as long
// as its text: no padding that the terminal would wrap into blank rows,
// no word cut by the edge of the screen.
func TestTerminalNotesFitTheWidth(t *testing.T) {
	help := blockText(cmdHelp(context.Background(), nil, Input{}))
	for _, width := range []int{80, 100, 120} {
		_, u := startTUI(t)
		u.update(tea.WindowSizeMsg{Width: width, Height: 40})
		u.typeLine("/help")
		got := u.screen.lines[len(u.screen.lines)-1]
		got = strings.TrimSpace(strings.TrimPrefix(got, "> /help\n\n"))
		for _, line := range strings.Split(got, "\n") {
			if ansi.StringWidth(line) > width || strings.TrimSpace(line) == "" || strings.TrimRight(line, " ") != line {
				t.Fatalf("width %d: line %q is blank, padded or too wide:\n%s", width, line, got)
			}
		}
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(help), " ") {
			t.Fatalf("width %d: the words of /help changed:\n%s", width, got)
		}
		// Wrapped explanations stay in their column.
		if width == 80 && !strings.Contains(got, "\n"+strings.Repeat(" ", helpColumn+3)+"history; with a prompt") {
			t.Fatalf("width %d: /fork's explanation is not indented under its column:\n%s", width, got)
		}
	}
}
