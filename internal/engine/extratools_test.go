package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tools"
)

// TestExtraTools: tools from outside (the user's MCP servers) reach the
// model next to the built-ins; profiles select them by glob and a
// read_only permission keeps only the read-only ones.
func TestExtraTools(t *testing.T) {
	extra := func(t *testing.T) []tools.Tool {
		var out []tools.Tool
		for _, d := range []struct {
			name     string
			readOnly bool
		}{{"mcp__github__get_issue", true}, {"mcp__github__create_issue", false}, {"mcp__db__query", true}} {
			tl, err := tools.New(d.name, "An MCP tool.", d.readOnly, func(context.Context, struct{}) (tools.Result, error) {
				return tools.Result{Output: "ok"}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tl)
		}
		return out
	}
	tests := []struct {
		name, agent, config, profile string
		want                         []string
	}{
		{"every tool by default", "general", "", "",
			[]string{"bash", "edit", "glob", "grep", "ls", "mcp__db__query", "mcp__github__create_issue", "mcp__github__get_issue", "read", "write"}},
		{"a profile's glob", "triage", "", "---\ndescription: Triage.\ntools: [read, \"mcp__github__*\"]\n---\nTriage issues.\n",
			[]string{"mcp__github__create_issue", "mcp__github__get_issue", "read"}},
		{"read_only keeps the read-only MCP tools", "general", "[permissions]\nread_only = true\n", "",
			[]string{"glob", "grep", "ls", "mcp__db__query", "mcp__github__get_issue", "read"}},
		{"a profile without them", "explore", "", "", []string{"glob", "grep", "ls", "read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			srv.Push(llmtest.Reply{Text: "ok"})
			eng, ws := newEngine(t, tt.config, map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.BaseURL()})
			if tt.profile != "" {
				dir := filepath.Join(ws, ".superagents", "agents")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, tt.agent+".md"), []byte(tt.profile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The engine again, with the profile written and the tools
			// from outside, as the command line opens it.
			reopened, problems, err := engine.New(engine.Options{Store: eng.Store, Config: eng.Config, Workspace: ws, AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)},
				ExtraTools: func(context.Context, []string) ([]tools.Tool, error) { return extra(t), nil }})
			if err != nil || len(problems) > 0 {
				t.Fatal(err, problems)
			}
			t.Cleanup(func() { reopened.Close() })
			eng = reopened
			s := newSession(t, eng, tt.agent, "anthropic/claude-test")
			if _, err := eng.Run(context.Background(), s.ID, engine.TurnOptions{}, engine.UserMessage("hi")); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range body.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Fatalf("tools sent = %v, want %v", names, tt.want)
			}
		})
	}
}
