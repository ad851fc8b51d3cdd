package mcpserver

import (
	"cmp"
	"fmt"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// checkModel refuses to launch or resume a task of an agent that would
// run the offline model only because no key was found. A host starts its
// MCP servers with an environment of its own (Codex passes them HOME,
// PATH and a few more, not the user's keys), and the offline model's
// answers would come back as if they were a real sub-agent's, with no
// error anywhere. The offline model chosen on purpose (--model offline,
// model = "offline" in config.toml) or an agent whose profile names a
// model is fine.
func (s *Server) checkModel(agent string) error {
	cfg := s.rt.Config()
	if !cfg.Defaulted {
		return nil
	}
	profile, err := s.rt.Agents().Profile(agent)
	if err != nil {
		return nil // the launch reports the unknown agent
	}
	if cmp.Or(profile.Model, cfg.Model) != config.OfflineModel {
		return nil
	}
	return fmt.Errorf("%w: %s", sa.ErrInvalid, noKeyMessage())
}

// noKeyMessage says that no model key reached this server, and how to
// give one to it from each host.
func noKeyMessage() string {
	var keys []string
	for _, b := range config.Builtins() {
		if b.DefaultModel != "" && b.Provider.APIKeyEnv != "" {
			keys = append(keys, b.Provider.APIKeyEnv)
		}
	}
	first := keys[0]
	return fmt.Sprintf("superagents has no model for its sub-agents: none of %s is set in the environment of this MCP server, "+
		"so only the offline model (arithmetic, no real work) could answer, and the task was not launched. "+
		"Give the server a key: Claude Code: \"env\": {\"%s\": \"...\"} in the server's entry of .mcp.json (or claude mcp add -e %s=... superagents -- superagents mcp); "+
		"Codex: env_vars = [\"%s\"] in [mcp_servers.superagents] of config.toml (Codex passes its servers only a few variables); "+
		"OpenCode: \"environment\": {\"%s\": \"...\"} in the server's entry of opencode.json. "+
		"Or name a model in superagents' config.toml (model = \"provider/model\"), or choose the offline model on purpose with superagents mcp --model offline.",
		strings.Join(keys, ", "), first, first, first, first)
}
