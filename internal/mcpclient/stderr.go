package mcpclient

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// stderrKeep is how much of a stdio server's stderr is kept: enough for
// the last lines of an error, never the whole stream.
const stderrKeep = 2048

// tailWriter keeps the last bytes written to it. The command's copying
// goroutine writes while Status reads.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*stderrKeep {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-stderrKeep:]...)
	}
	return len(p), nil
}

// lastLines returns up to n of the last non-empty lines written, valid
// UTF-8.
func (w *tailWriter) lastLines(n int) string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	b := w.buf
	if len(b) > stderrKeep {
		b = b[len(b)-stderrKeep:]
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	text := strings.ToValidUTF8(string(b), "\uFFFD")
	w.mu.Unlock()
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
