package cli

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// openCodePlugin is the superagents plugin for OpenCode that install
// writes: it wakes a session when its tasks end.
//
//go:embed opencode/superagents.ts
var openCodePlugin []byte

// pluginMark starts the plugin file: a file there without it is the
// user's, never overwritten or removed.
const pluginMark = "// superagents for OpenCode"

const installLong = `Set up an agent host to use superagents, as docs/hosts.md describes.

  opencode     the superagents plugin (.opencode/plugin/superagents.ts), which
               wakes a session when its background tasks end, and the MCP
               server (mcp.superagents in opencode.json); with --global in
               OpenCode's configuration directory ($XDG_CONFIG_HOME/opencode)
  claude-code  the MCP server, with 'claude mcp add --scope local' (yours, in
               this project); with --global, --scope user (all your projects)
  codex        the MCP server in Codex's configuration ($CODEX_HOME/config.toml,
               or ~/.codex/config.toml; Codex reads no other for a project
               that is not trusted, so --global changes nothing), with the
               variables superagents needs (env_vars) and its tools approved

An entry named superagents that is there already is kept as it is. Running
it again changes nothing; --print shows what it would change and changes
nothing. 'superagents uninstall HOST' removes what install added.`

// change is one file an install or uninstall writes or removes, one
// command of the host it runs, or a note that tells why something is
// left as it is.
type change struct {
	path    string
	content []byte   // nil: remove the file
	run     []string // a host's command to run (path and content unused)
	dir     string   // where run runs
	what    string   // for --print and the report
	note    bool     // nothing to do: what says why
}

func (a *app) installCommand(uninstall bool) *cobra.Command {
	var global, dryRun bool
	use, short := "install HOST", "Set up an agent host (opencode, claude-code, codex) to use superagents"
	if uninstall {
		use, short = "uninstall HOST", "Remove what 'superagents install HOST' added"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  installLong,
		Args:  exactArgs(1, "one host: opencode, claude-code or codex"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var changes []change
			var err error
			switch args[0] {
			case "opencode":
				changes, err = a.openCodeChanges(global, uninstall)
			case "claude-code":
				changes, err = a.claudeCodeChanges(global, uninstall)
			case "codex":
				changes, err = a.codexChanges(uninstall)
			default:
				return usagef("unknown host %q: superagents installs into opencode, claude-code and codex", args[0])
			}
			if err != nil {
				return err
			}
			return a.applyChanges(changes, dryRun)
		},
	}
	cmd.Flags().BoolVar(&global, "global", false, "set up the host for every project (its user configuration), not this one")
	cmd.Flags().BoolVar(&dryRun, "print", false, "show what would change, and change nothing")
	return cmd
}

// applyChanges writes the changes (or, with dryRun, shows them).
func (a *app) applyChanges(changes []change, dryRun bool) error {
	out := a.env.Stdout
	todo := 0
	for _, c := range changes {
		if c.note {
			fmt.Fprintln(out, c.what)
			continue
		}
		todo++
		if dryRun {
			fmt.Fprintf(out, "would %s\n", c.what)
			if c.content != nil {
				fmt.Fprintf(out, "--- %s\n%s\n", c.path, strings.TrimRight(string(c.content), "\n"))
			}
			continue
		}
		if err := a.applyChange(c); err != nil {
			return err
		}
		fmt.Fprintln(out, c.what)
	}
	if todo == 0 {
		_, err := fmt.Fprintln(out, "Nothing to change.")
		return err
	}
	return nil
}

func (a *app) applyChange(c change) error {
	if c.run != nil {
		return a.runHost(c)
	}
	if c.content == nil {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeAtomic(c.path, c.content)
}

// writeAtomic replaces a file by a complete new one (a crash leaves the
// old or the new, never half), keeping its mode.
func writeAtomic(path string, content []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone once renamed
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// superagentsCommand is how a host's configuration names this program:
// "superagents" when that is what PATH finds, else its full path.
func superagentsCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "superagents"
	}
	self, _ = filepath.EvalSymlinks(self)
	if found, err := exec.LookPath("superagents"); err == nil {
		if found, _ = filepath.EvalSymlinks(found); found == self {
			return "superagents"
		}
	}
	return self
}

// openCodeDir is the directory of OpenCode's configuration: the project's
// (its opencode.json is at the top of the project, its plugins in
// .opencode/) or, with global, the user's.
func (a *app) openCodeDirs(global bool) (configDir, pluginDir string, err error) {
	if global {
		base := a.env.Getenv("XDG_CONFIG_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", "", fmt.Errorf("cannot find OpenCode's configuration directory: set XDG_CONFIG_HOME or HOME (%w)", err)
			}
			base = filepath.Join(home, ".config")
		}
		dir := filepath.Join(base, "opencode")
		return dir, filepath.Join(dir, "plugin"), nil
	}
	ws, err := a.workspaceDir()
	if err != nil {
		return "", "", err
	}
	return ws, filepath.Join(ws, ".opencode", "plugin"), nil
}

// openCodeEntry is the MCP server entry install adds to opencode.json.
func openCodeEntry() map[string]any {
	return map[string]any{"type": "local", "command": []string{superagentsCommand(), "mcp"}, "enabled": true}
}

// openCodeFresh is the opencode.json install writes where there is none.
const openCodeFresh = "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n"

func (a *app) openCodeChanges(global, uninstall bool) ([]change, error) {
	configDir, pluginDir, err := a.openCodeDirs(global)
	if err != nil {
		return nil, err
	}
	var changes []change
	plugin := filepath.Join(pluginDir, "superagents.ts")
	old, err := os.ReadFile(plugin)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err == nil && !bytes.HasPrefix(old, []byte(pluginMark)):
		return nil, fmt.Errorf("%s is not superagents' plugin: move it away, and run this again", plugin)
	case uninstall && err == nil:
		changes = append(changes, change{path: plugin, what: "remove the OpenCode plugin " + plugin})
	case !uninstall && !bytes.Equal(old, openCodePlugin):
		changes = append(changes, change{path: plugin, content: openCodePlugin, what: "write the OpenCode plugin " + plugin})
	}
	c, err := openCodeConfigChange(filepath.Join(configDir, "opencode.json"), uninstall)
	if err != nil || c == nil {
		return changes, err
	}
	return append(changes, *c), nil
}

// openCodeConfigChange adds the MCP entry to opencode.json (or removes
// it, when it is the one install adds); nil when there is nothing to do.
func openCodeConfigChange(path string, uninstall bool) (*change, error) {
	if _, err := os.Stat(strings.TrimSuffix(path, ".json") + ".jsonc"); err == nil {
		return nil, fmt.Errorf("%sc holds OpenCode's configuration, with comments superagents would not keep: add the entry of docs/hosts.md to it yourself", path)
	}
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if uninstall {
			return nil, nil
		}
		src, err = []byte(openCodeFresh), nil
	}
	if err != nil {
		return nil, err
	}
	top, err := parseConfig(path, src)
	if err != nil {
		return nil, err
	}
	mcp, hasMCP := top.member("mcp")
	var servers jsonObject
	if hasMCP {
		if servers, err = parseObject(src, mcp.valueStart); err != nil {
			return nil, fmt.Errorf("%s: mcp is not an object (%v)", path, err)
		}
	}
	entry, hasEntry := servers.member("superagents")
	if uninstall {
		return openCodeRemove(path, src, top, mcp, servers, entry, hasEntry)
	}
	if hasEntry {
		return &change{note: true, what: "The MCP server superagents is in " + path + " already: kept as it is."}, nil
	}
	var out []byte
	if hasMCP {
		out, err = addMember(src, servers, "superagents", openCodeEntry())
	} else {
		out, err = addMember(src, top, "mcp", map[string]any{"superagents": openCodeEntry()})
	}
	if err != nil {
		return nil, err
	}
	return &change{path: path, content: out, what: "add the MCP server superagents to " + path}, nil
}

// openCodeRemove removes the entry install adds, and the mcp object and
// the file it added with it when nothing else is in them.
func openCodeRemove(path string, src []byte, top jsonObject, mcp jsonMember, servers jsonObject, entry jsonMember, has bool) (*change, error) {
	if !has {
		return nil, nil
	}
	kept := &change{note: true, what: "The MCP server superagents in " + path + " is not the one install adds: left as it is."}
	var got, want any
	json.Unmarshal(src[entry.valueStart:entry.valueEnd], &got) //nolint:errcheck // parsed already
	b, _ := json.Marshal(openCodeEntry())
	json.Unmarshal(b, &want) //nolint:errcheck // ours
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return kept, nil // not install's entry: the user's, kept
	}
	var out []byte
	if len(servers.members) == 1 {
		out = removeMember(src, top, mcp)
	} else {
		out = removeMember(src, servers, entry)
	}
	var rest map[string]any
	if json.Unmarshal(out, &rest) == nil && len(rest) == 1 && rest["$schema"] == "https://opencode.ai/config.json" {
		return &change{path: path, what: "remove " + path + ", which install wrote"}, nil
	}
	return &change{path: path, content: out, what: "remove the MCP server superagents from " + path}, nil
}
