package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/transcripts"
)

// The host transcripts are the fixtures of the transcripts package, written
// from each host's public format (see transcripts/transcripts_test.go).
const fixtures = "../../transcripts/testdata/"

func installFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// withoutStamps drops what differs between two stores holding the same
// history: session ids and creation times.
func withoutStamps(export string) string {
	return ids.ReplaceAllString(stamps.ReplaceAllString(export, ""), "")
}

// Stamps and ids differ between two stores (a fork made in one takes an
// id for its record) without the conversations differing.
var (
	stamps = regexp.MustCompile(`"(session_id|created_at)":"[^"]*",?`)
	ids    = regexp.MustCompile(`"id":\d+,?`)
)

func TestImportFromClaudeCode(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	path := filepath.Join(h.env["HOME"], ".claude", "projects", transcripts.ClaudeProjectDir(ws), "5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f.jsonl")
	// Without the partial last line, so that lines can be appended.
	data, _ := os.ReadFile(fixtures + "claudecode.jsonl")
	installFile(t, fixtures+"claudecode.jsonl", path)
	os.WriteFile(path, data[:strings.LastIndexByte(string(data), '\n')+1], 0o644)

	// A newer file without a conversation (a session left at once) is
	// passed over by --latest.
	empty := filepath.Join(filepath.Dir(path), "99999999-0000-4000-8000-000000000000.jsonl")
	os.WriteFile(empty, []byte(`{"type":"summary","summary":"x","leafUuid":"y"}`+"\n"), 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(empty, later, later)
	r := h.run("import", "--from", "claude-code", "--latest", "--workspace", ws)
	if r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	id := strings.TrimSpace(r.stdout)
	if !strings.Contains(r.stderr, "Imported 10 messages of Claude Code session 5f0c6a1e") || !strings.Contains(r.stderr, "skipped 1 malformed line (line 14)") {
		t.Errorf("import stderr: %q", r.stderr)
	}
	r = h.run("import", "--from", "claude-code", "--latest", "--workspace", ws)
	if strings.TrimSpace(r.stdout) != id || !strings.Contains(r.stderr, "Nothing new") {
		t.Fatalf("second import: %q, %q; want the same session and nothing new", r.stdout, r.stderr)
	}
	child := h.ok("", "fork", id)
	childBefore := h.ok("", "export", child)

	appendLines(t, path,
		`{"type":"user","uuid":"n-1","parentUuid":"00000000-0000-4000-8000-000000000031","sessionId":"5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f","message":{"role":"user","content":"Read version.go first, then edit."}}`,
		`{"type":"assistant","uuid":"n-2","parentUuid":"n-1","sessionId":"5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f","message":{"id":"msg_n","role":"assistant","content":[{"type":"text","text":"Done: version.go now names BLUE-HERON-42."}]}}`,
		`{"type":"system","subtype":"stop_hook_summary","uuid":"n-3","parentUuid":"n-2","sessionId":"5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f"}`)
	r = h.run("import", "--from", "claude-code", "5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f")
	if strings.TrimSpace(r.stdout) != id || !strings.Contains(r.stderr, "Appended 2 new messages") {
		t.Fatalf("import after growth: %q, %q", r.stdout, r.stderr)
	}
	if got := h.ok("", "export", child); got != childBefore {
		t.Errorf("the fork's history changed after the import:\n%s\nwant\n%s", got, childBefore)
	}
	// The grown session equals a fresh import of the whole transcript.
	fresh := newHarness(t)
	freshID := fresh.ok("", "import", "--from", "claude-code", path)
	if got, want := withoutStamps(h.ok("", "export", id)), withoutStamps(fresh.ok("", "export", freshID)); got != want {
		t.Errorf("incremental import differs from a fresh one:\n%s\nwant\n%s", got, want)
	}

	list := h.ok("", "sessions")
	if !strings.Contains(list, "FROM") || !strings.Contains(list, "claude-code 5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f") {
		t.Errorf("sessions does not say where the session came from:\n%s", list)
	}
	var sessions []struct {
		ID     string `json:"id"`
		Import *struct {
			Host          string `json:"host"`
			HostSessionID string `json:"host_session_id"`
		} `json:"import"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "sessions", "--json")), &sessions); err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		want := s.ID == id
		if (s.Import != nil) != want || want && (s.Import.Host != "claude-code" || s.Import.HostSessionID != "5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f") {
			t.Errorf("sessions --json: %s has origin %+v", s.ID, s.Import)
		}
	}
	ctx := h.ok("", "context", id)
	if !strings.Contains(ctx, "BLUE-HERON-42") || strings.Contains(ctx, "SECRET-REASONING") {
		t.Errorf("context of the imported session:\n%s", ctx)
	}
}

func TestImportFromCodexAndOpenCode(t *testing.T) {
	h := newHarness(t)
	codexHome := filepath.Join(h.env["HOME"], "codex-home")
	h.env["CODEX_HOME"] = codexHome
	installFile(t, fixtures+"codex.jsonl", filepath.Join(codexHome, "sessions", "2026", "11", "20", "rollout-2026-11-20T11-00-00-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"))
	var out struct {
		ID     string `json:"id"`
		Title  string `json:"title"`
		Origin struct {
			Host          string `json:"host"`
			HostSessionID string `json:"host_session_id"`
		} `json:"import"`
		Imported int  `json:"imported"`
		Pending  int  `json:"pending"`
		Created  bool `json:"created"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "import", "--from", "codex", "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Created || out.Imported != 12 || out.Origin.Host != "codex" || out.Title != "Why does `make build` fail?" {
		t.Errorf("import --from codex --json = %+v", out)
	}

	h.env["XDG_DATA_HOME"] = filepath.Join(h.env["HOME"], "xdg")
	storage := filepath.Join(h.env["XDG_DATA_HOME"], "opencode", "storage")
	err := filepath.WalkDir(fixtures+"opencode/storage", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixtures+"opencode/storage", p)
		installFile(t, p, filepath.Join(storage, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := h.run("import", "--from", "opencode", "ses_5a1b2c3d4ffeHeronSession01")
	if r.code != 0 || !strings.Contains(r.stderr, "The newest 1 messages are still being written") {
		t.Fatalf("import --from opencode: exit %d, %q", r.code, r.stderr)
	}
}

func TestImportFromErrors(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	notJSONL := filepath.Join(ws, "notes.txt")
	os.WriteFile(notJSONL, []byte("hello\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "--from", "cursor", "x"}, 2, "--from cursor: unknown host"},
		{[]string{"import", "--latest"}, 2, "--latest needs --from"},
		{[]string{"import", "--from", "codex"}, 2, "takes a transcript path, a Codex session id, or --latest"},
		{[]string{"import", "--from", "codex", "--latest", "abc"}, 2, "either --latest or a transcript"},
		{[]string{"import", "--from", "codex", "-"}, 2, "not standard input"},
		{[]string{"import", "--from", "claude-code", "--latest", "--workspace", ws}, 2, "no Claude Code conversation found for " + ws},
		{[]string{"import", "--from", "codex", fixtures + "claudecode.jsonl"}, 2, "not a Codex rollout"},
		{[]string{"import", "--from", "claude-code", fixtures + "codex.jsonl"}, 2, "none of Claude Code's records"},
		{[]string{"import", "--from", "claude-code", notJSONL}, 2, "holds no JSON lines"},
		{[]string{"import", "--from", "claude-code", "./missing.jsonl"}, 2, "no such file"},
		{[]string{"import", "--from", "claude-code", "no-such-session"}, 1, "no Claude Code session no-such-session"},
		{[]string{"import", "--from", "opencode", fixtures + "codex.jsonl"}, 2, "not an OpenCode session file"},
	} {
		r := h.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("superagents %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
	if list := h.ok("", "sessions", "--json"); list != "[]" {
		t.Errorf("failed imports left sessions: %s", list)
	}
}
