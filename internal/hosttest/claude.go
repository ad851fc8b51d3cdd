package hosttest

import (
	"path/filepath"
	"testing"
)

// ClaudeModel is the model Claude Code is told to use; the scripted
// server answers to any name.
const ClaudeModel = "claude-sonnet-4-5"

// claudeCode configures Claude Code (seen with 2.1.328): the server in an
// --mcp-config file (--strict-mcp-config: no other), its tools allowed
// with --allowedTools mcp__superagents, the model at ANTHROPIC_BASE_URL.
// The host's key comes from an apiKeyHelper in settings.json rather than
// ANTHROPIC_API_KEY, so that it does not reach superagents through the
// environment Claude Code hands its servers. Telemetry, error reports,
// update checks and other non-essential traffic are off.
// ENABLE_TOOL_SEARCH=false turns off the deferral of MCP tools (the model
// then sees them at once) unless o.DeferTools.
func (h *Host) claudeCode(t testing.TB, o Options) {
	t.Helper()
	writeJSON(t, filepath.Join(h.Home, ".claude", "settings.json"), map[string]any{
		"apiKeyHelper": "echo host-model-key",
	})
	mcp := filepath.Join(h.Home, "mcp.json")
	writeJSON(t, mcp, map[string]any{"mcpServers": map[string]any{
		"superagents": map[string]any{"type": "stdio", "command": h.superagents, "args": []string{"mcp"}, "env": h.serverEnvJSON()},
	}})
	h.env = append(h.env,
		"ANTHROPIC_BASE_URL="+h.Model.BaseURL(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_ENABLE_TELEMETRY=0",
	)
	if !o.DeferTools {
		h.env = append(h.env, "ENABLE_TOOL_SEARCH=false")
	}
	h.args = func(prompt, session string) []string {
		args := []string{"-p", prompt, "--output-format", "json", "--model", ClaudeModel,
			"--mcp-config", mcp, "--strict-mcp-config", "--allowedTools", "mcp__superagents"}
		if session != "" {
			args = append(args, "--resume", session)
		}
		return args
	}
	h.session = func(stdout string) string {
		id := ""
		jsonLines(stdout, func(m map[string]any) {
			if s, ok := m["session_id"].(string); ok {
				id = s
			}
		})
		return id
	}
}
