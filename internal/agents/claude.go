package agents

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Claude Code's profile sources, between the built-in profiles and ours.
const (
	ClaudeUser    SourceKind = "claude-user"
	ClaudeProject SourceKind = "claude-project"
)

// ClaudeProjectDir returns Claude Code's project subagent directory.
func ClaudeProjectDir(workspace string) string {
	return filepath.Join(workspace, ".claude", "agents")
}

// ClaudeUserDir returns Claude Code's user subagent directory.
func ClaudeUserDir(home string) string {
	return filepath.Join(home, ".claude", "agents")
}

// ourToolName matches names and globs of our tools, MCP tools included.
var ourToolName = regexp.MustCompile(`^[a-z0-9_*?-]+$|^mcp__`)

// claudeTools maps Claude Code's tool names to ours; its tools we do not
// have are left out.
var claudeTools = map[string]string{
	"Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "edit",
	"Bash": "bash", "Glob": "glob", "Grep": "grep", "LS": "ls",
}

// ParseClaude reads a Claude Code subagent file: the same front matter
// (name, description, tools, model) and body. Keys only Claude Code knows
// (color, permissionMode...) are ignored; its tool names (Read, Grep...)
// become ours, and tools we do not have are dropped (MCP tools, written
// mcp__server__tool in both, are kept); a model alias (sonnet, opus,
// haiku, inherit) means the default model, as it names no provider, and
// a full Claude model name is Anthropic's; maxTurns is max_steps.
func ParseClaude(path string, data []byte) (Profile, error) {
	p := &parser{path: path, claude: true}
	prof := p.parse(data)
	if len(p.errs) > 0 {
		return Profile{}, errors.Join(p.errs...)
	}
	switch {
	case strings.HasPrefix(prof.Model, "claude-"):
		prof.Model = "anthropic/" + prof.Model
	case !strings.Contains(prof.Model, "/"):
		prof.Model = ""
	}
	if prof.Tools != nil {
		tools := []string{}
		for _, t := range prof.Tools {
			if ours, ok := claudeTools[t]; ok {
				t = ours
			} else if !ourToolName.MatchString(t) {
				continue
			}
			if !slices.Contains(tools, t) {
				tools = append(tools, t)
			}
		}
		prof.Tools = tools
	}
	return prof, nil
}
