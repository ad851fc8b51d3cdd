// Package engine runs agents. It turns a session's agent profile into a
// model, a system prompt and a set of tools, and runs turns with the agent
// loop. The terminal, the MCP server and the HTTP API all drive it.
package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agent"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/compact"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm"
	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/sandbox"
)

// TaskToolsFunc returns the background-task tools offered to a session, or
// none (at the spawn depth limit, for example).
type TaskToolsFunc func(ctx context.Context, sessionID string) ([]tools.Tool, error)

// Engine runs agent turns. Its fields are set once; it is safe for
// concurrent use.
type Engine struct {
	// Store is where turns read and write their session.
	Store     sa.Sessions
	Config    config.Config
	Models    *llm.Registry
	Agents    *agents.Catalog
	Workspace *tools.Workspace
	// BashEnv is the environment bash commands start from (the process's
	// if nil).
	BashEnv []string
	// PrivatePaths are superagents' own files, which commands never
	// reach (sandbox.Policy.Private; nil: sandbox.PrivatePaths of the
	// process's environment).
	PrivatePaths []string
	// taskTools, extraTools and instructions: see Options.
	taskTools    TaskToolsFunc
	extraTools   func(ctx context.Context, patterns []string) ([]tools.Tool, error)
	instructions string

	builtins sync.Map // agent name → *tools.Set: built once, they never change
	prompts  sync.Map // promptKey → string: one copy per agent and tool set, not one per running turn
}

// promptKey names a system prompt: the profile's own prompt and the names
// of the tools it is given (the workspace and instructions are the
// engine's, fixed; a turn in another workspace makes its own).
type promptKey struct{ prompt, tools string }

// TurnOptions adjust one turn.
type TurnOptions struct {
	// Model overrides the session's model for this turn.
	Model string
	// OnEvent sees the turn as it happens.
	OnEvent func(sa.TurnEvent)
	// NewSession says that the session was just made for this turn with
	// its first messages and no parent (a task's launch), so that its
	// history is read as its own messages (see agent.Loop.NewSession).
	NewSession bool
	// Workspace, if set, is where this turn's tools work instead of the
	// engine's workspace (a task's own git worktree); the caller opens
	// and closes it.
	Workspace *tools.Workspace
	// Writable are more directories the sandbox lets this turn's
	// commands write to (the parts of a worktree's repository that git
	// writes to as it commits there).
	Writable []string
	// Inbox, if set, brings the messages sent to the session while the
	// turn runs (agent.Loop.Inbox).
	Inbox func(ctx context.Context) ([]sa.Message, error)
	// WrapProvider, if set, wraps the model's provider for the turn (a
	// task's run lines up the first requests of sibling forks).
	WrapProvider func(sa.Provider) sa.Provider
}

// Profile returns the agent profile of a name, or sa.ErrUnknownAgent listing
// the ones there are.
func (e *Engine) Profile(name string) (agents.Profile, error) {
	name = cmp.Or(name, sa.DefaultAgent)
	p, ok := e.Agents.Get(name)
	if !ok {
		return agents.Profile{}, fmt.Errorf("%w %q: available agents are %s", sa.ErrUnknownAgent, name, strings.Join(e.Agents.Names(), ", "))
	}
	return p, nil
}

// ModelFor returns the model string a session's turn uses: the turn's
// override, else the session's own, else its profile's, else the
// configured default.
func (e *Engine) ModelFor(sess sa.Session, profile agents.Profile, override string) string {
	return cmp.Or(override, sess.Model, profile.Model, e.Config.Model, config.OfflineModel)
}

// Loop builds the agent loop for one turn of a session.
func (e *Engine) Loop(ctx context.Context, sess sa.Session, opts TurnOptions) (*agent.Loop, error) {
	profile, err := e.Profile(sess.Agent)
	if err != nil {
		return nil, err
	}
	model := e.ModelFor(sess, profile, opts.Model)
	provider, modelName, err := e.Models.Open(model)
	if err != nil {
		return nil, err
	}
	if opts.WrapProvider != nil {
		provider = opts.WrapProvider(provider)
	}
	ws := cmp.Or(opts.Workspace, e.Workspace)
	toolSet, err := e.toolsFor(ctx, sess.ID, profile, ws, opts.Writable)
	if err != nil {
		return nil, err
	}
	return &agent.Loop{
		Store:       e.Store,
		Provider:    provider,
		Model:       modelName,
		ModelLabel:  model,
		System:      e.systemPrompt(profile, toolSet, ws),
		Tools:       toolSet,
		MaxSteps:    cmp.Or(profile.MaxSteps, e.Config.Limits.MaxSteps),
		RepeatLimit: e.Config.Limits.RepeatLimit,
		MaxTokens:   e.Config.Limits.MaxOutputTokens,
		Compaction:  compact.ForModel(e.Config, model),
		OnEvent:     opts.OnEvent,
		NewSession:  opts.NewSession && sess.ParentID == "",
		Inbox:       opts.Inbox,
	}, nil
}

// toolsFor returns the tools an agent of this profile may use in this
// session: the built-in tools its permissions allow, plus the task tools,
// filtered by the profile's tool list.
func (e *Engine) toolsFor(ctx context.Context, sessionID string, profile agents.Profile, ws *tools.Workspace, writable []string) (*tools.Set, error) {
	builtin, err := e.builtinTools(profile, ws, writable)
	if err != nil {
		return nil, err
	}
	all := builtin.Tools()
	if e.taskTools != nil {
		extra, err := e.taskTools(ctx, sessionID)
		if err != nil {
			return nil, fmt.Errorf("task tools: %w", err)
		}
		all = append(all, extra...)
	}
	if e.extraTools != nil {
		extra, err := e.extraTools(ctx, profile.Tools)
		if err != nil {
			return nil, fmt.Errorf("extra tools: %w", err)
		}
		if e.Config.Permissions.ForAgent(profile.Name).ReadOnly {
			extra = slices.DeleteFunc(extra, func(t tools.Tool) bool { return !t.ReadOnly() })
		}
		all = append(all, extra...)
	}
	set, err := tools.NewSet(all...)
	if err != nil {
		return nil, err
	}
	return profile.SelectTools(set)
}

// builtinTools returns the built-in tools an agent's permissions allow,
// in its sandbox, made once per agent. Those of a workspace other than
// the engine's (a task's worktree) are made for the turn: the sandbox
// confines the commands to that workspace.
func (e *Engine) builtinTools(profile agents.Profile, ws *tools.Workspace, writable []string) (*tools.Set, error) {
	agent := profile.Name
	own := ws == e.Workspace && len(writable) == 0
	if set, ok := e.builtins.Load(agent); ok && own {
		return set.(*tools.Set), nil
	}
	policy := e.sandboxPolicy(profile)
	policy.Workspace = ws.Dir()
	policy.Writable = append(slices.Clone(policy.Writable), writable...)
	set, err := tools.Builtins(ws, tools.Options{
		Rules:   e.Config.Permissions.ForAgent(agent),
		Bash:    tools.BashOptions{Env: e.BashEnv, HiddenEnv: e.hiddenEnv()},
		Sandbox: policy,
	})
	if err != nil {
		return nil, err
	}
	if own {
		e.builtins.Store(agent, set)
	}
	return set, nil
}

// sandboxPolicy is the sandbox of an agent's commands: the
// configuration's, with the profile's mode when that is stricter. Its
// workspace is left to the tools, whichever workspace they get.
func (e *Engine) sandboxPolicy(profile agents.Profile) sandbox.Policy {
	cfg := e.Config.Sandbox
	p := sandbox.Policy{
		Mode:     sandbox.Strictest(cfg.Mode, profile.Sandbox),
		Network:  cfg.Network,
		Writable: cfg.Writable,
		Private:  e.PrivatePaths,
	}
	if p.Mode != sandbox.Strictest(cfg.Mode) {
		p.ModeSource = fmt.Sprintf("the agent profile %q", profile.Name)
	}
	return p
}

// SandboxWarning returns, for the user, what this system cannot enforce
// of the configured sandbox, or "" when it enforces all of it.
func (e *Engine) SandboxWarning() string {
	p := e.sandboxPolicy(agents.Profile{})
	p.Workspace = e.Workspace.Dir()
	s, err := sandbox.New(p, e.BashEnv)
	if err != nil {
		return err.Error()
	}
	return s.Warning()
}

// hiddenEnv names the variables bash commands never see: the providers'
// key variables, the built-in ones and any a configuration names.
func (e *Engine) hiddenEnv() []string {
	hidden := tools.DefaultHiddenEnv()
	for _, name := range e.Config.ProviderNames() {
		if v := e.Config.Providers[name].APIKeyEnv; v != "" && !slices.Contains(hidden, v) {
			hidden = append(hidden, v)
		}
	}
	return hidden
}

// systemPrompt is the profile's prompt (with the task-tool guide when
// those tools are offered) and where the agent works.
func (e *Engine) systemPrompt(profile agents.Profile, toolSet *tools.Set, ws *tools.Workspace) string {
	names := toolSet.Names()
	key := promptKey{prompt: profile.Prompt, tools: strings.Join(names, "\x00")}
	own := ws == e.Workspace
	if prompt, ok := e.prompts.Load(key); ok && own {
		return prompt.(string)
	}
	prompt := profile.SystemPrompt(names)
	prompt += "\n\n# Environment\nWorkspace (the working directory of your tools): " + ws.Dir()
	if e.instructions != "" {
		prompt += "\n\n" + e.instructions
	}
	if !own {
		return prompt
	}
	stored, _ := e.prompts.LoadOrStore(key, prompt)
	return stored.(string)
}

// Run runs one turn of a session: it stores the input (usually the user's
// message) and runs the model until it ends its turn.
func (e *Engine) Run(ctx context.Context, sessionID string, opts TurnOptions, input ...sa.Message) (sa.TurnOutcome, error) {
	sess, err := e.Store.Session(ctx, sessionID)
	if err != nil {
		return sa.TurnOutcome{}, err
	}
	return e.RunIn(ctx, sess, opts, input...)
}

// RunIn is Run for a caller that knows the session already (its id, agent
// and model are what a turn needs of it): a task's run, which created it.
func (e *Engine) RunIn(ctx context.Context, sess sa.Session, opts TurnOptions, input ...sa.Message) (sa.TurnOutcome, error) {
	loop, err := e.Loop(ctx, sess, opts)
	if err != nil {
		return sa.TurnOutcome{}, err
	}
	return loop.Run(ctx, sess.ID, input...)
}

// UserMessage is a user's text as a message (sa.UserMessage).
func UserMessage(text string) sa.Message { return sa.UserMessage(text) }

// Options say where an engine finds its parts.
type Options struct {
	Store  sa.Sessions
	Config config.Config
	// Workspace is the directory the tools work in.
	Workspace string
	// AgentDirs are where profiles are loaded from.
	AgentDirs agents.Dirs
	// BashEnv is the environment bash commands start from (the process's
	// if nil).
	BashEnv []string
	// PrivatePaths: see Engine.PrivatePaths.
	PrivatePaths []string
	// TaskTools, if set, gives a session's turns the background-task
	// tools.
	TaskTools TaskToolsFunc
	// ExtraTools, if set, adds tools from outside (the user's MCP
	// servers). It is given the profile's tool patterns (nil: every tool),
	// so that it can skip work for tools the agent cannot have. A
	// read_only permission keeps only the read-only ones.
	ExtraTools func(ctx context.Context, patterns []string) ([]tools.Tool, error)
	// Instructions, if set, end every agent's system prompt (the
	// project's AGENTS.md files).
	Instructions string
}

// New opens the workspace and loads the agent profiles. Profile files that
// do not parse are returned as problems (each names its file and line);
// the others load.
func New(opts Options) (eng *Engine, problems []error, err error) {
	ws, err := tools.OpenWorkspace(opts.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	catalog, problems := agents.Load(opts.AgentDirs)
	return &Engine{
		Store:        opts.Store,
		Config:       opts.Config,
		Models:       llm.NewRegistry(opts.Config),
		Agents:       catalog,
		Workspace:    ws,
		BashEnv:      opts.BashEnv,
		PrivatePaths: opts.PrivatePaths,
		taskTools:    opts.TaskTools,
		extraTools:   opts.ExtraTools,
		instructions: opts.Instructions,
	}, problems, nil
}

// Close releases the workspace.
func (e *Engine) Close() error { return e.Workspace.Close() }

// Check reports whether a session could run a turn: its agent exists and
// its model's provider can be opened (a known provider, a key if it needs
// one). Callers check before they create anything.
func (e *Engine) Check(sess sa.Session) error {
	profile, err := e.Profile(sess.Agent)
	if err != nil {
		return err
	}
	_, _, err = e.Models.Open(e.ModelFor(sess, profile, ""))
	return err
}
