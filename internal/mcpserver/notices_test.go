package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// splitNotices parts a tool result into the notices at its top (if any)
// and the result itself.
func splitNotices(text string) (notices, rest string) {
	const header = "[superagents] Your background tasks since your last superagents call (endings, and questions waiting for your answer):"
	if !strings.HasPrefix(text, header) {
		return "", text
	}
	notices, rest, _ = strings.Cut(text, "\n\n---\n\n")
	return notices, rest
}

// TestNoticesRideOnToolResults: a task ends while the host is idle; the
// host's next call of any of the tools starts with the notice, once; the
// call after does not repeat it. Hosts that do not show logging
// notifications to their model learn of the ending this way.
func TestNoticesRideOnToolResults(t *testing.T) {
	for _, transport := range []string{"in-memory", "streamable-http"} {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			host := h.connect(transport, "claude-code", "2.0")
			first := host.launch(map[string]any{"description": "first", "prompt": "What is 2+2?"})
			// The first task may have ended before the second launch answers:
			// its notice then rides on that result.
			launched, data := host.ok("superagents_task", map[string]any{"agent": "general", "description": "second", "prompt": "What is 3+3?"})
			second, _ := data["id"].(string)
			early, _ := splitNotices(launched)
			if strings.Contains(early, `Agent "second"`) {
				t.Fatalf("the second task's notice came with its own launch:\n%s", launched)
			}
			// Wait for both ends without reading their results.
			waitEnded(t, h.store, first, second)
			// Any tool, even one that fails: here a cancel of an ended task.
			text := host.fails("superagents_cancel", map[string]any{"task_id": first})
			notices, rest := splitNotices(text)
			if !strings.Contains(rest, "already") {
				t.Fatalf("cancel of an ended task = %q", text)
			}
			notices = early + notices
			// Both endings, each once, with their hints.
			if strings.Count(notices, `Agent "first"`) != 1 || strings.Count(notices, `Agent "second"`) != 1 ||
				!strings.Contains(notices, `superagents_output (task_id "`+first+`")`) {
				t.Fatalf("notices = %q; want both endings with their hints", notices)
			}
			// Each is delivered once.
			text, _ = host.ok("superagents_list", map[string]any{})
			if notices, _ := splitNotices(text); notices != "" {
				t.Fatalf("the notices came again:\n%s", text)
			}
			if !strings.Contains(text, "result unread") {
				t.Fatalf("list does not mark the unread results:\n%s", text)
			}
			host.ok("superagents_output", map[string]any{"task_id": first})
			text, _ = host.ok("superagents_list", map[string]any{})
			if strings.Count(text, "result unread") != 1 {
				t.Fatalf("after reading one result, list:\n%s", text)
			}
		})
	}
}

// waitEnded waits until the tasks have ended, without reading their
// results.
func waitEnded(t *testing.T, st sa.Store, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, id := range ids {
		for {
			task, err := st.Task(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if !task.Status.Active() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s did not end", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestNoticesFollowTheHistory: the notices on a result are the
// notifications the session's history gained since the last result: one
// stored before a clear of the session is not delivered, one after it
// is, once.
func TestNoticesFollowTheHistory(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fakeModel)
	host := h.connect("in-memory", "claude-code", "2.0")
	id := host.launch(map[string]any{"description": "first", "prompt": "What is 2+2?"})
	waitEnded(t, h.store, id)
	if text, _ := host.ok("superagents_list", map[string]any{}); !strings.Contains(text, `Agent "first"`) {
		t.Fatalf("the first ending was not delivered:\n%s", text)
	}
	task, err := h.store.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	note := func(text string) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart(text)}}
	}
	if _, err := h.store.Append(ctx, task.ParentSessionID, note("hidden by the clear"), sa.ClearMessage(), note("after the clear")); err != nil {
		t.Fatal(err)
	}
	text, _ := host.ok("superagents_list", map[string]any{})
	if notices, _ := splitNotices(text); !strings.Contains(notices, "after the clear") || strings.Contains(notices, "hidden") ||
		strings.Contains(notices, `Agent "first"`) {
		t.Fatalf("notices = %q, want only the one after the clear", notices)
	}
	if text, _ := host.ok("superagents_list", map[string]any{}); strings.HasPrefix(text, "[superagents]") {
		t.Fatalf("the notices came again:\n%s", text)
	}
}
