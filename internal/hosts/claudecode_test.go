package hosts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/hosttest"
)

// TestClaudeCodeDeferredTools: with its default settings Claude Code
// (2.1.328) defers MCP tools: the first request offers its model
// ToolSearch and not superagents' tools, which the model loads with
// ToolSearch ("select:mcp__superagents__superagents_task,..."); then it
// can call them. (The other tests set ENABLE_TOOL_SEARCH=false, which
// offers them at once.)
func TestClaudeCodeDeferredTools(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), testLimit)
	defer cancel()
	sub := hosttest.NewSubModel(t, fact)
	h := newHost(t, hosttest.ClaudeCode, hosttest.Options{Script: script, Sub: sub, DeferTools: true})
	if _, r := runHost(ctx, t, h, cmdLaunch+": count the files in a sub-agent.", ""); r.Err != nil {
		t.Fatalf("run failed\n%s\nwhat the host sent its model:\n%s", r, h.Model.Dump())
	}
	convs := h.Model.Convs()
	first := convs[0]
	if first.Tool("ToolSearch") == "" || first.Tool("superagents_task") != "" {
		t.Errorf("the first request offers ToolSearch %v, superagents_task %v: want ToolSearch only (tools: %v)",
			first.Tool("ToolSearch") != "", first.Tool("superagents_task") != "", first.Tools)
	}
	searchedFirst := false
	for _, it := range convs[len(convs)-1].Items {
		if it.Kind == hosttest.Call {
			searchedFirst = strings.HasSuffix(it.Name, "ToolSearch")
			break
		}
	}
	if !searchedFirst {
		t.Errorf("the model did not load the tools with ToolSearch first\nwhat the host sent its model:\n%s", h.Model.Dump())
	}
	if list := listTasks(ctx, t, h); len(list) != 1 {
		t.Errorf("after loading the tools with ToolSearch, want one task launched, got %d\nwhat the host sent its model:\n%s", len(list), h.Model.Dump())
	}
}
