package config

import (
	"maps"
	"path/filepath"
	"slices"
	"time"
)

// MCP is the [mcp] section: the user's MCP servers, whose tools agents
// use as mcp__<server>__<tool>, and how long to wait for them.
//
//	[mcp]
//	tool_timeout = "2m"
//	[mcp.servers.github]
//	type = "http"
//	url = "https://api.githubcopilot.com/mcp/"
//	headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
//	[mcp.servers.fs]
//	command = "npx"
//	args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
//
// Package mcpclient also reads the same servers from .mcp.json files and
// checks them; this package only decodes them.
type MCP struct {
	// Servers are the servers by name.
	Servers map[string]MCPServer `toml:"servers"`
	// ToolTimeout bounds each tool call.
	ToolTimeout Duration `toml:"tool_timeout"`
	// StartupTimeout bounds a server's start and handshake.
	StartupTimeout Duration `toml:"startup_timeout"`
	// Host, for superagents mcp, names the agent host whose transcripts a
	// fork reads (claude-code, codex, opencode, or none); empty: the name
	// the client gives when it connects. The --host flag wins.
	Host string `toml:"host"`
}

// MCPServer is one server, as a .mcp.json entry describes it: a command
// (stdio) or a URL (type "http" or "sse").
// The json tags are those of a .mcp.json entry.
type MCPServer struct {
	Type     string            `toml:"type" json:"type"`
	Command  string            `toml:"command" json:"command"`
	Args     []string          `toml:"args" json:"args"`
	Env      map[string]string `toml:"env" json:"env"`
	URL      string            `toml:"url" json:"url"`
	Headers  map[string]string `toml:"headers" json:"headers"`
	Disabled bool              `toml:"disabled" json:"disabled"`

	// Origin is the file that defined the server.
	Origin string `toml:"-" json:"-"`
	// Project is set when that file is the project's, whose servers run
	// only in a trusted project.
	Project bool `toml:"-" json:"-"`
}

// MCP defaults.
const (
	DefaultMCPToolTimeout    = 2 * time.Minute
	DefaultMCPStartupTimeout = 30 * time.Second
)

// noteMCP records which file defined each MCP server and refuses settings
// a project must not make for itself.
func (c *Config) noteMCP(f *File, project bool) error {
	for _, name := range slices.Sorted(maps.Keys(c.MCP.Servers)) {
		if f.Line("mcp.servers."+name) == 0 {
			continue
		}
		s := c.MCP.Servers[name]
		s.Origin, s.Project = f.Path, project
		c.MCP.Servers[name] = s
	}
	if project && f.Has("trusted_projects") {
		return f.Errorf("trusted_projects", "only the user's configuration file may trust projects")
	}
	return nil
}

// Trusts reports whether trusted_projects names the directory.
func (c Config) Trusts(dir string) bool {
	dir = filepath.Clean(dir)
	return slices.ContainsFunc(c.TrustedProjects, func(p string) bool { return filepath.Clean(p) == dir })
}

// validateMCP checks the [mcp] section's own values; the servers are
// checked by package mcpclient, which reads them from .mcp.json files too.
func (c Config) validateMCP() []error {
	var errs []error
	if c.MCP.ToolTimeout.Duration <= 0 {
		errs = append(errs, &Error{Key: "mcp.tool_timeout", Msg: "must be more than 0"})
	}
	if c.MCP.StartupTimeout.Duration <= 0 {
		errs = append(errs, &Error{Key: "mcp.startup_timeout", Msg: "must be more than 0"})
	}
	switch c.MCP.Host {
	case "", "none", "claude-code", "codex", "opencode":
	default:
		errs = append(errs, &Error{Key: "mcp.host", Msg: "\"" + c.MCP.Host + "\" is not a host: use claude-code, codex, opencode or none"})
	}
	for _, p := range c.TrustedProjects {
		if !filepath.IsAbs(p) {
			errs = append(errs, &Error{Key: "trusted_projects", Msg: "\"" + p + "\" is not an absolute path"})
		}
	}
	return errs
}
