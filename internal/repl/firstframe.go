package repl

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Bubble Tea prints a line above the frame by moving over the frame it
// drew last. Until it has drawn one, it takes the frame to fill the whole
// screen, so lines printed then land at the top of the screen and the
// next ones overwrite them. The chat therefore prints nothing until the
// first frame is on the screen; firstFrame tells when that is.

// firstFrameTimeout bounds the wait for the first frame, should the
// renderer ever draw it without the mark firstFrame looks for: the chat
// then prints late rather than never.
const firstFrameTimeout = 2 * time.Second

// firstFrameMark is written by the renderer with its first frame only:
// it turns on bracketed paste, which the chat never turns off. Queries
// sent before the first frame do not contain it.
var firstFrameMark = []byte(ansi.SetModeBracketedPaste)

// firstFrame passes the program's output through and closes drawn once
// the first frame is written. The renderer holds its lock while it
// writes, so a line printed after drawn closes is placed by that frame.
type firstFrame struct {
	out   io.Writer
	once  sync.Once
	drawn chan struct{}
}

func newFirstFrame(out io.Writer) *firstFrame {
	return &firstFrame{out: out, drawn: make(chan struct{})}
}

func (f *firstFrame) Write(p []byte) (int, error) {
	if bytes.Contains(p, firstFrameMark) {
		f.once.Do(func() { close(f.drawn) })
	}
	return f.out.Write(p)
}

// output is what the program writes to: the watcher, still seen as the
// terminal it wraps (Bubble Tea reads the terminal's size and modes from
// the file).
func (f *firstFrame) output() io.Writer {
	if file, ok := f.out.(*os.File); ok {
		return &terminalFile{File: file, watch: f}
	}
	return f
}

// terminalFile is a terminal whose writes go through the watcher.
type terminalFile struct {
	*os.File
	watch *firstFrame
}

func (t *terminalFile) Write(p []byte) (int, error) { return t.watch.Write(p) }
