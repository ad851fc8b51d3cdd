package hosts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/hosttest"
)

// The superagents plugin of OpenCode, installed by `superagents install
// opencode --global`, with the real OpenCode (1.18.33: `opencode serve`,
// turns run by `opencode run --attach`). OpenCode gives an MCP server no
// way to start a turn: the plugin does, with client.session.prompt, when a
// batch of a session's tasks has ended.

// wakeHeader starts the notices the plugin prompts a session with (the
// words of the MCP answers).
const wakeHeader = "[superagents] Your background tasks since your last superagents call"

// replyWoken is the model's reply to a notice.
const replyWoken = "Read the tasks' results."

// launchCmd: "LAUNCH n AS X" has the model launch n tasks, described
// X-1 ... X-n, one call after the other, then end its turn.
var launchCmd = regexp.MustCompile(`LAUNCH (\d+) AS (\w+)`)

// wakeScript is OpenCode's model in these tests.
func wakeScript(c hosttest.Conv) hosttest.Action {
	if len(c.Tools) == 0 {
		return hosttest.Action{Text: "A conversation"} // OpenCode's title request
	}
	// A notice alone wakes; a message that carries one (the plugin adds
	// it) is answered as its own words ask.
	if strings.Contains(c.LastUser(), wakeHeader) && c.Last().Kind == hosttest.User && !launchCmd.MatchString(c.LastUser()) {
		return hosttest.Action{Text: replyWoken}
	}
	m := launchCmd.FindStringSubmatch(c.LastUser())
	if m == nil || c.Last().Kind != hosttest.User && c.Last().Kind != hosttest.ToolResult {
		return hosttest.Action{Text: "OK."}
	}
	n, _ := strconv.Atoi(m[1])
	done := 0
	for i := len(c.Items) - 1; i >= 0 && c.Items[i].Kind != hosttest.User; i-- {
		if c.Items[i].Kind == hosttest.ToolResult {
			done++
		}
	}
	if done >= n {
		return hosttest.Action{Text: "Launched."}
	}
	tool := c.Tool("superagents_task")
	if tool == "" {
		return hosttest.Action{Text: "I have no tool superagents_task."}
	}
	return hosttest.Action{Tool: tool, Input: map[string]any{
		"description": fmt.Sprintf("%s-%d", m[2], done+1), "prompt": "Count to three.", "agent": "general",
	}}
}

// sessionConvs are the requests (with tools: turns, not titles) of the
// session whose first prompt names marker.
func sessionConvs(h *hosttest.Host, marker string) []hosttest.Conv {
	var out []hosttest.Conv
	for _, c := range h.Model.Convs() {
		if len(c.Tools) == 0 {
			continue
		}
		for _, it := range c.Items {
			if it.Kind == hosttest.User {
				if strings.Contains(it.Text, "SESSION-"+marker+" ") {
					out = append(out, c)
				}
				break
			}
		}
	}
	return out
}

// waitConvs waits until the session has n requests, or d passes.
func waitConvs(h *hosttest.Host, marker string, n int, d time.Duration) []hosttest.Conv {
	deadline := time.Now().Add(d)
	for {
		convs := sessionConvs(h, marker)
		if len(convs) >= n || time.Now().After(deadline) {
			return convs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type taskRow struct {
	ID          string     `json:"id"`
	Description string     `json:"description"`
	Status      string     `json:"status"`
	CompletedAt *time.Time `json:"completed_at"`
}

// tasksByDescription reads superagents' tasks.
func tasksByDescription(t *testing.T, ctx context.Context, h *hosttest.Host) map[string]taskRow {
	t.Helper()
	r := h.Superagents(ctx, "tasks", "--json")
	if r.Err != nil {
		t.Fatalf("superagents tasks: %s", r)
	}
	var rows []taskRow
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("superagents tasks --json: %v\n%s", err, r.Stdout)
	}
	out := map[string]taskRow{}
	for _, row := range rows {
		out[row.Description] = row
	}
	return out
}

// waitTasksEnded waits until the tasks described so have ended, and returns
// when the last one did.
func waitTasksEnded(t *testing.T, ctx context.Context, h *hosttest.Host, descriptions ...string) time.Time {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows := tasksByDescription(t, ctx, h)
		var last time.Time
		ended := 0
		for _, d := range descriptions {
			if r, ok := rows[d]; ok && r.CompletedAt != nil {
				ended++
				if r.CompletedAt.After(last) {
					last = *r.CompletedAt
				}
			}
		}
		if ended == len(descriptions) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks %v did not end in 60s: %+v", descriptions, rows)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pluggedOpenCode is OpenCode serving with superagents installed by
// `superagents install opencode --global` (its plugin file checked), its
// model scripted by wakeScript, and sub the sub-agents' model; ctx ends
// with the test, or after 5 minutes.
func pluggedOpenCode(t *testing.T) (ctx context.Context, h *hosttest.Host, sub *hosttest.SubModel, srv *hosttest.OpenCodeServer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	sub = hosttest.NewSubModel(t)
	h = newHost(t, hosttest.OpenCode, hosttest.Options{Script: wakeScript, Sub: sub})
	if r := h.Superagents(ctx, "install", "opencode", "--global"); r.Err != nil {
		t.Fatalf("superagents install opencode --global: %s", r)
	}
	if _, err := os.Stat(filepath.Join(h.Home, ".config", "opencode", "plugin", "superagents.ts")); err != nil {
		t.Fatalf("install wrote no plugin: %v", err)
	}
	return ctx, h, sub, h.ServeOpenCode(t)
}

// TestOpenCodeWake: a batch of two tasks that ends after the turn that
// launched them wakes that session once, with both notices, and no other
// session; a task that ends while OpenCode is not running starts no turn
// when OpenCode starts again, and is told once, with the next message.
func TestOpenCodeWake(t *testing.T) {
	ctx, h, sub, srv := pluggedOpenCode(t)

	sub.Hold()
	a, r := h.RunAttached(ctx, srv.URL, "SESSION-A LAUNCH 2 AS A", "")
	if r.Err != nil || a == "" {
		t.Fatalf("opencode run --attach: %s\n%s", r, h.Model.Dump())
	}
	if _, r := h.RunAttached(ctx, srv.URL, "SESSION-B say hello", ""); r.Err != nil {
		t.Fatalf("opencode run --attach: %s", r)
	}
	before, beforeB := len(sessionConvs(h, "A")), len(sessionConvs(h, "B"))
	sub.Release()
	ended := waitTasksEnded(t, ctx, h, "A-1", "A-2")
	convs := waitConvs(h, "A", before+1, 30*time.Second)
	if len(convs) <= before {
		t.Fatalf("the session was not woken in 30s after its tasks ended\n%s\nserver log:\n%s", h.Model.Dump(), hosttest.Trim(srv.Log(), 4000))
	}
	wake := convs[before]
	t.Logf("task end to OpenCode's model request: %v", wake.Req.Received.Sub(ended).Round(time.Millisecond))
	if last := wake.LastUser(); !strings.Contains(last, wakeHeader) || !strings.Contains(last, `"A-1"`) || !strings.Contains(last, `"A-2"`) {
		t.Errorf("the wake's message does not carry both notices:\n%s", last)
	}
	time.Sleep(3 * time.Second)
	if n := len(sessionConvs(h, "A")); n != before+1 {
		t.Errorf("the session had %d requests after its tasks ended, want 1 (one wake, its reply)\n%s", n-before, h.Model.Dump())
	}
	if n := len(sessionConvs(h, "B")); n != beforeB {
		t.Errorf("another session was woken: %d new requests\n%s", n-beforeB, h.Model.Dump())
	}

	// A task that ends while OpenCode is not running.
	sub.Hold()
	if _, r := h.RunAttached(ctx, srv.URL, "LAUNCH 1 AS R", a); r.Err != nil {
		t.Fatalf("opencode run --attach --session: %s", r)
	}
	srv.Stop()
	sub.Release()
	waitTasksEnded(t, ctx, h, "R-1")
	before = len(sessionConvs(h, "A"))
	srv = h.ServeOpenCode(t)
	time.Sleep(3 * time.Second)
	if n := len(sessionConvs(h, "A")); n != before {
		t.Fatalf("OpenCode started a turn by itself on restart (%d requests)\n%s", n-before, h.Model.Dump())
	}
	if _, r := h.RunAttached(ctx, srv.URL, "What happened?", a); r.Err != nil {
		t.Fatalf("opencode run --attach --session: %s", r)
	}
	convs = sessionConvs(h, "A")
	if len(convs) != before+1 {
		t.Fatalf("the message after the restart made %d requests, want 1\n%s", len(convs)-before, h.Model.Dump())
	}
	// One notice (its visible line says ✓ Agent "R-1" finished), once.
	if got := strings.Count(convs[before].LastUser(), `Agent "R-1" finished`); got != 1 {
		t.Errorf("the message after the restart carries the notice of the task that ended meanwhile %d times, want once:\n%s", got, convs[before].LastUser())
	}
}
