package tools

import (
	"fmt"
	"os"

	"github.com/superagents/superagents/sandbox"
)

// Names of the built-in tools.
const (
	Read  = "read"
	Write = "write"
	Edit  = "edit"
	Ls    = "ls"
	Glob  = "glob"
	Grep  = "grep"
	Bash  = "bash"
)

// Options configure the built-in tools for one agent.
type Options struct {
	// Rules are the agent's permissions (Policy.ForAgent). ReadOnly leaves
	// out write, edit and bash; Bash.Allow and Bash.Deny are enforced by
	// the bash tool. Bash.Rules is ignored in favour of Rules.Bash.
	Rules Rules
	// Bash configures the bash tool.
	Bash BashOptions
	// Sandbox confines the commands bash runs (its zero Mode is
	// sandbox.DefaultMode; an empty Workspace is the tools' workspace).
	// In read-only mode, write and edit refuse too.
	Sandbox sandbox.Policy
}

// Builtins returns the built-in tools confined to ws: read, write, edit,
// ls, glob, grep and bash, less the ones opts forbid.
func Builtins(ws *Workspace, opts Options) (*Set, error) {
	if ws == nil {
		return nil, fmt.Errorf("built-in tools: no workspace")
	}
	if err := opts.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("built-in tools: permissions: %w", err)
	}
	bashOpts := opts.Bash
	bashOpts.Rules = opts.Rules.Bash
	if bashOpts.Env == nil {
		bashOpts.Env = os.Environ()
	}
	policy := opts.Sandbox
	if policy.Workspace == "" {
		policy.Workspace = ws.Dir()
	}
	sb, err := sandbox.New(policy, bashOpts.Env)
	if err != nil {
		return nil, fmt.Errorf("built-in tools: %w", err)
	}
	makers := []func() (Tool, error){
		func() (Tool, error) { return newRead(ws) },
		func() (Tool, error) { return newWrite(ws, sb) },
		func() (Tool, error) { return newEdit(ws, sb) },
		func() (Tool, error) { return newLs(ws) },
		func() (Tool, error) { return newGlob(ws) },
		func() (Tool, error) { return newGrep(ws) },
		func() (Tool, error) { return newBash(ws, bashOpts, sb) },
	}
	var list []Tool
	for _, newTool := range makers {
		t, err := newTool()
		if err != nil {
			return nil, fmt.Errorf("built-in tools: %w", err)
		}
		if opts.Rules.ReadOnly && !t.ReadOnly() {
			continue
		}
		list = append(list, t)
	}
	return NewSet(list...)
}
