package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/frontends"
)

// harness runs the CLI in-process against a real store in a temp dir.
type harness struct {
	t       *testing.T
	dataDir string
	env     map[string]string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	home := t.TempDir()
	h := &harness{t: t, dataDir: filepath.Join(home, "data"), env: map[string]string{"HOME": home}}
	h.env["SUPERAGENTS_DATA_DIR"] = h.dataDir
	return h
}

type result struct {
	code           int
	stdout, stderr string
}

func (h *harness) runIn(stdin string, args ...string) result {
	h.t.Helper()
	var out, errOut bytes.Buffer
	code := frontends.Main(context.Background(), args, cli.Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errOut,
		Getenv: func(k string) string { return h.env[k] },
	})
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (h *harness) run(args ...string) result {
	h.t.Helper()
	return h.runIn("", args...)
}

// ok runs a command that must succeed and returns its trimmed stdout.
func (h *harness) ok(stdin string, args ...string) string {
	h.t.Helper()
	r := h.runIn(stdin, args...)
	if r.code != 0 {
		h.t.Fatalf("superagents %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

const seedParent = `{"role":"user","text":"What is 2+2?"}
{"role":"assistant","text":"2+2 equals 4."}
{"role":"user","text":"What is 3+3?"}
{"role":"assistant","text":"3+3 equals 6."}
`

// TestHistoryWalkthrough reproduces FORK-HIST-2's walkthrough through the
// command line: A gets Q1/A1/Q2/A2, fork B, B gets Q3/A3, fork C.
func TestHistoryWalkthrough(t *testing.T) {
	h := newHarness(t)
	a := h.ok(seedParent, "import", "-")
	b := h.ok("", "fork", a)
	h.ok("", "append", b, "--role", "user", "--text", "What is 5+5?")
	h.ok("", "append", b, "--role", "assistant", "--text", "5+5 equals 10.")
	c := h.ok("", "fork", b[:6]+"...")

	want := strings.Join([]string{
		"User: What is 2+2?", "Agent: 2+2 equals 4.",
		"User: What is 3+3?", "Agent: 3+3 equals 6.",
		"User: What is 5+5?", "Agent: 5+5 equals 10.",
	}, "\n\n")
	// Each fork records where it came from: a note for people (kind
	// fork), never sent to a model; the conversation is FORK-HIST-4's.
	got := h.ok("", "history", c)
	for _, parent := range []string{a, b} {
		record := "System: Forked from " + parent[:6] + "..."
		if !strings.Contains(got, record) {
			t.Fatalf("history C has no %q:\n%s", record, got)
		}
		got = strings.Replace(got, record+"\n\n", "", 1)
		got = strings.TrimSuffix(got, "\n\n"+record)
	}
	if got != want {
		t.Fatalf("history C without its fork records =\n%s\nwant\n%s", got, want)
	}

	// A message added to A after the forks is in neither B nor C.
	h.ok("", "append", a, "--text", "A after the fork")
	for _, id := range []string{b, c} {
		if got := h.ok("", "history", id); strings.Contains(got, "A after the fork") {
			t.Fatalf("history of %s shows the parent's later message:\n%s", id, got)
		}
	}
	// B's later messages are not in C's history; C's are not in B's.
	h.ok("", "append", b, "--text", "B after C")
	h.ok("", "append", c, "--text", "What was my first question?")
	if got := h.ok("", "history", c); strings.Contains(got, "B after C") || !strings.HasPrefix(got, "User: What is 2+2?") {
		t.Fatalf("history C =\n%s", got)
	}
	if got := h.ok("", "history", b); strings.Contains(got, "first question") {
		t.Fatalf("history B shows C's message:\n%s", got)
	}
	if got := h.ok("", "history", a); strings.Contains(got, "5+5") {
		t.Fatalf("history A shows B's messages:\n%s", got)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	h := newHarness(t)
	a := h.ok(`{"role":"user","text":"Q1"}
{"role":"assistant","parts":[{"type":"reasoning","text":"hmm"},{"type":"text","text":"let me look"},{"type":"tool_call","call_id":"c1","name":"read","input":{"path":"a.go"}}],"usage":{"input_tokens":12,"output_tokens":3}}
{"role":"tool","parts":[{"type":"tool_result","call_id":"c1","name":"read","output":"package a\n","is_error":false}]}
{"role":"assistant","text":"It is package a.","summary":true}
`, "import", "-")
	b := h.ok("", "fork", a)
	h.ok("", "append", b, "--text", "more")

	exported := h.ok("", "export", b)
	if got := h.ok("", "history", b, "--json"); got != exported {
		t.Fatalf("history --json and export differ:\n%s\n---\n%s", got, exported)
	}
	copyID := h.ok(exported+"\n", "import", "-")
	reexported := h.ok("", "export", copyID)
	if normalize(t, reexported) != normalize(t, exported) {
		t.Fatalf("export → import → export changed the messages:\n%s\n---\n%s", exported, reexported)
	}
}

// A history longer than a chunk is written out while it is read: in
// order, across the fork, whole.
func TestExportOfALongHistory(t *testing.T) {
	h := newHarness(t)
	var in strings.Builder
	for i := range 700 {
		fmt.Fprintf(&in, "{\"role\":\"user\",\"text\":\"question %d\"}\n{\"role\":\"assistant\",\"text\":\"answer %d\"}\n", i, i)
	}
	a := h.ok(in.String(), "import", "-")
	b := h.ok("", "fork", a)
	h.ok("", "append", b, "--text", "more")
	exported := h.ok("", "export", b)
	// The parent's 1,400 messages, the fork's marker, its own message.
	lines := strings.Split(strings.TrimSuffix(exported, "\n"), "\n")
	if len(lines) != 1402 || !strings.Contains(lines[0], `"question 0"`) || !strings.Contains(lines[1399], `"answer 699"`) ||
		!strings.Contains(lines[1400], `"kind":"fork"`) || !strings.Contains(lines[1401], `"more"`) {
		t.Fatalf("export: %d lines, first %q, last %q", len(lines), lines[0], lines[max(len(lines)-3, 0):])
	}
	copyID := h.ok(exported+"\n", "import", "-")
	if normalize(t, h.ok("", "export", copyID)) != normalize(t, exported) {
		t.Fatal("export → import → export changed the messages")
	}
}

// normalize drops what a copy legitimately changes: ids and session ids.
func normalize(t *testing.T, jsonl string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(jsonl, "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad JSONL line %q: %v", line, err)
		}
		delete(m, "id")
		delete(m, "session_id")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

func TestErrors(t *testing.T) {
	h := newHarness(t)
	a := h.ok(seedParent, "import", "-")
	before := h.ok("", "export", a)
	sessionsBefore := h.ok("", "sessions", "--json")

	badDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(badDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown id", "", []string{"history", "zzzzzz"}, 1, "no session with id zzzzzz"},
		{"id too short", "", []string{"history", "abc"}, 2, "too short"},
		{"id with bad characters", "", []string{"fork", "ab/cd"}, 2, "only lowercase letters and digits"},
		{"bad JSONL line", "{\"role\":\"user\",\"text\":\"ok\"}\n\n{\"role\":\"user\",\"text\":}\n", []string{"import", "-"}, 2, "line 3"},
		{"JSONL typo in a field", "{\"role\":\"user\",\"txt\":\"x\"}\n", []string{"import"}, 2, `unknown field "txt"`},
		{"JSONL unknown role", "{\"role\":\"robot\",\"text\":\"x\"}\n", []string{"import"}, 2, `line 1: unknown role "robot"`},
		{"JSONL text and parts", "{\"role\":\"user\",\"text\":\"x\",\"parts\":[]}\n", []string{"import"}, 2, "not both"},
		{"JSONL empty input", "\n\n", []string{"import"}, 2, "holds no messages"},
		{"import missing file", "", []string{"import", "/no/such/file.jsonl"}, 2, "no such file"},
		{"empty text", "", []string{"append", a, "--text", "   "}, 2, "--text is empty"},
		{"unknown role", "", []string{"append", a, "--role", "robot", "--text", "x"}, 2, `unknown --role "robot"`},
		{"missing argument", "", []string{"fork"}, 2, "takes one session id"},
		{"too many arguments", "", []string{"history", a, a}, 2, "takes one session id"},
		{"unknown command", "", []string{"frok", a}, 2, `unknown command "frok"`},
		{"unknown flag", "", []string{"sessions", "--colour"}, 2, "unknown flag: --colour"},
		{"negative limit", "", []string{"sessions", "--limit", "-1"}, 2, "--limit"},
		{"unreadable data dir", "", []string{"sessions", "--data-dir", badDir}, 1, "data directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.runIn(tt.stdin, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", r.code, tt.wantCode, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("stderr %q does not say %q", r.stderr, tt.wantErr)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "superagents: ") {
				t.Fatalf("stderr must be one line starting with 'superagents: ', got %q", r.stderr)
			}
			if r.stdout != "" {
				t.Fatalf("a failed command printed %q on stdout", r.stdout)
			}
		})
	}
	// Nothing above wrote anything.
	if got := h.ok("", "export", a); got != before {
		t.Fatal("a failed command changed the session")
	}
	if got := h.ok("", "sessions", "--json"); got != sessionsBefore {
		t.Fatalf("a failed command created or removed sessions:\n%s\n---\n%s", sessionsBefore, got)
	}
}

func TestDeleteKeepsDescendantHistories(t *testing.T) {
	h := newHarness(t)
	a := h.ok(seedParent, "import", "-")
	b := h.ok("", "fork", a)
	h.ok("", "append", b, "--text", "B1")
	c := h.ok("", "fork", b)
	histC := h.ok("", "history", c)

	if got := h.ok("", "delete", b[:8]); got != "deleted "+b[:6]+"..." {
		t.Fatalf("delete printed %q", got)
	}
	if got := h.ok("", "history", c); got != histC {
		t.Fatalf("deleting the parent changed the child's history:\n%s\n---\n%s", histC, got)
	}
	if r := h.run("fork", b); r.code != 1 || !strings.Contains(r.stderr, "no session with id "+b) {
		t.Fatalf("forking a deleted session: exit %d, %q", r.code, r.stderr)
	}
	if list := h.ok("", "sessions"); strings.Contains(list, b[:6]) && !strings.Contains(list, "PARENT") {
		t.Fatalf("deleted session still listed:\n%s", list)
	}
	var listed []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "sessions", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	for _, s := range listed {
		if s.ID == b {
			t.Fatal("deleted session is listed")
		}
	}
	if len(listed) != 2 {
		t.Fatalf("%d sessions listed after deleting one of three", len(listed))
	}
}

func TestDataDirPrecedence(t *testing.T) {
	h := newHarness(t)
	xdg := t.TempDir()
	delete(h.env, "SUPERAGENTS_DATA_DIR")
	h.env["XDG_DATA_HOME"] = xdg
	h.ok(seedParent, "import")
	if _, err := os.Stat(filepath.Join(xdg, "superagents", "superagents.db")); err != nil {
		t.Fatalf("with XDG_DATA_HOME set, the database belongs in $XDG_DATA_HOME/superagents: %v", err)
	}
	envDir := t.TempDir()
	h.env["SUPERAGENTS_DATA_DIR"] = envDir
	h.ok(seedParent, "import")
	flagDir := t.TempDir()
	h.ok(seedParent, "import", "--data-dir", flagDir)
	for _, dir := range []string{envDir, flagDir} {
		if _, err := os.Stat(filepath.Join(dir, "superagents.db")); err != nil {
			t.Fatalf("no database in %s: %v", dir, err)
		}
	}
	delete(h.env, "SUPERAGENTS_DATA_DIR")
	delete(h.env, "XDG_DATA_HOME")
	h.ok(seedParent, "import")
	if _, err := os.Stat(filepath.Join(h.env["HOME"], ".local", "share", "superagents", "superagents.db")); err != nil {
		t.Fatalf("default data dir: %v", err)
	}
}

func TestVersion(t *testing.T) {
	h := newHarness(t)
	if got := h.ok("", "version"); !strings.HasPrefix(got, "superagents ") {
		t.Fatalf("version = %q", got)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(h.ok("", "version", "--json")), &v); err != nil || v["version"] == "" || v["go"] == "" {
		t.Fatalf("version --json = %v, %v", v, err)
	}
}
