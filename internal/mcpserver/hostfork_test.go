package mcpserver_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/transcripts"
)

// A fork over MCP from each host: the host (an MCP client named as the
// host names itself in initialize) has written its conversation, ending
// with the pending call to our task tool, under a temporary home; the
// forked child must start from that conversation, without the host's
// reasoning.
//
// The transcripts are written here in each host's own format, line by
// line as the host writes them, after the shapes the readers in
// transcripts/ were checked against (see transcripts/transcripts_test.go
// for their sources). The names the hosts give in initialize are those
// of mcpserver/hostfork.go. How each host names our tool:
//   - Claude Code: mcp__<server>__<tool> (Claude Code's documentation
//     of permissions: "mcp__puppeteer__puppeteer_navigate" is the
//     puppeteer_navigate tool of the puppeteer server).
//   - Codex: "mcp" + "__" + server + "__" + tool, sanitized to
//     [a-zA-Z0-9_-] (openai/codex codex-rs/core/src/mcp_connection_manager.rs,
//     qualify_tools; older builds left out the "mcp__").
//   - OpenCode: server + "_" + tool, each sanitized to [a-zA-Z0-9_-]
//     (anomalyco/opencode packages/opencode/src/mcp/index.ts, tools()).

const (
	// fact appears only in the host's transcript: a child that knows it
	// got the host's conversation.
	fact = "BLUE-HERON-42"
	// laterFact is written after the first fork.
	laterFact = "GREEN-EGRET-7"
	// reasoning is the host's own thinking, which a digest leaves out.
	reasoning = "SECRET-REASONING"
)

// hostWriter writes a conversation as one host records it, appending to
// what it wrote before.
type hostWriter interface {
	user(text string)
	// reply is a finished assistant turn: reasoning, then text.
	reply(thinking, text string)
	// call is an assistant message calling our task tool, unanswered.
	call(id string, args map[string]any)
	// result records the tool's answer to a call.
	result(id, text string)
}

// appendLine appends one JSON record and a newline to a JSONL file.
func appendLine(t testing.TB, path string, rec any) {
	t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(data, '\n')); err != nil {
		t.Fatal(err)
	}
}

// clock hands out increasing timestamps, as a host stamps its records.
type clock struct{ at time.Time }

func (c *clock) next() time.Time {
	if c.at.IsZero() {
		c.at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	}
	c.at = c.at.Add(time.Second)
	return c.at
}

// claudeWriter writes Claude Code's session JSONL: one record per line,
// chained by parentUuid, one assistant line per content block sharing
// message.id, tool results as tool_result blocks of user lines.
type claudeWriter struct {
	t                 testing.TB
	path, ws, session string
	parent            any // uuid of the last record; null at the start
	n                 int
	clock
}

const claudeSessionID = "7d3c5e2a-1b4f-4a8e-9c6d-2e0f1a2b3c4d"

func openClaude(t testing.TB, home, ws string) hostWriter {
	path := filepath.Join(home, ".claude", "projects", transcripts.ClaudeProjectDir(ws), claudeSessionID+".jsonl")
	return &claudeWriter{t: t, path: path, ws: ws, session: claudeSessionID}
}

func (w *claudeWriter) record(typ string, msg map[string]any, extra map[string]any) {
	w.n++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", w.n)
	rec := map[string]any{
		"parentUuid": w.parent, "isSidechain": false, "userType": "external", "cwd": w.ws,
		"sessionId": w.session, "version": "2.0.14", "gitBranch": "main", "type": typ,
		"message": msg, "uuid": id, "timestamp": w.next().Format(time.RFC3339Nano),
	}
	for k, v := range extra {
		rec[k] = v
	}
	appendLine(w.t, w.path, rec)
	w.parent = id
}

func (w *claudeWriter) assistant(msgID string, block map[string]any, stop any) {
	w.record("assistant", map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
		"content": []any{block}, "stop_reason": stop, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
	}, map[string]any{"requestId": "req_" + msgID})
}

func (w *claudeWriter) user(text string) {
	w.record("user", map[string]any{"role": "user", "content": text}, nil)
}

func (w *claudeWriter) reply(thinking, text string) {
	id := fmt.Sprintf("msg_01Reply%d", w.n)
	w.assistant(id, map[string]any{"type": "thinking", "thinking": thinking, "signature": "sig"}, nil)
	w.assistant(id, map[string]any{"type": "text", "text": text}, "end_turn")
}

func (w *claudeWriter) call(id string, args map[string]any) {
	w.assistant("msg_01Call"+id, map[string]any{"type": "tool_use", "id": id, "name": "mcp__superagents__superagents_task", "input": args}, "tool_use")
}

func (w *claudeWriter) result(id, text string) {
	w.record("user", map[string]any{"role": "user", "content": []any{map[string]any{
		"type": "tool_result", "tool_use_id": id, "content": []any{map[string]any{"type": "text", "text": text}},
	}}}, map[string]any{"toolUseResult": []any{map[string]any{"type": "text", "text": text}}})
}

// codexWriter writes a Codex rollout: {timestamp, type, payload} lines,
// session_meta first, the conversation as response_item lines, event_msg
// lines beside them (token_count ends each model response).
type codexWriter struct {
	t    testing.TB
	path string
	clock
}

const codexSessionID = "019ab3c4-5d6e-7f80-91a2-b3c4d5e6f708"

func openCodex(t testing.TB, home, ws string) hostWriter {
	w := &codexWriter{t: t, path: filepath.Join(home, ".codex", "sessions", "2026", "11", "25", "rollout-2026-11-25T09-00-00-"+codexSessionID+".jsonl")}
	w.line("session_meta", map[string]any{"id": codexSessionID, "timestamp": "2026-11-25T09:00:00.000Z", "cwd": ws,
		"originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": nil, "source": "cli", "model_provider": "openai"})
	w.line("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{
		"type": "input_text", "text": "<environment_context>\n  <cwd>" + ws + "</cwd>\n</environment_context>"}}})
	w.line("turn_context", map[string]any{"cwd": ws, "approval_policy": "on-request", "model": "gpt-5-codex"})
	return w
}

func (w *codexWriter) line(typ string, payload any) {
	appendLine(w.t, w.path, map[string]any{"timestamp": w.next().Format("2006-01-02T15:04:05.000Z"), "type": typ, "payload": payload})
}

func (w *codexWriter) tokenCount() {
	w.line("event_msg", map[string]any{"type": "token_count", "info": map[string]any{"total_token_usage": map[string]any{"input_tokens": 100, "output_tokens": 10}}})
}

func (w *codexWriter) user(text string) {
	w.line("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}})
	w.line("event_msg", map[string]any{"type": "user_message", "message": text, "images": []any{}})
}

func (w *codexWriter) reply(thinking, text string) {
	w.line("response_item", map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": thinking}},
		"content": nil, "encrypted_content": "gAAAAB"})
	w.line("event_msg", map[string]any{"type": "agent_reasoning", "text": thinking})
	w.line("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}})
	w.tokenCount()
}

func (w *codexWriter) call(id string, args map[string]any) {
	raw, err := json.Marshal(args)
	if err != nil {
		w.t.Fatal(err)
	}
	// Codex keeps a function call's arguments as a string of JSON.
	w.line("response_item", map[string]any{"type": "function_call", "name": "mcp__superagents__superagents_task", "arguments": string(raw), "call_id": id})
	w.tokenCount()
}

func (w *codexWriter) result(id, text string) {
	w.line("response_item", map[string]any{"type": "function_call_output", "call_id": id, "output": text})
}

// opencodeWriter writes OpenCode's records: a session, messages and their
// parts, each a JSON object, with a tool part updated in place when its
// tool ends, as OpenCode does. Where they go is the store's affair.
type opencodeWriter struct {
	t     testing.TB
	store opencodeStore
	n     int
	// calls holds the message and part of each call, for its result.
	calls map[string]opencodeCall
	clock
}

// opencodeStore keeps OpenCode's records: the JSON storage of older
// versions or the database of current ones. Writing a record again
// replaces it.
type opencodeStore interface {
	session(rec map[string]any)
	message(rec map[string]any)
	part(rec map[string]any)
}

const opencodeSessionID = "ses_6b2c3d4e5ffeForkSession01"

func openOpenCode(store func(t testing.TB, data string) opencodeStore) func(t testing.TB, home, ws string) hostWriter {
	return func(t testing.TB, home, ws string) hostWriter {
		w := &opencodeWriter{t: t, store: store(t, filepath.Join(home, ".local", "share", "opencode")), calls: map[string]opencodeCall{}}
		now := w.next().UnixMilli()
		w.store.session(map[string]any{"id": opencodeSessionID, "slug": "fork", "version": "1.0.0", "projectID": "proj_fork",
			"directory": ws, "title": "Fork a sub-agent", "time": map[string]any{"created": now, "updated": now}})
		return w
	}
}

func (w *opencodeWriter) ids() (msg, part string) {
	w.n++
	return fmt.Sprintf("msg_%010dFork", w.n), fmt.Sprintf("prt_%010dFork", w.n)
}

func (w *opencodeWriter) assistantMessage(id string, completed bool) {
	now := w.next().UnixMilli()
	times := map[string]any{"created": now}
	if completed {
		times["completed"] = now
	}
	w.store.message(map[string]any{"id": id, "sessionID": opencodeSessionID, "role": "assistant", "time": times,
		"modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": "build", "cost": 0,
		"tokens": map[string]any{"input": 100, "output": 10, "reasoning": 0, "cache": map[string]any{"read": 0, "write": 0}}})
}

func (w *opencodeWriter) part(msg, id string, rec map[string]any) {
	rec["id"], rec["messageID"], rec["sessionID"] = id, msg, opencodeSessionID
	w.store.part(rec)
}

func (w *opencodeWriter) user(text string) {
	msg, prt := w.ids()
	w.store.message(map[string]any{"id": msg, "sessionID": opencodeSessionID, "role": "user", "time": map[string]any{"created": w.next().UnixMilli()}})
	w.part(msg, prt+"00", map[string]any{"type": "text", "text": text})
}

func (w *opencodeWriter) reply(thinking, text string) {
	msg, prt := w.ids()
	w.assistantMessage(msg, true)
	w.part(msg, prt+"00", map[string]any{"type": "step-start"})
	w.part(msg, prt+"01", map[string]any{"type": "reasoning", "text": thinking})
	w.part(msg, prt+"02", map[string]any{"type": "text", "text": text})
	w.part(msg, prt+"03", map[string]any{"type": "step-finish", "reason": "stop"})
}

type opencodeCall struct {
	msg, part string
	args      map[string]any
}

func (w *opencodeWriter) tool(msg, prt, id string, state map[string]any) {
	w.part(msg, prt, map[string]any{"type": "tool", "callID": id, "tool": "superagents_superagents_task", "state": state})
}

func (w *opencodeWriter) call(id string, args map[string]any) {
	msg, prt := w.ids()
	w.calls[id] = opencodeCall{msg, prt, args}
	w.assistantMessage(msg, false)
	w.part(msg, prt+"00", map[string]any{"type": "step-start"})
	w.tool(msg, prt+"01", id, map[string]any{"status": "running", "input": args, "time": map[string]any{"start": w.next().UnixMilli()}})
}

func (w *opencodeWriter) result(id, text string) {
	at, ok := w.calls[id]
	if !ok {
		w.t.Fatalf("no call %s to answer", id)
	}
	msg, prt := at.msg, at.part
	now := w.next().UnixMilli()
	w.tool(msg, prt+"01", id, map[string]any{"status": "completed", "input": at.args, "output": text,
		"title": "superagents_task", "metadata": map[string]any{}, "time": map[string]any{"start": now, "end": now}})
	w.part(msg, prt+"02", map[string]any{"type": "step-finish", "reason": "tool-calls"})
	w.assistantMessage(msg, true)
}

// opencodeFiles is the JSON storage: storage/session/<project>/<session>.json,
// storage/message/<session>/<message>.json, storage/part/<message>/<part>.json.
type opencodeFiles struct {
	t       testing.TB
	storage string
}

func newOpenCodeFiles(t testing.TB, data string) opencodeStore {
	return opencodeFiles{t: t, storage: filepath.Join(data, "storage")}
}

func (s opencodeFiles) write(rec map[string]any, dirs ...string) {
	s.t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(append([]string{s.storage}, dirs...)...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	// OpenCode writes a record whole, to a temporary file it renames.
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		s.t.Fatal(err)
	}
}

func (s opencodeFiles) session(rec map[string]any) {
	s.write(rec, "session", rec["projectID"].(string), rec["id"].(string)+".json")
}

func (s opencodeFiles) message(rec map[string]any) {
	s.write(rec, "message", rec["sessionID"].(string), rec["id"].(string)+".json")
}

func (s opencodeFiles) part(rec map[string]any) {
	s.write(rec, "part", rec["messageID"].(string), rec["id"].(string)+".json")
}

// opencodeDatabase is the database of current versions, opencode.db in
// WAL mode, held open as a running OpenCode holds it: tables session,
// message and part (anomalyco/opencode
// packages/opencode/src/session/session.sql.ts), whose data column holds
// a record's JSON without the ids that have columns of their own.
type opencodeDatabase struct {
	t  testing.TB
	db *sql.DB
}

func newOpenCodeDatabase(t testing.TB, data string) opencodeStore {
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, transcripts.OpenCodeDB)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := opencodeDatabase{t: t, db: db}
	s.exec(`CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, share_url text, time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer, time_archived integer)`)
	s.exec(`CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)`)
	s.exec(`CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)`)
	return s
}

func (s opencodeDatabase) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
}

// data is a record's JSON without the ids kept in columns.
func (s opencodeDatabase) data(rec map[string]any) string {
	out := map[string]any{}
	for k, v := range rec {
		if k != "id" && k != "sessionID" && k != "messageID" {
			out[k] = v
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(raw)
}

func (s opencodeDatabase) session(rec map[string]any) {
	times := rec["time"].(map[string]any)
	s.exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		rec["id"], rec["projectID"], rec["slug"], rec["directory"], rec["title"], rec["version"], times["created"], times["updated"])
}

func (s opencodeDatabase) message(rec map[string]any) {
	s.exec(`INSERT OR REPLACE INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, 0, 0, ?)`, rec["id"], rec["sessionID"], s.data(rec))
}

func (s opencodeDatabase) part(rec map[string]any) {
	s.exec(`INSERT OR REPLACE INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 0, 0, ?)`,
		rec["id"], rec["messageID"], rec["sessionID"], s.data(rec))
}

// hostFixture is a host as these tests meet it: what its MCP client calls
// itself, where its transcript goes and under which id.
type hostFixture struct {
	name      string
	host      transcripts.Host
	client    string // clientInfo.name in initialize
	transport string
	session   string // the host's id of the conversation
	open      func(t testing.TB, home, ws string) hostWriter
}

var hostFixtures = []hostFixture{
	{"claude-code", transcripts.ClaudeCode, "claude-code", streamableHTTP, claudeSessionID, openClaude},
	{"codex", transcripts.Codex, "codex-mcp-client", inMemory, codexSessionID, openCodex},
	{"opencode-database", transcripts.OpenCode, "opencode", inMemory, opencodeSessionID, openOpenCode(newOpenCodeDatabase)},
	{"opencode-json", transcripts.OpenCode, "opencode", streamableHTTP, opencodeSessionID, openOpenCode(newOpenCodeFiles)},
}

// homeEnv is an environment with only HOME set.
func homeEnv(home string) func(string) string {
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

// forkArgs are the arguments of a forked launch with this prompt.
func forkArgs(prompt string) map[string]any {
	return map[string]any{"description": "forked check", "prompt": prompt, "agent": "general", "fork": true}
}

// firstRequest is the first model request that holds text: the first
// request of the child whose prompt it is.
func (h *harness) firstRequest(text string) string {
	h.t.Helper()
	for _, r := range h.model.Requests() {
		if strings.Contains(string(r.Body), text) {
			return string(r.Body)
		}
	}
	h.t.Fatalf("no model request holds %q", text)
	return ""
}

// forked launches a forked task, waits for it to end and returns the
// reply and the child's first model request.
func (c *conn) forked(h *harness, prompt string) (reply, request string) {
	c.t.Helper()
	text, data := c.ok("superagents_task", forkArgs(prompt))
	id, _ := data["id"].(string)
	if id == "" {
		c.t.Fatalf("fork: no task id in %v", data)
	}
	c.ok("superagents_output", map[string]any{"task_id": id, "block": true})
	return text, h.firstRequest(prompt)
}

// checkDigest checks that a child's first request holds every one of
// want and not the host's reasoning.
func checkDigest(t *testing.T, request string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(request, w) {
			t.Errorf("the child's first request lacks %q; its digest:\n%s", w, digestOf(request))
		}
	}
	if strings.Contains(request, reasoning) {
		t.Errorf("the child's first request holds the host's reasoning; its digest:\n%s", digestOf(request))
	}
}

// digestOf is the parent's conversation as a request carries it (JSON
// escapes its angle brackets), for failure messages.
func digestOf(request string) string {
	const open, end = `\u003cparent_conversation\u003e`, `\u003c/parent_conversation\u003e`
	i, j := strings.Index(request, open), strings.Index(request, end)
	if i < 0 || j < i {
		return "(no digest) " + request
	}
	return strings.ReplaceAll(request[i+len(open):j], `\n`, "\n")
}

// TestHostFork: per host, three forks from one conversation: the first
// imports it, the second appends what the host wrote since to the same
// session, the third finds its call written only after it arrived.
func TestHostFork(t *testing.T) {
	ctx := context.Background()
	for _, hf := range hostFixtures {
		t.Run(hf.name, func(t *testing.T) {
			home := t.TempDir()
			h := newHarnessWith(t, fakeModel, mcpserver.Options{Getenv: homeEnv(home)})
			w := hf.open(t, home, h.ws)
			w.user("The release codename is " + fact + "; it is written nowhere else.")
			w.reply(reasoning+": the codename must stay out of the logs.", "Noted: the codename is "+fact+".")
			w.user("Fork a sub-agent to check the staging deploy.")
			first := "Check the staging deploy against the release codename."
			w.call("call_1", forkArgs(first))

			c := h.connect(hf.transport, hf.client, "1.0.0")
			if init := c.cs.InitializeResult(); !strings.Contains(init.Instructions, "fork: true starts the sub-agent with a digest of your own conversation") {
				t.Errorf("the instructions do not say that fork carries the host's conversation:\n%s", init.Instructions)
			}
			reply, request := c.forked(h, first)
			wantNote := "The sub-agent starts with a digest of your " + hf.host.Label() + " conversation (session " + hf.session + ")."
			if !strings.Contains(reply, wantNote) {
				t.Errorf("reply %q does not say %q", reply, wantNote)
			}
			checkDigest(t, request, fact)
			link, err := h.store.HostLink(ctx, string(hf.host), hf.session)
			if err != nil {
				t.Fatalf("no link of the host conversation after the first fork: %v", err)
			}

			// The host answers the call and goes on; the next fork appends
			// what it wrote to the same imported session.
			w.result("call_1", reply)
			w.reply(reasoning+": wait for the check.", "The check runs in the background.")
			w.user("The staging database is " + laterFact + ". Fork another sub-agent for its backups.")
			second := "Check the backups of the staging database."
			w.call("call_2", forkArgs(second))
			reply, request = c.forked(h, second)
			if !strings.Contains(reply, wantNote) {
				t.Errorf("second fork: reply %q does not say %q", reply, wantNote)
			}
			checkDigest(t, request, fact, laterFact)
			again, err := h.store.HostLink(ctx, string(hf.host), hf.session)
			if err != nil {
				t.Fatal(err)
			}
			if again.SessionID != link.SessionID {
				t.Errorf("the second fork imported session %s, not the first fork's %s", again.SessionID, link.SessionID)
			}
			if again.Position == link.Position {
				t.Errorf("the second fork left the import position at %s", link.Position)
			}
			msgs, err := h.store.History(ctx, link.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if got := countText(msgs, laterFact); got != 1 {
				t.Errorf("the imported session holds %q %d times, want once", laterFact, got)
			}
			if got := countText(msgs, "The release codename is "+fact); got != 1 {
				t.Errorf("the imported session holds the first user message %d times, want once", got)
			}

			// The host writes the call a moment after it sends it: the
			// fork waits for it (up to 2 s).
			w.result("call_2", reply)
			third := "Check the staging logs."
			done := make(chan callResult, 1)
			go func() {
				callCtx, cancel := context.WithTimeout(ctx, waitLimit)
				defer cancel()
				res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "superagents_task", Arguments: forkArgs(third)})
				done <- callResult{res, err}
			}()
			time.Sleep(300 * time.Millisecond)
			w.call("call_3", forkArgs(third))
			r := <-done
			if r.err != nil || r.res.IsError {
				t.Fatalf("late fork: %v %v", r.err, r.res)
			}
			if text := resultText(r.res); !strings.Contains(text, wantNote) {
				t.Errorf("late fork: reply %q does not say %q", text, wantNote)
			}
			id := taskID(t, r.res)
			c.ok("superagents_output", map[string]any{"task_id": id, "block": true})
			checkDigest(t, h.firstRequest(third), fact, laterFact)
		})
	}
}

// TestHostForkStalledHost: a host that wrote its transcript about when it
// called, but writes the call itself later than a fork's usual wait (Claude
// Code on a machine stalled for seconds), still hands its conversation
// over: a host at work on its transcript gets a longer wait.
func TestHostForkStalledHost(t *testing.T) {
	home := t.TempDir()
	h := newHarnessWith(t, fakeModel, mcpserver.Options{Getenv: homeEnv(home)})
	w := openClaude(t, home, h.ws)
	w.user("The release codename is " + fact + "; it is written nowhere else.")
	w.user("Fork a sub-agent to check the staging deploy.")
	c := h.connect(inMemory, "claude-code", "1.0.0")
	prompt := "Check the staging deploy against the release codename."
	done := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "superagents_task", Arguments: forkArgs(prompt)})
		done <- callResult{res, err}
	}()
	time.Sleep(6 * time.Second) // longer than a fork waits for a host that writes nothing
	w.call("call_1", forkArgs(prompt))
	r := <-done
	if r.err != nil || r.res.IsError {
		t.Fatalf("fork: %v %v", r.err, r.res)
	}
	if text := resultText(r.res); !strings.Contains(text, "The sub-agent starts with a digest of your Claude Code conversation") {
		t.Fatalf("reply %q: want the host's conversation handed over", text)
	}
	c.ok("superagents_output", map[string]any{"task_id": taskID(t, r.res), "block": true})
	checkDigest(t, h.firstRequest(prompt), fact)
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

func taskID(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	var data struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &data) != nil || data.ID == "" {
		t.Fatalf("no task id in %s", raw)
	}
	return data.ID
}

// countText counts the message parts that hold s.
func countText(msgs []sa.Message, s string) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if strings.Contains(p.Text, s) {
				n++
			}
		}
	}
	return n
}

// TestHostForkWithout: when the host's conversation cannot be had, the
// task still launches, and the reply says that the fork carries none and
// why.
func TestHostForkWithout(t *testing.T) {
	prompt := "Check the staging deploy."
	cases := []struct {
		name   string
		host   string // Options.Host
		client string
		// transcript writes the host's conversation, pending call included.
		transcript bool
		want       []string
	}{
		{"no transcript", "", "claude-code", false, []string{
			"The fork carries no host conversation: Claude Code's transcript of this call could not be read",
			"no Claude Code conversation in "}},
		{"unknown client", "", "some-editor", true, []string{
			"The fork carries no host conversation, only this connection's record (the host is not known;",
			"superagents mcp --host claude-code|codex|opencode"}},
		{"host none", mcpserver.HostNone, "claude-code", true, []string{
			"The fork carries no host conversation, only this connection's record (host transcripts are turned off (--host none)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h := newHarnessWith(t, fakeModel, mcpserver.Options{Host: tc.host, Getenv: homeEnv(home)})
			if tc.transcript {
				w := openClaude(t, home, h.ws)
				w.user("The release codename is " + fact + ".")
				w.call("call_1", forkArgs(prompt))
			}
			c := h.connect(inMemory, tc.client, "1.0.0")
			if init := c.cs.InitializeResult(); tc.host == mcpserver.HostNone && !strings.Contains(init.Instructions, "fork: true hands over this connection's record") {
				t.Errorf("with --host none the instructions do not say that fork carries the connection's record only:\n%s", init.Instructions)
			}
			reply, request := c.forked(h, prompt)
			for _, w := range tc.want {
				if !strings.Contains(reply, w) {
					t.Errorf("reply %q does not say %q", reply, w)
				}
			}
			if strings.Contains(reply, "starts with a digest of your") || strings.Contains(request, fact) {
				t.Errorf("the fork carried a host conversation: reply %q, request %s", reply, request)
			}
		})
	}
}

// TestHostForkConfiguredHost: Options.Host (superagents mcp --host) wins
// over the name the client gives.
func TestHostForkConfiguredHost(t *testing.T) {
	home := t.TempDir()
	h := newHarnessWith(t, fakeModel, mcpserver.Options{Host: string(transcripts.Codex), Getenv: homeEnv(home)})
	prompt := "Check the staging deploy."
	w := openCodex(t, home, h.ws)
	w.user("The release codename is " + fact + ".")
	w.call("call_1", forkArgs(prompt))
	c := h.connect(inMemory, "claude-code", "1.0.0")
	reply, request := c.forked(h, prompt)
	if want := "The sub-agent starts with a digest of your Codex conversation"; !strings.Contains(reply, want) {
		t.Errorf("reply %q does not say %q", reply, want)
	}
	checkDigest(t, request, fact)
}

// TestHostForkParallel: a host that calls our task tool twice in one
// reply (parallel tool calls) gets both forks from its conversation, the
// two imports of the same conversation notwithstanding.
func TestHostForkParallel(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h := newHarnessWith(t, fakeModel, mcpserver.Options{Getenv: homeEnv(home)})
	w := openClaude(t, home, h.ws).(*claudeWriter)
	w.user("The release codename is " + fact + ".")
	prompts := []string{"Check the staging deploy.", "Check the production deploy."}
	// Claude Code writes one line per tool_use block of the reply.
	for i, p := range prompts {
		w.assistant("msg_01Parallel", map[string]any{"type": "tool_use", "id": fmt.Sprintf("call_%d", i), "name": "mcp__superagents__superagents_task", "input": forkArgs(p)}, "tool_use")
	}
	c := h.connect(streamableHTTP, "claude-code", "1.0.0")
	done := make(chan callResult, len(prompts))
	for _, p := range prompts {
		go func() {
			callCtx, cancel := context.WithTimeout(ctx, waitLimit)
			defer cancel()
			res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "superagents_task", Arguments: forkArgs(p)})
			done <- callResult{res, err}
		}()
	}
	for range prompts {
		r := <-done
		if r.err != nil || r.res.IsError {
			t.Fatalf("fork: %v %v", r.err, r.res)
		}
		if text := resultText(r.res); !strings.Contains(text, "The sub-agent starts with a digest of your Claude Code conversation") {
			t.Errorf("reply %q does not carry the host conversation", text)
		}
		c.ok("superagents_output", map[string]any{"task_id": taskID(t, r.res), "block": true})
	}
	for _, p := range prompts {
		checkDigest(t, h.firstRequest(p), fact)
	}
}
