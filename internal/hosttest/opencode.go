package hosttest

import (
	"path/filepath"
	"testing"
)

// OpenCodeModel is the model OpenCode is told to use: provider/model.
const OpenCodeModel = "scripted/scripted-model"

// openCode configures OpenCode (seen with 1.18.33): opencode.json in
// $XDG_CONFIG_HOME/opencode with an OpenAI-compatible provider
// (@ai-sdk/openai-compatible, bundled) at the scripted server, and
// superagents as a local MCP server with its environment. The model
// catalogue fetch, default plugins (installed from npm otherwise),
// LSP downloads, updates and sharing are off.
func (h *Host) openCode(t testing.TB) {
	t.Helper()
	writeJSON(t, filepath.Join(h.Home, ".config", "opencode", "opencode.json"), map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		"model":      OpenCodeModel,
		"provider": map[string]any{"scripted": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Scripted",
			"options": map[string]any{"baseURL": h.Model.BaseURL(), "apiKey": "host-model-key"},
			"models":  map[string]any{"scripted-model": map[string]any{"name": "Scripted model", "tool_call": true}},
		}},
		"mcp": map[string]any{"superagents": map[string]any{
			"type": "local", "command": []string{h.superagents, "mcp"}, "enabled": true,
			"environment": h.serverEnvJSON(),
		}},
	})
	// OpenCode installs @opencode-ai/plugin into its configuration folder
	// from npm: its npm client is pointed at a closed port, offline.
	writeFile(t, filepath.Join(h.Home, ".npmrc"), "registry=http://127.0.0.1:9/\noffline=true\nfetch-retries=0\n")
	h.env = append(h.env,
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_offline=true",
		"XDG_CONFIG_HOME="+filepath.Join(h.Home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(h.Home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(h.Home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(h.Home, ".local", "state"),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_PURE=1",
	)
	h.args = func(prompt, session string) []string {
		args := []string{"run", "--format", "json", "--model", OpenCodeModel}
		if session != "" {
			args = append(args, "--session", session)
		}
		return append(args, prompt)
	}
	h.session = func(stdout string) string {
		id := ""
		jsonLines(stdout, func(m map[string]any) {
			if s, ok := m["sessionID"].(string); ok && id == "" {
				id = s
			}
		})
		return id
	}
}
