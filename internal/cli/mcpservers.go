package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/instructions"
	"github.com/superagents/superagents/internal/mcpclient"
	"github.com/superagents/superagents/internal/tools"
)

// bindMCPFlags adds the flags every command that runs agents takes.
func (a *app) bindMCPFlags(root *cobra.Command) {
	root.PersistentFlags().BoolVar(&a.trustProject, "trust-project", false,
		"trust the project: let the MCP servers of its .mcp.json run, and its .superagents/config.toml choose providers, keys and the database (see also trusted_projects in config.toml)")
}

// mcpServers reads the configured MCP servers and decides whether the
// project's may run. Files that cannot be read are returned as problems.
func (a *app) mcpServers(cfg config.Config, ws string) (mcpclient.Servers, bool, error) {
	servers := mcpclient.Load(mcpclient.Sources{Workspace: ws, UserDir: a.userConfigDir(), Config: cfg.MCP, LookupEnv: a.lookupEnv})
	if !servers.HasProject() || a.trustProject || cfg.Trusts(ws) {
		return servers, true, nil
	}
	dir, err := a.resolveDataDir()
	if err != nil {
		return servers, false, err
	}
	trusted, err := mcpclient.NewTrustStore(dir).Trusted(ws, servers.ProjectHash)
	return servers, trusted, err
}

// untrustedNotice is the line that says how to trust a project whose
// servers do not run.
func untrustedNotice(servers mcpclient.Servers, ws string) string {
	var names []string
	for _, s := range servers.List {
		if s.Project {
			names = append(names, s.Name)
		}
	}
	return fmt.Sprintf("The project's MCP servers (%s) do not run until you trust the project: use --trust-project, or add %q to trusted_projects in config.toml.",
		strings.Join(names, ", "), ws)
}

// attachMCP returns, for the agents, the tools of the user's MCP servers
// (started at their first use and stopped when the command ends) and the
// project's instructions.
func (a *app) attachMCP(cfg config.Config, ws string) (extra func(context.Context, []string) ([]tools.Tool, error), text string, err error) {
	text, err = instructions.Load(ws, a.userConfigDir())
	if err != nil {
		fmt.Fprintf(a.env.Stderr, "warning: project instructions skipped: %v\n", err)
	}

	servers, trusted, err := a.mcpServers(cfg, ws)
	if err != nil {
		return nil, "", err
	}
	if !trusted && a.holdNotice {
		// The terminal chat asks, once per content of the project's files.
		if trusted, err = a.askTrust(servers, ws); err != nil {
			return nil, "", err
		}
	}
	for _, p := range servers.Problems {
		fmt.Fprintf(a.env.Stderr, "warning: MCP servers skipped: %v\n", p)
	}
	for _, s := range servers.List {
		if s.Err != nil {
			fmt.Fprintf(a.env.Stderr, "warning: MCP server skipped: %v\n", s.Err)
		}
	}
	if !trusted {
		a.notice(untrustedNotice(servers, ws))
	}
	if len(servers.List) == 0 {
		return nil, text, nil
	}
	m := mcpclient.NewManager(servers, a.mcpOptions(cfg, ws, trusted))
	a.closers = append(a.closers, m.Close)
	return m.ToolsFor, text, nil
}

// askTrust asks on the terminal, before the chat starts, whether the
// project's servers may run, unless the user already answered about these
// definitions, and remembers the answer in the data directory.
func (a *app) askTrust(servers mcpclient.Servers, ws string) (bool, error) {
	dir, err := a.resolveDataDir()
	if err != nil {
		return false, err
	}
	store := mcpclient.NewTrustStore(dir)
	trusted, asked, err := store.Answer(ws, servers.ProjectHash)
	if err != nil || asked {
		return trusted, err
	}
	fmt.Fprintf(a.env.Stderr, "This project (%s) defines MCP servers that would run on this machine:\n", ws)
	for _, s := range servers.List {
		if s.Project {
			fmt.Fprintf(a.env.Stderr, "  %s: %s\n", s.Name, s.Display)
		}
	}
	fmt.Fprint(a.env.Stderr, "Trust the project and let them run? [y/N] ")
	line, err := readLine(a.env.Stdin)
	if err != nil {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	trusted = answer == "y" || answer == "yes"
	return trusted, store.Remember(ws, servers.ProjectHash, trusted)
}

// readLine reads one line a byte at a time, so that nothing after it is
// taken from the chat that reads the terminal next.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
	}
}

func (a *app) mcpOptions(cfg config.Config, ws string, trusted bool) mcpclient.Options {
	return mcpclient.Options{
		Root: ws, Env: a.env.Environ, ProjectTrusted: trusted,
		ToolTimeout: cfg.MCP.ToolTimeout.Duration, StartupTimeout: cfg.MCP.StartupTimeout.Duration,
		Version: a.env.Version,
	}
}

func (a *app) mcpServersCommand() *cobra.Command {
	var asJSON, start bool
	cmd := &cobra.Command{
		Use:   "mcp-servers",
		Short: "List the MCP servers agents may use, and their tools",
		Long: `List the MCP servers whose tools agents use as mcp__<server>__<tool>: those
of the project's .mcp.json, of config.toml ([mcp.servers.NAME]) and of the
user's mcp.json ($XDG_CONFIG_HOME/superagents/mcp.json), with where each
is defined, whether it may run (a project's servers run only once the
project is trusted) and its state. With --start, the servers are started
to list their tools, then stopped.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig("")
			if err != nil {
				return err
			}
			ws, err := a.workspaceDir()
			if err != nil {
				return err
			}
			servers, trusted, err := a.mcpServers(cfg, ws)
			if err != nil {
				return err
			}
			m := mcpclient.NewManager(servers, a.mcpOptions(cfg, ws, trusted))
			defer m.Close()
			status := m.Status()
			if start {
				if status, err = m.Start(cmd.Context()); err != nil {
					return err
				}
			}
			var problems []string
			for _, p := range servers.Problems {
				problems = append(problems, p.Error())
			}
			notice := ""
			if !trusted {
				notice = untrustedNotice(servers, ws)
			}
			if asJSON {
				if status == nil {
					status = []mcpclient.Status{}
				}
				if problems == nil {
					problems = []string{}
				}
				return writeJSON(a.env.Stdout, struct {
					Servers  []mcpclient.Status `json:"servers"`
					Problems []string           `json:"problems"`
					Notice   string             `json:"notice,omitempty"`
				}{status, problems, notice})
			}
			return renderMCPServers(a.env.Stdout, status, problems, notice, a.env.Getenv("HOME"))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&start, "start", false, "start the servers to list their tools")
	return cmd
}

// renderMCPServers prints one block per server: a line of name, type,
// state, trust and origin, then its command or URL, its error and its
// tools.
func renderMCPServers(w io.Writer, status []mcpclient.Status, problems []string, notice, home string) error {
	if len(status) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured (see .mcp.json, [mcp.servers.NAME] in config.toml, or mcp.json in the user configuration directory).")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tSTATE\tTRUST\tDEFINED IN")
	for _, s := range status {
		trust := "user"
		if s.Project {
			trust = "project, untrusted"
			if s.Trusted {
				trust = "project, trusted"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Type, s.State, trust, shortPath(s.Origin, home))
	}
	if len(status) > 0 {
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, s := range status {
		fmt.Fprintf(w, "\n%s:", s.Name)
		if s.Display != "" {
			fmt.Fprintf(w, " %s", s.Display)
		}
		fmt.Fprintln(w)
		if s.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", s.Error)
		}
		if s.Stderr != "" {
			fmt.Fprintf(w, "  stderr: %s\n", strings.ReplaceAll(s.Stderr, "\n", "\n          "))
		}
		for _, t := range s.Tools {
			fmt.Fprintf(w, "  %s\n", t.Name)
		}
	}
	for _, p := range problems {
		fmt.Fprintf(w, "\nproblem: %s\n", p)
	}
	if notice != "" {
		fmt.Fprintf(w, "\n%s\n", notice)
	}
	return nil
}

// shortPath writes a path under home with ~.
func shortPath(p, home string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}
