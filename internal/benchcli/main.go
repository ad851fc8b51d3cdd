// Command benchcli measures superagents as a user waits for it: whole
// processes of a built binary on conversations of real sizes, which it
// generates in a temporary directory and removes at the end. Each figure
// is the median of several runs. scripts/bench-cli builds the release
// binary and runs it.
//
//	go run ./internal/benchcli -bin ./superagents [-runs 7] [-opencode PATH]
//
// With -opencode (the opencode binary of the opencode-ai npm package) the
// OpenCode session is written by OpenCode itself (`opencode import`);
// without it, its database is written here, in OpenCode's schema.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)

func main() {
	bin := flag.String("bin", "", "the superagents binary to measure")
	runs := flag.Int("runs", 7, "whole-process runs per figure")
	opencode := flag.String("opencode", "", "the opencode binary, to write the OpenCode session through `opencode import`")
	keep := flag.Bool("keep", false, "keep the generated data (its directory is printed)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "benchcli: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *runs, *opencode, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "benchcli:", err)
		os.Exit(1)
	}
}

// bench is the generated data and the environment the binary runs in.
type bench struct {
	bin, root, home, work string
	env                   []string
	runs                  int
	// foreground: the binary's mcp command has --foreground.
	foreground bool
}

func run(bin string, runs int, opencode string, keep bool) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "superagents-bench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("data:", root)
	} else {
		defer os.RemoveAll(root)
	}
	// The hosts record the working directory as the system resolves it.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	b := &bench{bin: bin, root: root, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"), runs: runs}
	for _, d := range []string{b.home, b.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// A clean environment: no API key (tasks run on the offline model), no
	// configuration of the person running it.
	b.env = []string{
		"HOME=" + b.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + root,
		"XDG_DATA_HOME=" + filepath.Join(b.home, ".local", "share"),
		"XDG_CONFIG_HOME=" + filepath.Join(b.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(b.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(b.home, ".local", "state"),
	}

	help, _ := exec.Command(bin, "mcp", "--help").Output()
	b.foreground = bytes.Contains(help, []byte("--foreground"))

	fmt.Printf("generating conversations in a temporary directory\n")
	jsonl23 := filepath.Join(root, "tools-7500.jsonl")
	n23, err := writeToolsJSONL(jsonl23, 2500, 8200)
	if err != nil {
		return err
	}
	jsonl22 := filepath.Join(root, "tools-15000.jsonl")
	n22, err := writeToolsJSONL(jsonl22, 5000, 4000)
	if err != nil {
		return err
	}
	claudePath, claudeSize, err := b.writeClaude(3 << 20)
	if err != nil {
		return err
	}
	ocID, ocHow, err := b.writeOpenCode(opencode, 2500)
	if err != nil {
		return err
	}
	fmt.Printf("  JSONL: %.1f MB (7,500 messages), %.1f MB (15,000 messages)\n", mb(n23), mb(n22))
	fmt.Printf("  Claude Code transcript: %.1f MB, one compaction\n", mb(claudeSize))
	fmt.Printf("  OpenCode session: 5,000 messages, 12,500 parts (%s)\n", ocHow)
	fmt.Printf("runs per figure: %d (median, then min-max)\n\n", runs)

	start, err := b.measure("version", nil, "version")
	if err != nil {
		return err
	}
	report("superagents version (start-up)", start, 0)

	// superagents import of 23 MB of JSONL: a new data directory each run.
	d, err := b.measure("import JSONL", b.fresh, "import", jsonl23)
	if err != nil {
		return err
	}
	report(fmt.Sprintf("import %.0f MB of JSONL (7,500 messages)", mb(n23)), d, 0.4)

	// history and context of 15,000 messages.
	data := b.dataDir("history")
	out, err := b.cmd(data, "import", jsonl22)
	if err != nil {
		return err
	}
	id := strings.TrimSpace(out)
	for _, c := range []struct {
		name string
		goal float64
	}{{"history", 0}, {"context", 0.2}} {
		d, err := b.measure(c.name, nil, "--data-dir", data, c.name, id, "--json")
		if err != nil {
			return err
		}
		report(fmt.Sprintf("%s ID --json (15,000 messages, %.0f MB)", c.name, mb(n22)), d, c.goal)
	}

	// OpenCode: a first import (new data directory each run), then
	// importing again with nothing new.
	d, err = b.measure("OpenCode first import", b.fresh, "import", "--from", "opencode", ocID)
	if err != nil {
		return err
	}
	report("import --from opencode, first (5,000 messages)", d, 0.6)
	data = b.dataDir("opencode")
	if _, err := b.cmd(data, "import", "--from", "opencode", ocID); err != nil {
		return err
	}
	d, err = b.measure("OpenCode again", nil, "--data-dir", data, "import", "--from", "opencode", ocID)
	if err != nil {
		return err
	}
	report("import --from opencode, again, nothing new", d, 0.15)

	// Claude Code: the same.
	d, err = b.measure("Claude Code first import", b.fresh, "import", "--from", "claude-code", claudePath)
	if err != nil {
		return err
	}
	report("import --from claude-code, first (3 MB)", d, 0)
	data = b.dataDir("claude")
	if _, err := b.cmd(data, "import", "--from", "claude-code", claudePath); err != nil {
		return err
	}
	d, err = b.measure("Claude Code again", nil, "--data-dir", data, "import", "--from", "claude-code", claudePath)
	if err != nil {
		return err
	}
	report("import --from claude-code, again, nothing new", d, 0)
	fmt.Printf("%-54s %6.3f s  goal 0.05 s\n", "  of which above start-up (medians)", median(d)-median(start))

	// fork: true over MCP, from the call to the answer.
	for _, h := range []struct{ host, label string }{{"opencode", "OpenCode"}, {"claude-code", "Claude Code"}} {
		first, again, err := b.mcpForks(h.host)
		if err != nil {
			return fmt.Errorf("fork over MCP (%s): %w", h.label, err)
		}
		report("fork: true over MCP, "+h.label+", first", first, 0.3)
		report("fork: true over MCP, "+h.label+", again", again, 0.3)
	}
	return nil
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// dataDir returns a new superagents data directory.
func (b *bench) dataDir(name string) string {
	d, err := os.MkdirTemp(b.root, "data-"+name+"-")
	if err != nil {
		panic(err)
	}
	return d
}

// fresh gives each run a new data directory.
func (b *bench) fresh(args []string) []string {
	return append([]string{"--data-dir", b.dataDir("run")}, args...)
}

// cmd runs the binary once in the workspace and returns its output.
func (b *bench) cmd(data string, args ...string) (string, error) {
	c := exec.Command(b.bin, append([]string{"--data-dir", data}, args...)...)
	c.Dir, c.Env = b.work, b.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("superagents %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// measure runs the binary runs times (after one run to warm the file
// cache), each run's arguments made by prep when given, and returns the
// wall times. Standard output is discarded.
func (b *bench) measure(name string, prep func([]string) []string, args ...string) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i <= b.runs; i++ {
		a := args
		if prep != nil {
			a = prep(args)
		}
		c := exec.Command(b.bin, a...)
		c.Dir, c.Env = b.work, b.env
		var stderr bytes.Buffer
		c.Stderr = &stderr
		t := time.Now()
		err := c.Run()
		d := time.Since(t)
		if err != nil {
			return nil, fmt.Errorf("%s: superagents %s: %v: %s", name, strings.Join(a, " "), err, stderr.String())
		}
		if i > 0 {
			out = append(out, d)
		}
	}
	return out, nil
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2].Seconds()
	}
	return (s[n/2-1] + s[n/2]).Seconds() / 2
}

func report(what string, ds []time.Duration, goal float64) {
	s := slices.Clone(ds)
	slices.Sort(s)
	line := fmt.Sprintf("%-54s %6.3f s  (%.3f-%.3f)", what, median(s), s[0].Seconds(), s[len(s)-1].Seconds())
	if goal > 0 {
		line += fmt.Sprintf("  goal %.2f s", goal)
	}
	fmt.Println(line)
}

// toolOutput is a tool result of about size bytes: lines of code with
// quoted strings, as a file read returns.
func toolOutput(size int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "\tif err := step(%d); err != nil { return fmt.Errorf(\"step %%d: %%w\", %d, err) } // \"quoted\"\n", i, i)
	}
	return sb.String()
}

// writeToolsJSONL writes rounds of a request, a reply calling a tool and
// the tool's result of about size bytes, as `superagents import` reads
// them: 3 messages per round.
func writeToolsJSONL(path string, rounds, size int) (int64, error) {
	output := toolOutput(size)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range rounds {
		call := fmt.Sprintf("call_%d", i)
		enc.Encode(map[string]any{"role": "user", "text": fmt.Sprintf("Look at file %d and tell me what fails.", i)})
		enc.Encode(map[string]any{"role": "assistant", "parts": []any{
			map[string]any{"type": "text", "text": "Let me read it."},
			map[string]any{"type": "tool_call", "call_id": call, "name": "read", "input": map[string]any{"path": fmt.Sprintf("src/file%d.go", i)}},
		}})
		enc.Encode(map[string]any{"role": "tool", "parts": []any{
			map[string]any{"type": "tool_result", "call_id": call, "name": "read", "output": output},
		}})
	}
	return int64(buf.Len()), os.WriteFile(path, buf.Bytes(), 0o644)
}

// taskArgs are the arguments of the pending superagents_task call each
// host conversation ends with.
var taskArgs = map[string]any{
	"description": "Review the parser",
	"prompt":      "Review the parser changes discussed above and report any bug you find.",
	"fork":        true,
	"agent":       "general",
}

// writeClaude writes a Claude Code transcript of at least size bytes
// for the workspace, compacted once halfway, that ends with a pending
// superagents_task call; it returns its path and size.
func (b *bench) writeClaude(size int) (string, int64, error) {
	const sid = "6b1e0c4a-2f3d-4e5a-9b8c-7d6e5f4a3b2c"
	dir := filepath.Join(b.home, ".claude", "projects", claudeDirName(b.work))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	var buf bytes.Buffer
	parent, n := any(nil), 0
	uuid := func() string { n++; return fmt.Sprintf("%08x-0000-4000-8000-%012d", n/100000, n) }
	rec := func(typ string, extra map[string]any) string {
		id := uuid()
		v := map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": b.work, "sessionId": sid,
			"version": "2.1.39", "gitBranch": "main", "type": typ, "uuid": id, "timestamp": "2026-11-20T10:00:00.000Z"}
		for k, x := range extra {
			v[k] = x
		}
		raw, _ := json.Marshal(v)
		buf.Write(raw)
		buf.WriteByte('\n')
		parent = id
		return id
	}
	msg := func(role string, content any) map[string]any {
		return map[string]any{"message": map[string]any{"role": role, "content": content}}
	}
	asst := func(mid string, block map[string]any) map[string]any {
		return map[string]any{"message": map[string]any{"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{block}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}}
	}
	output := strings.Repeat("ok   github.com/example/pkg/sub 0.012s\n", 50)
	turn := func(i int) {
		mid := fmt.Sprintf("msg_%d", i)
		rec("user", msg("user", fmt.Sprintf("Step %d: run the tests of package %d and tell me what fails.", i, i)))
		rec("assistant", asst(mid, map[string]any{"type": "thinking", "thinking": strings.Repeat("Considering which tests to run. ", 8), "signature": "sig"}))
		rec("assistant", asst(mid, map[string]any{"type": "text", "text": "Running the tests now."}))
		rec("assistant", asst(mid, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "Bash", "input": map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", i)}}))
		rec("user", msg("user", []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%d", i), "content": output}}))
		rec("assistant", asst(mid+"b", map[string]any{"type": "text", "text": fmt.Sprintf("All tests of package %d pass.", i)}))
		rec("system", map[string]any{"subtype": "turn_duration", "durationMs": 1200, "isMeta": false})
	}
	i := 0
	for ; buf.Len() < size/2; i++ {
		turn(i)
	}
	// An automatic compaction: the boundary names the record before it,
	// then the summary.
	last := parent
	parent = nil
	rec("system", map[string]any{"subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false, "level": "info",
		"logicalParentUuid": last, "compactMetadata": map[string]any{"trigger": "auto", "preTokens": 167000}})
	rec("user", map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true, "message": map[string]any{"role": "user",
		"content": "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nThe user ran the tests of every package; all pass so far."}})
	for ; buf.Len() < size; i++ {
		turn(i)
	}
	rec("user", msg("user", "Fork a sub-agent to review the parser."))
	rec("assistant", asst("msg_fork", map[string]any{"type": "tool_use", "id": "toolu_fork", "name": "mcp__superagents__superagents_task", "input": taskArgs}))
	path := filepath.Join(dir, sid+".jsonl")
	return path, int64(buf.Len()), os.WriteFile(path, buf.Bytes(), 0o644)
}

// claudeDirName is Claude Code's folder name for a working directory.
func claudeDirName(dir string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, dir)
}

// OpenCode's export format, which `opencode import` reads.
type ocExport struct {
	Info     map[string]any `json:"info"`
	Messages []ocExportMsg  `json:"messages"`
}

type ocExportMsg struct {
	Info  map[string]any   `json:"info"`
	Parts []map[string]any `json:"parts"`
}

// openCodeSession makes an OpenCode session of turns user messages and
// as many replies, each reply a step with text and a tool call (4 parts),
// the last one a pending superagents_task call.
func (b *bench) openCodeSession(turns int) ocExport {
	const sid = "ses_0b3c5d7e9ffeBenchSession0001"
	t0 := int64(1788443295000)
	e := ocExport{Info: map[string]any{"id": sid, "slug": "bench", "projectID": "global", "directory": b.work,
		"title": "Bench session", "version": "1.18.33", "time": map[string]any{"created": t0, "updated": t0 + int64(turns)*2000}}}
	seq := 0
	id := func(prefix string) string { seq++; return fmt.Sprintf("%s_%012x%014d", prefix, t0+int64(seq), seq) }
	output := toolOutput(1500)
	for i := range turns {
		at := t0 + int64(i)*2000
		uid := id("msg")
		e.Messages = append(e.Messages, ocExportMsg{
			Info: map[string]any{"id": uid, "sessionID": sid, "role": "user", "time": map[string]any{"created": at},
				"agent": "build", "model": map[string]any{"providerID": "openai", "modelID": "gpt-5"}},
			Parts: []map[string]any{{"id": id("prt"), "sessionID": sid, "messageID": uid, "type": "text",
				"text": fmt.Sprintf("Step %d: read file %d and tell me what fails.", i, i)}},
		})
		aid := id("msg")
		last := i == turns-1
		times := map[string]any{"created": at + 100, "completed": at + 1900}
		state := map[string]any{"status": "completed", "input": map[string]any{"filePath": fmt.Sprintf("%s/src/file%d.go", b.work, i)},
			"output": output, "title": fmt.Sprintf("src/file%d.go", i), "metadata": map[string]any{}, "time": map[string]any{"start": at + 200, "end": at + 300}}
		tool, call := "read", fmt.Sprintf("call_%d", i)
		if last {
			delete(times, "completed")
			state = map[string]any{"status": "running", "input": taskArgs, "title": "Review the parser", "metadata": map[string]any{}, "time": map[string]any{"start": at + 200}}
			tool, call = "superagents_superagents_task", "call_fork"
		}
		info := map[string]any{"id": aid, "sessionID": sid, "parentID": uid, "role": "assistant", "mode": "build", "agent": "build",
			"path": map[string]any{"cwd": b.work, "root": b.work}, "cost": 0.001,
			"tokens":  map[string]any{"input": 10, "output": 5, "reasoning": 0, "cache": map[string]any{"write": 0, "read": 0}},
			"modelID": "gpt-5", "providerID": "openai", "time": times}
		parts := []map[string]any{
			{"id": id("prt"), "sessionID": sid, "messageID": aid, "type": "step-start"},
			{"id": id("prt"), "sessionID": sid, "messageID": aid, "type": "text", "text": fmt.Sprintf("Reading file %d.", i)},
			{"id": id("prt"), "sessionID": sid, "messageID": aid, "type": "tool", "tool": tool, "callID": call, "state": state},
		}
		if !last {
			info["finish"] = "tool-calls"
			parts = append(parts, map[string]any{"id": id("prt"), "sessionID": sid, "messageID": aid, "type": "step-finish", "reason": "tool-calls",
				"tokens": map[string]any{"input": 10, "output": 5, "reasoning": 0, "cache": map[string]any{"write": 0, "read": 0}}, "cost": 0.001})
		} else {
			// The step is still running: no step-finish yet, so the
			// parts number 12,500 with the one below.
			parts = append(parts, map[string]any{"id": id("prt"), "sessionID": sid, "messageID": aid, "type": "text", "text": "Forking a reviewer."})
		}
		e.Messages = append(e.Messages, ocExportMsg{Info: info, Parts: parts})
	}
	return e
}

// writeOpenCode writes the OpenCode session, through `opencode import`
// when the opencode binary is given; it returns the session's id and how
// it was written.
func (b *bench) writeOpenCode(opencode string, turns int) (string, string, error) {
	e := b.openCodeSession(turns)
	sid := e.Info["id"].(string)
	if opencode != "" {
		raw, err := json.Marshal(e)
		if err != nil {
			return "", "", err
		}
		file := filepath.Join(b.root, "opencode-export.json")
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			return "", "", err
		}
		c := exec.Command(opencode, "import", file)
		c.Dir, c.Env = b.work, b.env
		if out, err := c.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("opencode import: %v: %s", err, out)
		}
		v, _ := exec.Command(opencode, "--version").Output()
		return sid, "written by opencode import, opencode " + strings.TrimSpace(string(v)), nil
	}
	dir := filepath.Join(b.home, ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "opencode.db"))
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return "", "", err
	}
	defer tx.Rollback()
	for _, s := range []string{
		`CREATE TABLE project (id text PRIMARY KEY, name text, worktree text NOT NULL)`,
		`CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL)`,
		`CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)`,
		`CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)`,
		`CREATE INDEX message_session_idx ON message (session_id)`,
		`CREATE INDEX part_message_idx ON part (message_id)`,
		`CREATE INDEX part_session_idx ON part (session_id)`,
	} {
		if _, err := tx.Exec(s); err != nil {
			return "", "", err
		}
	}
	tm := e.Info["time"].(map[string]any)
	if _, err := tx.Exec(`INSERT INTO session VALUES (?, 'global', NULL, ?, ?, '1.18.33', ?, ?)`, sid, b.work, e.Info["title"], tm["created"], tm["updated"]); err != nil {
		return "", "", err
	}
	// OpenCode stores the message and part JSON without the ids it keeps
	// in columns.
	strip := func(m map[string]any, keys ...string) string {
		c := map[string]any{}
		for k, v := range m {
			if !slices.Contains(keys, k) {
				c[k] = v
			}
		}
		raw, _ := json.Marshal(c)
		return string(raw)
	}
	for _, m := range e.Messages {
		at := m.Info["time"].(map[string]any)["created"]
		if _, err := tx.Exec(`INSERT INTO message VALUES (?, ?, ?, ?, ?)`, m.Info["id"], sid, at, at, strip(m.Info, "id", "sessionID")); err != nil {
			return "", "", err
		}
		for _, p := range m.Parts {
			if _, err := tx.Exec(`INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)`, p["id"], m.Info["id"], sid, at, at, strip(p, "id", "sessionID", "messageID")); err != nil {
				return "", "", err
			}
		}
	}
	return sid, "written in OpenCode's schema (no opencode binary given)", tx.Commit()
}

// mcpForks measures fork: true over MCP on the host's conversation: the
// first fork of it (a new data directory, so the call imports it whole)
// and a fork of it again (a new server process on the same data
// directory, which has imported it already). Each is the time from the
// tools/call request to its answer.
func (b *bench) mcpForks(host string) (first, again []time.Duration, err error) {
	for range b.runs {
		data := b.dataDir("mcp")
		for i := range 2 {
			d, err := b.mcpFork(data, host)
			if err != nil {
				return nil, nil, err
			}
			if i == 0 {
				first = append(first, d)
			} else {
				again = append(again, d)
			}
		}
	}
	return first, again, nil
}

func (b *bench) mcpFork(data, host string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"--data-dir", data, "mcp", "--host", host, "--model", "offline"}
	if b.foreground {
		// Tasks in this process: no background server outlives the run.
		args = append(args, "--foreground")
	}
	c := exec.Command(b.bin, args...)
	c.Dir, c.Env = b.work, b.env
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
	if err != nil {
		return 0, err
	}
	defer sess.Close()
	t := time.Now()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "superagents_task", Arguments: taskArgs})
	d := time.Since(t)
	if err != nil {
		return 0, err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError || !strings.Contains(text, "starts with a digest of your") {
		return 0, fmt.Errorf("the fork did not carry the host conversation: %s", text)
	}
	return d, nil
}
