package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxHistory is how many typed lines are kept.
const maxHistory = 1000

// History is the list of lines typed, which the arrow keys go through.
// With a file, the lines are kept from one chat to the next; the file is
// private to the user (mode 0600), since people paste anything.
type History struct {
	path    string
	entries []string
	// pos is the entry shown, len(entries) when none is (the draft).
	pos   int
	draft string
}

// LoadHistory reads the history file; path "" keeps the history in memory
// only. A missing file is an empty history.
func LoadHistory(path string) (*History, error) {
	h := &History{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("read the chat history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			h.entries = append(h.entries, line)
		}
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("read the chat history %s: %w", path, err)
	}
	if len(h.entries) > maxHistory {
		h.entries = slices.Clone(h.entries[len(h.entries)-maxHistory:])
		// Keep the file bounded: rewrite it with what is kept.
		if err := os.WriteFile(path, []byte(strings.Join(h.entries, "\n")+"\n"), 0o600); err != nil {
			return h, fmt.Errorf("trim the chat history: %w", err)
		}
	}
	h.pos = len(h.entries)
	return h, nil
}

// Add records a line typed (not twice in a row) and goes back to the
// draft.
func (h *History) Add(line string) error {
	line = strings.TrimSpace(strings.ReplaceAll(line, "\n", " "))
	h.pos, h.draft = len(h.entries), ""
	if line == "" || len(h.entries) > 0 && h.entries[len(h.entries)-1] == line {
		return nil
	}
	h.entries = append(h.entries, line)
	if len(h.entries) > maxHistory {
		h.entries = h.entries[1:]
	}
	h.pos = len(h.entries)
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("save the chat history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("save the chat history: %w", err)
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// Prev returns the line before the one shown. current is what the prompt
// holds, kept as the draft when leaving it. ok is false at the oldest.
func (h *History) Prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// Next returns the line after the one shown, or the draft after the
// newest. ok is false when the draft is already shown.
func (h *History) Next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}
