package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Claude Code is set up with its own command, `claude mcp add` and
// `claude mcp remove` (seen with 2.1.328): it keeps its configuration in
// ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json), a file it rewrites
// itself while it runs. The user's servers are under mcpServers there,
// those of one project (scope local) under projects[DIR].mcpServers,
// where DIR is the project's git root, or the directory when there is
// none.

// claudeEntry is the server entry `claude mcp add superagents -- CMD mcp`
// writes, as Claude Code 2.1.328 writes it.
func claudeEntry() map[string]any {
	return map[string]any{"type": "stdio", "command": superagentsCommand(), "args": []any{"mcp"}, "env": map[string]any{}}
}

// claudeConfigFile is where Claude Code keeps its MCP servers.
func (a *app) claudeConfigFile() (string, error) {
	if dir := a.env.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, ".claude.json"), nil
	}
	home, err := a.home()
	if err != nil {
		return "", fmt.Errorf("cannot find Claude Code's configuration: set HOME or CLAUDE_CONFIG_DIR (%w)", err)
	}
	return filepath.Join(home, ".claude.json"), nil
}

// home is the user's home directory.
func (a *app) home() (string, error) {
	if h := a.env.Getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// claudeProject is the directory Claude Code files a project's own
// servers under: the git root of dir, or dir.
func claudeProject(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// claudeServer reads the superagents entry of a scope (nil when there is
// none) from Claude Code's configuration.
func claudeServer(path, scope, dir string) (map[string]any, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(src, &cfg); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): fix it, and run this again", path, err)
	}
	if scope == "user" {
		return cfg.MCPServers["superagents"], nil
	}
	return cfg.Projects[claudeProject(dir)].MCPServers["superagents"], nil
}

func (a *app) claudeCodeChanges(global, uninstall bool) ([]change, error) {
	scope, where := "local", "this project"
	if global {
		scope, where = "user", "all your projects"
	}
	ws, err := a.workspaceDir()
	if err != nil {
		return nil, err
	}
	path, err := a.claudeConfigFile()
	if err != nil {
		return nil, err
	}
	got, err := claudeServer(path, scope, ws)
	if err != nil {
		return nil, err
	}
	if !uninstall {
		if got != nil {
			return []change{{note: true, what: "Claude Code has an MCP server superagents (scope " + scope + ") already: kept as it is."}}, nil
		}
		return []change{{
			run: []string{"claude", "mcp", "add", "--scope", scope, "superagents", "--", superagentsCommand(), "mcp"}, dir: ws,
			what: fmt.Sprintf("add the MCP server superagents to Claude Code, for %s: claude mcp add --scope %s superagents -- %s mcp", where, scope, superagentsCommand()),
		}}, nil
	}
	switch {
	case got == nil:
		return nil, nil
	case !sameJSON(got, claudeEntry()):
		return []change{{note: true, what: "Claude Code's MCP server superagents (scope " + scope + ") is not the one install adds: left as it is."}}, nil
	}
	return []change{{
		run: []string{"claude", "mcp", "remove", "--scope", scope, "superagents"}, dir: ws,
		what: fmt.Sprintf("remove the MCP server superagents from Claude Code, for %s: claude mcp remove --scope %s superagents", where, scope),
	}}, nil
}

// sameJSON tells whether two values are the same once written as JSON.
func sameJSON(a, b any) bool {
	var x, y any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &x) //nolint:errcheck // marshalled just now
	json.Unmarshal(jb, &y) //nolint:errcheck // marshalled just now
	return reflect.DeepEqual(x, y)
}

// hostCommands name, for an error, the host each command belongs to.
var hostCommands = map[string]string{"claude": "Claude Code"}

// runHost runs a host's own command of a change.
func (a *app) runHost(c change) error {
	bin, err := exec.LookPath(c.run[0])
	if err != nil {
		return fmt.Errorf("%s's command %s is not on PATH: install %s, or set up the server by hand as docs/hosts.md says (%s)",
			hostCommands[c.run[0]], c.run[0], hostCommands[c.run[0]], strings.Join(c.run, " "))
	}
	cmd := exec.Command(bin, c.run[1:]...)
	cmd.Dir, cmd.Env = c.dir, a.env.Environ
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(c.run, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Codex reads its MCP servers from config.toml in CODEX_HOME (~/.codex)
// only: a project's .codex/config.toml counts only once the project is
// trusted, and `codex mcp add` (0.169.0) sets neither env_vars nor the
// tools' approval. install appends a table of its own to the file, as
// text, so that the rest (comments, order) stays byte for byte, and
// uninstall removes that very table.

// codexServer is the table install adds.
type codexServer struct {
	Command  string   `toml:"command"`
	Args     []string `toml:"args"`
	EnvVars  []string `toml:"env_vars"`
	Approval string   `toml:"default_tools_approval_mode"`
}

// codexEnvVars are the variables of Codex's environment superagents
// needs (Codex hands a server only HOME, PATH, LANG and a few more): the
// providers' keys, where the hosts' and superagents' files are.
var codexEnvVars = []string{
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
	"CODEX_HOME", "SUPERAGENTS_DATA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
}

// codexTable is the text install appends to Codex's config.toml; its
// comment says when install created the file, which uninstall then
// removes.
func codexTable(created bool) ([]byte, error) {
	body, err := toml.Marshal(codexServer{Command: superagentsCommand(), Args: []string{"mcp"}, EnvVars: codexEnvVars, Approval: "approve"})
	if err != nil {
		return nil, err
	}
	comment := "# Added by superagents install codex; superagents uninstall codex removes it.\n"
	if created {
		comment = "# Added by superagents install codex, with this file; superagents uninstall codex removes them.\n"
	}
	return append([]byte(comment+"[mcp_servers.superagents]\n"), body...), nil
}

func (a *app) codexConfigFile() (string, error) {
	if dir := a.env.Getenv("CODEX_HOME"); dir != "" {
		return filepath.Join(dir, "config.toml"), nil
	}
	home, err := a.home()
	if err != nil {
		return "", fmt.Errorf("cannot find Codex's configuration: set HOME or CODEX_HOME (%w)", err)
	}
	return filepath.Join(home, ".codex", "config.toml"), nil
}

// codexHasServer tells whether a config.toml has mcp_servers.superagents.
func codexHasServer(path string, src []byte) (bool, error) {
	var cfg struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(src, &cfg); err != nil {
		return false, fmt.Errorf("%s is not valid TOML (%v): fix it, and run this again", path, err)
	}
	_, ok := cfg.MCPServers["superagents"]
	return ok, nil
}

func (a *app) codexChanges(uninstall bool) ([]change, error) {
	path, err := a.codexConfigFile()
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(path)
	created := errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		return nil, err
	}
	has, err := codexHasServer(path, src)
	if err != nil {
		return nil, err
	}
	if uninstall {
		return codexRemove(path, src, has)
	}
	table, err := codexTable(created)
	if err != nil {
		return nil, err
	}
	if has {
		return []change{{note: true, what: "The MCP server superagents is in " + path + " already: kept as it is."}}, nil
	}
	out := append([]byte{}, src...)
	if len(out) > 0 {
		if out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	out = append(out, table...)
	if ok, err := codexHasServer(path, out); err != nil || !ok {
		return nil, fmt.Errorf("%s cannot take a [mcp_servers.superagents] table at its end (its mcp_servers is written another way): add the entry of docs/hosts.md to it yourself", path)
	}
	return []change{{path: path, content: out, what: "add the MCP server superagents to " + path}}, nil
}

// codexRemove removes the table install appended, with the blank line
// before it, and the file when install created it and nothing else is in
// it.
func codexRemove(path string, src []byte, has bool) ([]change, error) {
	if !has {
		return nil, nil
	}
	for _, created := range []bool{false, true} {
		table, err := codexTable(created)
		if err != nil {
			return nil, err
		}
		i := bytes.Index(src, table)
		if i < 0 {
			continue
		}
		before := src[:i]
		if bytes.HasSuffix(before, []byte("\n\n")) {
			before = before[:len(before)-1]
		}
		out := append(append([]byte{}, before...), src[i+len(table):]...)
		if created && len(bytes.TrimSpace(out)) == 0 {
			return []change{{path: path, what: "remove " + path + ", which install created"}}, nil
		}
		return []change{{path: path, content: out, what: "remove the MCP server superagents from " + path}}, nil
	}
	return []change{{note: true, what: "The MCP server superagents in " + path + " is not the one install adds: left as it is."}}, nil
}
