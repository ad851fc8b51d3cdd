package transcripts_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/transcripts"
)

// readFixture reads a host's transcript from testdata, after edit (when
// given) has changed a copy of it. It reads it whole, then again as the host
// writes it, one line at a time, and fails unless both give the same
// messages.
func readFixture(t *testing.T, host transcripts.Host, fixture string, edit func(string) string) transcripts.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if edit != nil {
		if text = edit(text); text == string(data) {
			t.Fatal("the edit changed nothing")
		}
	}
	path := filepath.Join(t.TempDir(), filepath.Base(fixture))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := transcripts.Read(context.Background(), transcripts.Transcript{Host: host, Path: path}, transcripts.Position{})
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, res.All())
	var got []sa.Message
	var pos transcripts.Position
	grown := filepath.Join(t.TempDir(), filepath.Base(fixture))
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' {
			continue
		}
		if err := os.WriteFile(grown, []byte(text[:min(i+1, len(text))]), 0o644); err != nil {
			t.Fatal(err)
		}
		step, err := transcripts.Read(context.Background(), transcripts.Transcript{Host: host, Path: grown}, pos)
		if err != nil {
			t.Fatalf("read up to byte %d: %v", i, err)
		}
		got, pos = append(got, step.Messages...), step.Next
	}
	if diff := cmp.Diff(res.Messages, got); diff != "" {
		t.Errorf("reading line by line differs from one read (-whole +by line):\n%s", diff)
	}
	return res
}

// inOrder fails unless each of wants is in text, each after the one
// before.
func inOrder(t *testing.T, text string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Errorf("%q is not where expected (after %q) in:\n%s", w, text[:at], text)
			return
		}
		at += i + len(w)
	}
}

func toolCalls(msgs []sa.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == sa.PartToolCall {
				n++
			}
		}
	}
	return n
}

func TestClaudeCodeShapes(t *testing.T) {
	for _, tc := range []struct {
		name, fixture string
		edit          func(string) string
		golden        string
		calls         int      // tool calls imported, before and after the compaction
		digest        []string // in this order in the digest
		notInDigest   []string
	}{{
		name: "preserved tail after the summary", fixture: "claudecode-preserved.jsonl", golden: "claudecode-preserved",
		calls: 5,
		digest: []string{"[Summary of the earlier conversation]", "User: Fix it and build again.", "[Tool: Edit]", "has been updated successfully",
			"Agent: Linked libcrc", "User: Now tag the release", "[Tool: Bash]", "Agent: Tagged v1.4.0"},
		notInDigest: []string{"Build the release binary", "SECRET-REASONING", "Compacted", "ToolSearch"},
	}, {
		// The next prompt written as a child of the preserved tail rather
		// than of the summary: Claude Code reads both shapes the same.
		name: "next prompt follows the preserved tail", fixture: "claudecode-preserved.jsonl",
		edit: func(s string) string {
			return strings.Replace(s, `{"parentUuid":"7b3e0017-5c1a-4d2e-9f10-000000000017","isSidechain":false,"promptId"`, `{"parentUuid":"7b3e0011-5c1a-4d2e-9f10-000000000011","isSidechain":false,"promptId"`, 1)
		},
		calls:  5,
		digest: []string{"[Summary of the earlier conversation]", "User: Fix it and build again.", "Agent: Linked libcrc", "User: Now tag the release", "Agent: Tagged v1.4.0"},
	}, {
		name: "host tool loading says what it loaded", fixture: "claudecode-preserved.jsonl",
		// Without the compaction, the ToolSearch call is in the digest.
		edit: func(s string) string {
			return strings.Replace(s, `"isCompactSummary":true`, `"isCompactSummaryX":true`, 1)
		},
		calls:       5,
		digest:      []string{`[Tool: ToolSearch] {"query":"select:mcp__superagents__superagents_task","max_results":1}`, "[Result]\nloaded tools: mcp__superagents__superagents_task"},
		notInDigest: []string{"(empty)"},
	}, {
		name: "logical parent not in the file", fixture: "claudecode-dangling.jsonl", golden: "claudecode-dangling",
		calls:  4,
		digest: []string{"[Summary of the earlier conversation]", "[Tool: Bash]", "Agent: The whole suite passes."},
	}, {
		// Parallel tool calls are one record each, and each result is a
		// child of its own call's record: the next record follows one.
		name: "results of parallel calls on two branches", fixture: "claudecode-parallel.jsonl", golden: "claudecode-parallel",
		calls: 4,
		digest: []string{"User: Compare crc.go and crc_test.go.", "Agent: I'll read both files.", "[Tool: Read]", "BLUE-HERON-42",
			"[Tool: Read]", "func TestCRC", "Agent: crc.go builds the table"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res := readFixture(t, transcripts.ClaudeCode, tc.fixture, tc.edit)
			if got := toolCalls(res.All()); got != tc.calls {
				t.Errorf("%d tool calls imported, want %d", got, tc.calls)
			}
			d := digest(t, res.Messages)
			inOrder(t, d, tc.digest...)
			for _, no := range tc.notInDigest {
				if strings.Contains(d, no) {
					t.Errorf("the digest holds %q:\n%s", no, d)
				}
			}
			if tc.golden != "" {
				golden.Check(t, tc.golden+".history.json", renderResult(t, res))
				golden.Check(t, tc.golden+".digest.txt", []byte(d))
			}
		})
	}
}

// TestCodexCurrentShapes reads a rollout in the shapes of current Codex
// versions: what Codex injects for its model comes as pieces of one user
// message (and inside a compaction's replacement history), shell and
// apply_patch answer with JSON holding the output and the exit code, and an
// interrupted turn leaves a note in a user message.
func TestCodexCurrentShapes(t *testing.T) {
	res := readFixture(t, transcripts.Codex, "codex-current.jsonl", nil)
	d := digest(t, res.Messages)
	golden.Check(t, "codex-current.history.json", renderResult(t, res))
	golden.Check(t, "codex-current.digest.txt", []byte(d))
	if want := "Why does `make build` fail on the release branch?"; res.Title != want {
		t.Errorf("title %q, want %q", res.Title, want)
	}
	history := string(renderResult(t, res))
	for _, injected := range []string{"AGENTS.md", "<INSTRUCTIONS>", "environment_context", "recommended_plugins", "turn_aborted", "permissions instructions", "exit_code"} {
		if strings.Contains(history, injected) {
			t.Errorf("the import holds Codex's own %q", injected)
		}
	}
	var results []sa.Part
	var summary string
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if p.Type == sa.PartToolResult {
				results = append(results, p)
			}
		}
		if m.Summary {
			summary = m.Text()
		}
	}
	want := []struct {
		output string
		failed bool
	}{
		{"go build -tags heron ./...\nversion.go:3: missing codename BLUE-HERON-42\nmake: *** [build] Error 1\n", true},
		{"Success. Updated the following files:\nM version.go\n", false},
		{"go build -tags heron ./...\n", false},
	}
	if len(results) != len(want) {
		t.Fatalf("%d tool results, want %d", len(results), len(want))
	}
	for i, w := range want {
		if results[i].Output != w.output || results[i].IsError != w.failed {
			t.Errorf("result %d: %q (error %v), want %q (error %v)", i+1, results[i].Output, results[i].IsError, w.output, w.failed)
		}
	}
	if want := "Why does `make build` fail on the release branch?\n\nAdd the codename."; summary != want {
		t.Errorf("compaction summary %q, want %q", summary, want)
	}
	inOrder(t, d, "[Summary of the earlier conversation]", "User: Run the build again.", "[Tool: shell]", "Agent: The build passes now.")
}

// TestCodexThreads: a sub-agent's thread is written beside its parent's,
// with the same working directory, and may be the newest; an archived
// session is moved to archived_sessions.
func TestCodexThreads(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	sessions := filepath.Join(home, ".codex", "sessions", "2026", "06", "21")
	parent := filepath.Join(sessions, "rollout-2026-06-21T14-06-38-019ee8c9-c5b3-78f0-bdc2-ab4c8e024293.jsonl")
	child := filepath.Join(sessions, "rollout-2026-06-21T15-50-16-019ee61d-8aa4-7883-bdc0-65be85460940.jsonl")
	copyFile(t, "testdata/codex-current.jsonl", parent)
	copyFile(t, "testdata/codex-subagent.jsonl", child)
	data, err := os.ReadFile("testdata/codex-current.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const archivedID = "019c6924-53b5-7a42-9d67-18f8288bbc08"
	archived := filepath.Join(home, ".codex", "archived_sessions", "rollout-2026-02-17T09-08-34-"+archivedID+".jsonl")
	copyFile(t, "testdata/codex-current.jsonl", archived)
	if err := os.WriteFile(archived, []byte(strings.Replace(string(data), "019ee8c9-c5b3-78f0-bdc2-ab4c8e024293", archivedID, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The sub-agent wrote last.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(parent, old, old); err != nil {
		t.Fatal(err)
	}
	found, err := transcripts.Find(ctx, transcripts.Codex, fixtureDir, env(home))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Path != parent {
		t.Errorf("Find: %+v, want only the user's conversation %s", found, parent)
	}
	for _, tc := range []struct{ id, path string }{
		{"019ee61d-8aa4-7883-bdc0-65be85460940", child},
		{archivedID, archived},
	} {
		got, err := transcripts.Lookup(ctx, transcripts.Codex, tc.id, env(home))
		if err != nil {
			t.Errorf("Lookup %s: %v", tc.id, err)
			continue
		}
		if got.Path != tc.path {
			t.Errorf("Lookup %s: %s, want %s", tc.id, got.Path, tc.path)
		}
	}
}

// openCodeFromSQL builds OpenCode's database under home from a dump, and
// runs more statements on it (edits of the fixture).
func openCodeFromSQL(t *testing.T, home, dump string, more ...string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", dump))
	if err != nil {
		t.Fatal(err)
	}
	dir := opencodeData(home)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, transcripts.OpenCodeDB))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range append([]string{string(data)}, more...) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenCodeRealSession(t *testing.T) {
	const (
		dir     = "/home/user/webhook-service"
		session = "ses_f98790161ffeMW7hbl2WkjJUPP"
		read    = "prt_067870886001q6guHlwqceV3Kj"
	)
	for _, tc := range []struct {
		name, golden string
		more         []string
		output       string // of the read tool
		compacted    bool
	}{{
		name: "as written", golden: "opencode-1.18.27",
		output: "<path>/home/user/webhook-service/NOTES.md</path>\n<type>file</type>\n<content>\n1: # Retry policy notes\n2: We need to decide how many times to retry a failed webhook delivery before giving up.\n\n(End of file - total 2 lines)\n</content>",
	}, {
		// OpenCode prunes old tool outputs by setting state.time.compacted;
		// its model is sent a note instead.
		name:   "tool output pruned",
		more:   []string{`UPDATE part SET data = json_set(data, '$.state.time.compacted', 1788443400000) WHERE id = '` + read + `'`},
		output: "[Old tool result content cleared]", compacted: true,
	}, {
		// A sub-agent's session (a child of the conversation) is not one of
		// the directory's conversations.
		name: "child session left out", golden: "opencode-1.18.27",
		more:   []string{`INSERT INTO session (id, project_id, parent_id, directory, title, version, time_created, time_updated) VALUES ('ses_child', 'a4b102e94d94d71b6984bce494bfe442f576efc8', '` + session + `', '/home/user/webhook-service', 'Explore NOTES.md (@explore subagent)', '1.18.27', 1788443299000, 1788443399000)`},
		output: "<path>/home/user/webhook-service/NOTES.md</path>\n<type>file</type>\n<content>\n1: # Retry policy notes\n2: We need to decide how many times to retry a failed webhook delivery before giving up.\n\n(End of file - total 2 lines)\n</content>",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			openCodeFromSQL(t, home, "opencode-1.18.27.sql", tc.more...)
			found, err := transcripts.Find(ctx, transcripts.OpenCode, dir, env(home))
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 || found[0].SessionID != session {
				t.Fatalf("Find: %+v, want session %s only", found, session)
			}
			res, err := transcripts.Read(ctx, found[0], transcripts.Position{})
			if err != nil {
				t.Fatal(err)
			}
			checkValid(t, res.All())
			if len(res.Pending) != 0 {
				t.Errorf("%d pending messages in a finished session", len(res.Pending))
			}
			var got []sa.Part
			for _, m := range res.Messages {
				for _, p := range m.Parts {
					if p.Type == sa.PartToolResult {
						got = append(got, p)
					}
				}
			}
			if len(got) != 1 || got[0].Name != "read" || got[0].Output != tc.output || got[0].Compacted != tc.compacted {
				t.Errorf("tool results %+v, want one of read: %q (compacted %v)", got, tc.output, tc.compacted)
			}
			if tc.golden != "" {
				golden.Check(t, tc.golden+".history.json", renderResult(t, res))
				golden.Check(t, tc.golden+".digest.txt", []byte(digest(t, res.Messages)))
			}
		})
	}
}

// TestClaudeCodePendingParallelCall: the call a fork is made from can be
// one of parallel calls whose sibling was answered first; the newest
// record then follows the sibling, not the call.
func TestClaudeCodePendingParallelCall(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	copyFile(t, "testdata/claudecode-parallel.jsonl", filepath.Join(home, ".claude", "projects", transcripts.ClaudeProjectDir(fixtureDir), "5a7fa5c0-7dd8-42a3-adc3-eb9d964d1cba.jsonl"))
	tr, res, err := transcripts.FindPendingCall(ctx, transcripts.ClaudeCode, fixtureDir, env(home), "superagents_task", []byte(`{"fork":true,"prompt":"Review crc.go"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tr.SessionID != "5a7fa5c0-7dd8-42a3-adc3-eb9d964d1cba" {
		t.Errorf("found %+v", tr)
	}
	// The reply is not over until the pending call is answered.
	if len(res.Pending) != 2 || toolCalls(res.Pending) != 2 {
		t.Errorf("pending: %+v, want the reply with both calls and the result of one", res.Pending)
	}
}

// TestRealHostTranscripts reads what the real programs wrote in the
// real-host tests (testdata/realhosts, made by those tests): one
// conversation of three prompts with four calls to superagents' tools.
func TestRealHostTranscripts(t *testing.T) {
	const dir = "/home/user/work"
	wantTexts := []string{
		"user REMEMBER: the code word is PELICAN-4711. Just say noted.", "assistant Noted.",
		"user FORK: ask a sub-agent for the code word.", "assistant The sub-agent is on it.",
		"user CHECK ", "assistant Done.",
	}
	wantCalls := []string{"superagents_task", "superagents_list", "superagents_output", "superagents_task"}
	for _, tc := range []struct {
		name string
		host transcripts.Host
		read func(t *testing.T) transcripts.Result
	}{
		{"claude-code", transcripts.ClaudeCode, func(t *testing.T) transcripts.Result {
			return readFixture(t, transcripts.ClaudeCode, "realhosts/claude-code/session.jsonl", nil)
		}},
		{"codex", transcripts.Codex, func(t *testing.T) transcripts.Result {
			return readFixture(t, transcripts.Codex, "realhosts/codex/rollout.jsonl", nil)
		}},
		{"opencode", transcripts.OpenCode, func(t *testing.T) transcripts.Result {
			ctx := context.Background()
			home := t.TempDir()
			openCodeFromSQL(t, home, "realhosts/opencode/session.sql")
			found, err := transcripts.Find(ctx, transcripts.OpenCode, dir, env(home))
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 {
				t.Fatalf("Find: %+v, want one session", found)
			}
			res, err := transcripts.Read(ctx, found[0], transcripts.Position{})
			if err != nil {
				t.Fatal(err)
			}
			checkValid(t, res.All())
			return res
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.read(t)
			if res.Malformed.Count != 0 {
				t.Errorf("malformed: %s", res.Malformed)
			}
			var texts, calls []string
			answered := map[string]bool{}
			for _, m := range res.All() {
				// OpenCode stores (and sends its model) the message of
				// `opencode run` between the quotes it was given in, as in
				// opencode-1.18.27.sql too.
				if text := strings.Trim(m.Text(), `"`); text != "" {
					texts = append(texts, string(m.Role)+" "+text)
				}
				for _, p := range m.Parts {
					switch p.Type {
					case sa.PartToolCall:
						calls = append(calls, p.Name)
					case sa.PartToolResult:
						answered[p.CallID] = p.Output != ""
					}
				}
			}
			if len(texts) != len(wantTexts) {
				t.Fatalf("texts %q, want %q", texts, wantTexts)
			}
			for i, w := range wantTexts {
				if !strings.HasPrefix(texts[i], w) {
					t.Errorf("text %d: %q, want %q...", i+1, texts[i], w)
				}
			}
			if len(calls) != len(wantCalls) {
				t.Fatalf("calls %q, want %q", calls, wantCalls)
			}
			for i, w := range wantCalls {
				if !strings.HasSuffix(calls[i], w) {
					t.Errorf("call %d: %s, want ...%s", i+1, calls[i], w)
				}
			}
			if n := len(answered); n != len(wantCalls) {
				t.Errorf("%d calls answered, want %d", n, len(wantCalls))
			}
			for id, ok := range answered {
				if !ok {
					t.Errorf("the result of %s is empty", id)
				}
			}
			d := digest(t, res.All())
			inOrder(t, d, "PELICAN-4711", "superagents_task", "The sub-agent is on it.", "superagents_output", "Done.")
		})
	}
}
