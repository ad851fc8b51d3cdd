// Package transcripts reads the conversations that coding agents ("hosts":
// Claude Code, Codex, OpenCode) write to disk and turns them into our
// messages, so that a host's conversation can be imported, forked and
// digested like one of ours.
//
// Reading is strictly read-only: host files are opened for reading only
// (OpenCode's database in SQLite's read-only mode) and never written,
// locked or moved. A transcript that is being written while we read is
// normal: a partial last line is left for the next read.
//
// Reads are incremental. A Position says how far a previous read got; Read
// returns only what the host wrote after it. Messages that may still grow
// (a reply whose tool calls have not all been answered yet, for example)
// are returned apart as Pending and are not covered by the new Position,
// so that appending every Result's Messages to a session gives the same
// history as one read of the whole transcript.
package transcripts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
)

// Host names a coding agent whose transcripts this package reads.
type Host string

// Hosts.
const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
	OpenCode   Host = "opencode"
)

// Hosts lists every supported host.
var Hosts = []Host{ClaudeCode, Codex, OpenCode}

// ParseHost checks a host name given by a person.
func ParseHost(s string) (Host, error) {
	for _, h := range Hosts {
		if string(h) == s {
			return h, nil
		}
	}
	return "", fmt.Errorf("%w: unknown host %q (want claude-code, codex or opencode)", sa.ErrInvalid, s)
}

// Label is the host's name as people write it.
func (h Host) Label() string {
	switch h {
	case ClaudeCode:
		return "Claude Code"
	case Codex:
		return "Codex"
	case OpenCode:
		return "OpenCode"
	}
	return string(h)
}

// Errors callers can test for.
var (
	// ErrNotTranscript: the file is not a transcript of the host named.
	ErrNotTranscript = errors.New("not a transcript of this host")
	// ErrDiverged: the host's conversation no longer continues from the
	// stored position (rewound, branched or rewritten since).
	ErrDiverged = errors.New("the host conversation no longer continues from the last import")
)

// Env is how the package finds the host's files: Getenv reads the
// environment (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME).
type Env struct {
	Getenv func(string) string
}

func (e Env) get(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// home returns $HOME, or an error that says it is needed.
func (e Env) home() (string, error) {
	h := e.get("HOME")
	if h == "" {
		return "", fmt.Errorf("%w: HOME is not set, so the host's files cannot be found", sa.ErrInvalid)
	}
	return h, nil
}

// Transcript is one host conversation on disk.
type Transcript struct {
	Host Host `json:"host"`
	// Path is the transcript file (Claude Code, Codex), OpenCode's session
	// file in its JSON storage, or OpenCode's database.
	Path string `json:"path"`
	// SessionID is the host's own id of the conversation.
	SessionID string `json:"session_id"`
	// Dir is the working directory the host ran in, when known.
	Dir string `json:"dir,omitempty"`
	// Updated is when the host last wrote to it.
	Updated time.Time `json:"updated"`
}

// Position is how far a read got: the byte just after the last complete
// line taken (and how many lines precede it, for messages), and the host's
// id of the last message taken.
type Position struct {
	Offset int64  `json:"offset,omitempty"`
	Line   int64  `json:"line,omitempty"`
	LastID string `json:"last_id,omitempty"`
	// Check sums the end of the last line taken, so that a file rewritten
	// since is noticed rather than read from the middle of a line.
	Check string `json:"check,omitempty"`
}

// IsZero reports whether p is the start of a transcript.
func (p Position) IsZero() bool { return p == Position{} }

// Malformed counts the lines a read skipped because they could not be
// parsed.
type Malformed struct {
	Count int `json:"count"`
	// FirstLine is the 1-based line number of the first of them.
	FirstLine int64 `json:"first_line,omitempty"`
}

func (m *Malformed) add(line int64) {
	if m.Count == 0 {
		m.FirstLine = line
	}
	m.Count++
}

// String reports the skipped lines in one sentence ("" when none).
func (m Malformed) String() string {
	switch m.Count {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("skipped 1 malformed line (line %d)", m.FirstLine)
	}
	return fmt.Sprintf("skipped %d malformed lines (the first is line %d)", m.Count, m.FirstLine)
}

// Result is what one read found after the position it started from.
type Result struct {
	// Messages are complete: nothing the host writes later changes them.
	Messages []sa.Message
	// Pending are the newest messages, which the host may still extend
	// (a reply whose tool calls are not all answered, a compaction whose
	// summary is not written yet). Next does not cover them: the next
	// read returns them again, complete or not.
	Pending []sa.Message
	// Next is the position after Messages.
	Next Position
	// Title is the first user text read, as a default session title.
	Title string
	// Model is the last model the host named.
	Model     string
	Malformed Malformed
	// From is the position the read started from.
	From Position
}

// All returns Messages followed by Pending.
func (r Result) All() []sa.Message {
	return append(append([]sa.Message(nil), r.Messages...), r.Pending...)
}

// titleFrom returns the first line of text, cut to a title's length.
func titleFrom(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	r := []rune(text)
	if len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return text
}

// newestFirst sorts transcripts by last write, newest first.
func newestFirst(ts []Transcript) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Updated.After(ts[j-1].Updated); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// cleanDir makes a working directory comparable with the hosts' records.
func cleanDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: no working directory given", sa.ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	return filepath.Clean(abs), nil
}

// statTranscript fills a transcript's Updated from its file.
func statTranscript(t Transcript) (Transcript, error) {
	fi, err := os.Stat(t.Path)
	if err != nil {
		return t, fmt.Errorf("%s transcript: %w", t.Host.Label(), err)
	}
	if fi.IsDir() {
		return t, fmt.Errorf("%w: %s is a directory, not a %s transcript", ErrNotTranscript, t.Path, t.Host.Label())
	}
	t.Updated = fi.ModTime()
	return t, nil
}
