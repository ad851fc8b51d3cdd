package agents

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The files follow Claude Code's subagent format (its "Subagents"
// documentation): YAML front matter with name, description, tools as a
// comma-separated string of its tool names, model as an alias (sonnet,
// opus, haiku, inherit) or a full model name, plus keys of its own
// (color, permissionMode, maxTurns...), then the system prompt.
func TestParseClaude(t *testing.T) {
	tests := []struct {
		name, file string
		want       Profile
	}{
		{"reviewer", "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: cyan\npermissionMode: plan\n---\nReview carefully.\n",
			Profile{Name: "code-reviewer", Description: "Reviews code.", Tools: []string{"read", "grep", "glob", "bash"}, Prompt: "Review carefully."}},
		{"full model name, list of tools, MCP and unknown tools", "---\nname: fixer\ndescription: Fixes.\ntools: [Edit, MultiEdit, WebFetch, \"Agent(explore, plan)\", mcp__github__get_issue]\nmodel: claude-opus-4-5-20251101\nmaxTurns: 7\n---\nFix it.\n",
			Profile{Name: "fixer", Description: "Fixes.", Model: "anthropic/claude-opus-4-5-20251101", Tools: []string{"edit", "mcp__github__get_issue"}, MaxSteps: 7, Prompt: "Fix it."}},
		{"inherit, every tool", "---\nname: helper\ndescription: Helps.\nmodel: inherit\n---\nHelp.\n",
			Profile{Name: "helper", Description: "Helps.", Prompt: "Help."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseClaude("x.md", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want.Name || got.Description != tt.want.Description || got.Model != tt.want.Model ||
				!slices.Equal(got.Tools, tt.want.Tools) || (got.Tools == nil) != (tt.want.Tools == nil) || got.MaxSteps != tt.want.MaxSteps || got.Prompt != tt.want.Prompt {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := ParseClaude("x.md", []byte("---\nname: x\n---\nno description\n")); err == nil {
		t.Fatal("a file without a description loads")
	}
}

// TestClaudeDirs: Claude Code's profiles load, and ours win on a name
// clash.
func TestClaudeDirs(t *testing.T) {
	root := t.TempDir()
	dirs := Dirs{
		Project:       filepath.Join(root, "ws", ".superagents", "agents"),
		ClaudeProject: filepath.Join(root, "ws", ".claude", "agents"),
		ClaudeUser:    filepath.Join(root, "home", ".claude", "agents"),
	}
	write := func(dir, name, body string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dirs.ClaudeUser, "a.md", "---\nname: tester\ndescription: From Claude user.\n---\nTest.\n")
	write(dirs.ClaudeProject, "b.md", "---\nname: reviewer\ndescription: From Claude project.\ncolor: red\n---\nReview.\n")
	write(dirs.Project, "reviewer.md", "---\ndescription: Ours.\n---\nOurs.\n")
	c, problems := Load(dirs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	tester, _ := c.Get("tester")
	reviewer, _ := c.Get("reviewer")
	if tester.Source.Kind != ClaudeUser || reviewer.Description != "Ours." || len(reviewer.Overrides) != 1 || reviewer.Overrides[0].Kind != ClaudeProject {
		t.Fatalf("tester %+v, reviewer %+v", tester.Source, reviewer)
	}
}
