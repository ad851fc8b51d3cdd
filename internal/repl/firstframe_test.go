package repl

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// lockedBuffer is a terminal's output that a test reads while the
// program writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type promptOnly struct{}

func (promptOnly) Init() tea.Cmd                       { return nil }
func (promptOnly) Update(tea.Msg) (tea.Model, tea.Cmd) { return promptOnly{}, nil }
func (promptOnly) View() tea.View                      { return tea.NewView("> the prompt") }

// TestLinesWaitForTheFirstFrame runs the real renderer: a line handed to
// the outbox before the program starts is written after the first frame,
// which firstFrame recognises (were its mark gone from the renderer,
// the outbox would fall back to its timeout, set here past the test's).
func TestLinesWaitForTheFirstFrame(t *testing.T) {
	out := &lockedBuffer{}
	frame := newFirstFrame(out)
	box := newOutbox(frame.drawn, time.Hour)
	box.print("the opening")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := tea.NewProgram(promptOnly{}, tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(frame.output()),
		tea.WithWindowSize(80, 24), tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	box.start(p)
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()

	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "the opening") {
		if time.Now().After(deadline) {
			t.Fatalf("the line was never printed; the output: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Quit()
	<-done
	box.stop()
	got := out.String()
	mark, line, prompt := strings.Index(got, string(firstFrameMark)), strings.Index(got, "the opening"), strings.Index(got, "the prompt")
	if mark < 0 || prompt < 0 || line < mark || line < prompt {
		t.Fatalf("the line came before the first frame (mark at %d, prompt at %d, line at %d): %q", mark, prompt, line, got)
	}
}
