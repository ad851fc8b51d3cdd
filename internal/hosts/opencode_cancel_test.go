package hosts_test

import (
	"testing"
	"time"

	"github.com/superagents/superagents/internal/hosttest"
)

// TestOpenCodeWakeCancelled: a batch that only a cancel by the user
// ended wakes no OpenCode session (the user chose it); a later batch of
// the same session that ends by itself does (OpenCode 1.18.33, with the
// plugin installed by `superagents install opencode --global`).
func TestOpenCodeWakeCancelled(t *testing.T) {
	ctx, h, sub, srv := pluggedOpenCode(t)

	sub.Hold()
	c, r := h.RunAttached(ctx, srv.URL, "SESSION-C LAUNCH 1 AS C", "")
	if r.Err != nil || c == "" {
		t.Fatalf("opencode run --attach: %s\n%s", r, h.Model.Dump())
	}
	task, ok := tasksByDescription(t, ctx, h)["C-1"]
	if !ok {
		t.Fatalf("no task C-1\n%s", h.Model.Dump())
	}
	before := len(sessionConvs(h, "C"))
	if r := h.Superagents(ctx, "task", "cancel", task.ID); r.Err != nil {
		t.Fatalf("superagents task cancel: %s", r)
	}
	waitTasksEnded(t, ctx, h, "C-1")
	if got := tasksByDescription(t, ctx, h)["C-1"].Status; got != "cancelled" {
		t.Fatalf("task C-1 is %s, want cancelled", got)
	}
	time.Sleep(4 * time.Second)
	if n := len(sessionConvs(h, "C")); n != before {
		t.Fatalf("a cancelled task woke the session: %d new requests\n%s", n-before, h.Model.Dump())
	}

	// The plugin is there: a task that ends by itself wakes the session.
	sub.Release()
	if _, r := h.RunAttached(ctx, srv.URL, "LAUNCH 1 AS D", c); r.Err != nil {
		t.Fatalf("opencode run --attach --session: %s", r)
	}
	before = len(sessionConvs(h, "C"))
	waitTasksEnded(t, ctx, h, "D-1")
	if convs := waitConvs(h, "C", before+1, 30*time.Second); len(convs) <= before {
		t.Fatalf("the session was not woken in 30s after D-1 ended\n%s\nserver log:\n%s", h.Model.Dump(), hosttest.Trim(srv.Log(), 4000))
	}
}
