package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/sandbox"
)

// errSandboxNotEnforced fails `sandbox check` (exit 1) after its report.
var errSandboxNotEnforced = errors.New("this system cannot enforce the configured sandbox (see the lines marked NOT CONFINED)")

func (a *app) sandboxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "What the sandbox of agents' commands confines on this machine",
	}
	cmd.AddCommand(a.sandboxCheckCommand())
	return cmd
}

func (a *app) sandboxCheckCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Probe, live, what the configured sandbox confines here",
		Long: `Runs a probe inside the sandbox configured for the workspace ([sandbox] in
config.toml) and prints, for this machine, what it confines and what not:
the mechanism (Landlock's ABI, the namespaces), writes outside the
workspace, network sockets of every family (TCP, Multipath TCP, UDP, SCTP,
raw, packet), reads of superagents' own files and connections to its
sockets, capabilities, reads of other processes' environment, and whether
a process a command leaves behind outlives it.

Exits 1 when something the configuration asks for is not enforced.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig("")
			if err != nil {
				return err
			}
			report, err := sandbox.Check(sandbox.Policy{
				Mode: sandbox.Strictest(cfg.Sandbox.Mode), Network: cfg.Sandbox.Network,
				Writable: cfg.Sandbox.Writable, Private: a.privatePaths(),
			})
			if err != nil {
				return fmt.Errorf("sandbox check: %w", err)
			}
			if asJSON {
				if err := writeJSON(a.env.Stdout, report); err != nil {
					return err
				}
			} else if _, err := fmt.Fprint(a.env.Stdout, report.String()); err != nil {
				return err
			}
			if !report.OK() {
				return errSandboxNotEnforced
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
