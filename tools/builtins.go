package tools

import "fmt"

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
	makers := []func() (Tool, error){
		func() (Tool, error) { return newRead(ws) },
		func() (Tool, error) { return newWrite(ws) },
		func() (Tool, error) { return newEdit(ws) },
		func() (Tool, error) { return newLs(ws) },
		func() (Tool, error) { return newGlob(ws) },
		func() (Tool, error) { return newGrep(ws) },
		func() (Tool, error) { return newBash(ws, bashOpts) },
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
