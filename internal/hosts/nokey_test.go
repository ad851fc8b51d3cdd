package hosts_test

import (
	"context"
	"testing"

	"github.com/superagents/superagents/internal/hosttest"
)

// TestHostsServerWithoutKey: a server given no provider key and no model
// (as `codex mcp add superagents -- superagents mcp` gives one, Codex
// passing its servers only a few variables) refuses a launch with an error
// that names the missing key, and that error reaches the host's model; no
// task runs on a stand-in model.
func TestHostsServerWithoutKey(t *testing.T) {
	for _, hn := range hostNames {
		t.Run(hn.host, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), testLimit)
			defer cancel()
			h := newHost(t, hn.host, hosttest.Options{Script: script})
			if _, r := runHost(ctx, t, h, cmdLaunch+": count the files in a sub-agent.", ""); r.Err != nil {
				t.Fatalf("run failed\n%s\nwhat the host sent its model:\n%s", r, h.Model.Dump())
			}
			answer := resultOf(resultsSince(h, 0), "superagents_task")
			t.Logf("superagents_task without a key: %s", hosttest.Trim(answer, 600))
			if !shows(answer, "ANTHROPIC_API_KEY") {
				t.Errorf("the superagents_task result the host's model got does not name the missing key ANTHROPIC_API_KEY:\n%s\nwhat the host sent its model:\n%s", hosttest.Trim(answer, 2000), h.Model.Dump())
			}
			if list := listTasks(ctx, t, h); len(list) != 0 {
				t.Errorf("a server without a key launched %d task(s): %+v", len(list), list)
			}
		})
	}
}
