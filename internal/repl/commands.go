package repl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

// argSpec says what a command takes after its name.
type argSpec int

const (
	noArg argSpec = iota
	optionalArg
	requiredArg
	// parsedArgs: options, words and a text, read by the command's syntax.
	parsedArgs
)

// Command is a slash command.
type Command struct {
	Name    string
	Aliases []string
	// Usage shows the argument, e.g. "ID" or "[prompt]".
	Usage  string
	Help   string
	arg    argSpec
	syntax argSyntax // for parsedArgs
	// needsIdle: refused while the agent in view runs a turn.
	needsIdle bool
	run       func(ctx context.Context, c *Chat, in Input) Reply
}

// Commands returns the slash commands, in the order /help lists them.
func Commands() []Command {
	return []Command{
		withSyntax(Command{Name: "fork", run: cmdFork, needsIdle: true,
			Help: "fork the agent: the child inherits its whole history; with a prompt, the child answers it"},
			"[prompt]", nil, 0, optionalText),
		{Name: "clear", arg: noArg, run: cmdClear, needsIdle: true,
			Help: "start the agent's context over (agents forked from it keep what they inherited)"},
		withSyntax(Command{Name: "compact", run: cmdCompact, needsIdle: true,
			Help: "summarise the agent's conversation so far: its later turns start from the summary (history keeps everything)"},
			"[instructions]", nil, 0, optionalText),
		{Name: "agents", arg: noArg, run: cmdAgents,
			Help: "show the tree of agents and what each is doing"},
		{Name: "switch", Usage: "ID", arg: requiredArg, run: cmdSwitch,
			Help: "move to another agent of the tree (a unique prefix of its id is enough)"},
		{Name: "parent", arg: noArg, run: cmdParent,
			Help: "move to the agent this one was forked from"},
		{Name: "kill", Usage: "ID", arg: requiredArg, run: cmdKill,
			Help: "stop an agent and the agents forked from it (not the root), with their background tasks"},
		{Name: "model", Usage: "[provider/model]", arg: optionalArg, run: cmdModel,
			Help: "show or change the model of the agent's later turns"},
		withSyntax(Command{Name: "task", run: cmdTask,
			Help: "launch a background task for the agent in view, run by the agent profile AGENT; --fork gives it this conversation, --desc names it (options: below)"},
			`[options] AGENT "prompt"`,
			map[string]bool{"fork": false, "desc": true, "timeout": true, "max-cost": true, "max-tokens": true, "isolation": true}, 1, optionalText),
		{Name: "tasks", arg: noArg, run: cmdTasks,
			Help: "list the background tasks of the agent in view, newest first"},
		withSyntax(Command{Name: "output", run: cmdOutput,
			Help: "show a task's result, or its progress while it runs; --block waits for its end (Ctrl+C stops waiting)"},
			"[--block] ID", map[string]bool{"block": false}, 1, noText),
		withSyntax(Command{Name: "send", run: cmdSend,
			Help: "send a message to a running task without stopping it (it reads it before its next step), or answer the question it asks"},
			`ID "message"`, nil, 1, requiredText),
		withSyntax(Command{Name: "cancel", run: cmdCancel,
			Help: "cancel a running task"}, "ID", nil, 1, noText),
		withSyntax(Command{Name: "resume", run: cmdResume,
			Help: "send a follow-up to a completed task; it answers in the background"}, `ID "prompt"`, nil, 1, requiredText),
		{Name: "help", Aliases: []string{"?"}, arg: noArg, run: cmdHelp,
			Help: "show this help"},
		{Name: "exit", Aliases: []string{"quit"}, arg: noArg, run: cmdExit,
			Help: "leave the chat (running turns are stopped; with background tasks running it asks first)"},
		{Name: "exit!", Aliases: []string{"quit!"}, arg: noArg, run: cmdExitNow,
			Help: "leave at once, stopping the background tasks too"},
	}
}

// withSyntax gives a command its argument syntax.
func withSyntax(cmd Command, usage string, options map[string]bool, words int, text textArg) Command {
	cmd.Usage, cmd.arg = usage, parsedArgs
	cmd.syntax = argSyntax{command: cmd.Name, usage: usage, options: options, words: words, text: text}
	if _, ok := options["desc"]; ok {
		cmd.syntax.aliases = map[string]string{"description": "desc"}
	}
	return cmd
}

// lookup finds a command by name or alias.
func lookup(name string) (Command, bool) {
	for _, cmd := range Commands() {
		if cmd.Name == name {
			return cmd, true
		}
		for _, a := range cmd.Aliases {
			if a == name {
				return cmd, true
			}
		}
	}
	return Command{}, false
}

// Input is a parsed line: a message, a command with its arguments, or
// nothing (a blank line).
type Input struct {
	Message string
	Command *Command
	Args    string
	parsed  commandArgs
}

// needsIdle reports whether the line must wait for the agent in view to
// end its turn: a message, /fork and /clear.
func (in Input) needsIdle() bool {
	return in.Message != "" || in.Command != nil && in.Command.needsIdle
}

// ParseLine reads a line typed into the chat. A line that starts with /
// is a command; "//" starts a message that begins with "/". Errors are
// one line, meant to be shown as they are.
func ParseLine(line string) (Input, error) {
	text := strings.TrimSpace(line)
	switch {
	case text == "":
		return Input{}, nil
	case strings.HasPrefix(text, "//"):
		return Input{Message: text[1:]}, nil
	case !strings.HasPrefix(text, "/"):
		return Input{Message: text}, nil
	}
	name, args := text[1:], ""
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name, args = name[:i], strings.TrimSpace(name[i:])
	}
	if name == "" {
		return Input{}, errors.New("type a command after /: /help lists them")
	}
	cmd, ok := lookup(name)
	if !ok {
		return Input{}, fmt.Errorf("unknown command /%s: /help lists the commands (start a message with // to send a line beginning with /)", echo(name))
	}
	in := Input{Command: &cmd, Args: args}
	switch {
	case cmd.arg == noArg && args != "":
		return Input{}, fmt.Errorf("/%s takes no argument (got %q)", cmd.Name, echo(args))
	case cmd.arg == requiredArg && args == "":
		return Input{}, fmt.Errorf("/%s needs an argument: /%s %s", cmd.Name, cmd.Name, cmd.Usage)
	case cmd.arg == requiredArg && strings.ContainsAny(args, " \t"):
		return Input{}, fmt.Errorf("/%s takes one %s, not %q", cmd.Name, cmd.Usage, echo(args))
	case cmd.arg == parsedArgs:
		parsed, err := cmd.syntax.parse(args)
		if err != nil {
			return Input{}, err
		}
		in.parsed = parsed
	}
	return in, nil
}

func cmdFork(ctx context.Context, c *Chat, in Input) Reply {
	prompt := in.parsed.text
	parent := c.Current()
	model, err := c.idleModel(ctx, parent, "fork")
	if err != nil {
		return refused(err)
	}
	child, err := c.rt.Sessions().Fork(ctx, parent.ID, sa.ForkOptions{Model: model})
	if err != nil {
		return failed(fmt.Sprintf("cannot fork %s: %v", sa.ShortID(parent.ID), err))
	}
	c.mu.Lock()
	c.agents[child.ID] = &agentState{status: StatusIdle, model: model}
	c.members[child.ID] = true
	c.current = child
	c.mu.Unlock()
	r := Reply{Blocks: []Block{{Kind: BlockHeader, Session: child}, {Kind: BlockNote, Text: sa.ForkRecord(parent).Text()}}}
	if prompt != "" {
		sent := c.send(ctx, prompt)
		r.Blocks = append(r.Blocks, sent.Blocks...)
		r.Failed, r.turn = sent.Failed, sent.turn
	}
	return r
}

func cmdClear(ctx context.Context, c *Chat, _ Input) Reply {
	cur := c.Current()
	model, err := c.idleModel(ctx, cur, "clear")
	if err != nil {
		return refused(err)
	}
	var keep []sa.Message
	if model != "" {
		// The model is a setting, not context: it survives the clear.
		keep = append(keep, commandMessage(modelPrefix+model))
	}
	if _, err := c.rt.Sessions().Clear(ctx, cur.ID, runtime.HolderChat, keep...); err != nil {
		return failed(fmt.Sprintf("cannot clear %s: %s", sa.ShortID(cur.ID), runtime.Describe(err)))
	}
	return note("Context cleared: %s starts over (agents forked from it keep what they inherited).", sa.ShortID(cur.ID))
}

// idleModel returns the model /model set for an agent that must not be
// running a turn; the error says in one line why it cannot be used.
func (c *Chat) idleModel(ctx context.Context, s sa.Session, doing string) (string, error) {
	a, err := c.state(ctx, s.ID)
	if err != nil {
		return "", fmt.Errorf("cannot %s %s: %w", doing, sa.ShortID(s.ID), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.turn != nil {
		return "", &busyError{session: s, turn: a.turn}
	}
	return a.model, nil
}

func cmdAgents(ctx context.Context, c *Chat, _ Input) Reply {
	cur := c.Current()
	root, err := treeOf(ctx, c.store, cur.ID)
	if err != nil {
		return failed(fmt.Sprintf("cannot read the tree of agents: %v", err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var build func(n *node) *AgentTree
	build = func(n *node) *AgentTree {
		t := &AgentTree{Session: n.session, Status: StatusIdle, Current: n.session.ID == cur.ID}
		if a := c.agents[n.session.ID]; a != nil {
			t.Status = a.status
		}
		for _, k := range n.children {
			t.Children = append(t.Children, build(k))
		}
		return t
	}
	return Reply{Blocks: []Block{{Kind: BlockNote, Text: build(root).String()}}}
}

// inTree resolves what the user typed to an agent of the current tree.
func (c *Chat) inTree(ctx context.Context, ref string) (*node, error) {
	sess, err := c.store.ResolveSession(ctx, ref)
	switch {
	case errors.Is(err, sa.ErrNotFound):
		return nil, fmt.Errorf("no agent %s: /agents lists them", echo(ref))
	case err != nil:
		return nil, errors.New(errorText(err, ref))
	}
	root, err := treeOf(ctx, c.store, c.Current().ID)
	if err != nil {
		return nil, fmt.Errorf("cannot read the tree of agents: %w", err)
	}
	n := root.find(sess.ID)
	if n == nil {
		return nil, fmt.Errorf("%s is not in this chat's tree of agents: open it with 'superagents chat --session %s'", sa.ShortID(sess.ID), sess.ID)
	}
	return n, nil
}

// moveTo puts an agent in view and shows its header.
func (c *Chat) moveTo(s sa.Session) Reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = s
	r := Reply{Blocks: []Block{{Kind: BlockHeader, Session: s}}}
	if a := c.agents[s.ID]; a != nil && a.turn != nil {
		r.Blocks = append(r.Blocks, Block{Kind: BlockNote, Text: sa.ShortID(s.ID) + " is working: its answer follows when it is ready."})
	}
	return r
}

func cmdSwitch(ctx context.Context, c *Chat, in Input) Reply {
	n, err := c.inTree(ctx, in.Args)
	if err != nil {
		return failed(err.Error())
	}
	if n.session.ID == c.Current().ID {
		return note("Already on %s.", sa.ShortID(n.session.ID))
	}
	return c.moveTo(n.session)
}

func cmdParent(ctx context.Context, c *Chat, _ Input) Reply {
	cur := c.Current()
	root, err := treeOf(ctx, c.store, cur.ID)
	if err != nil {
		return failed(fmt.Sprintf("cannot read the tree of agents: %v", err))
	}
	n := root.find(cur.ID)
	if n == nil || n.parent == nil {
		return failed(fmt.Sprintf("%s is the root agent: it was not forked from another", sa.ShortID(cur.ID)))
	}
	return c.moveTo(n.parent.session)
}

func cmdKill(ctx context.Context, c *Chat, in Input) Reply {
	n, err := c.inTree(ctx, in.Args)
	if err != nil {
		return failed(err.Error())
	}
	if n.parent == nil {
		return failed(fmt.Sprintf("%s is the root agent and cannot be killed: /exit leaves the chat", sa.ShortID(n.session.ID)))
	}
	cur := c.Current()
	var stopped, cancelled int
	var killed []string
	inView := false
	c.mu.Lock()
	n.walk(func(d *node) {
		stopped++
		killed = append(killed, d.session.ID)
		inView = inView || d.session.ID == cur.ID
		a := c.agents[d.session.ID]
		if a == nil {
			a = &agentState{}
			c.agents[d.session.ID] = a
		}
		if a.turn != nil {
			a.turn.cancel()
			cancelled++
		}
		a.status, a.killed = StatusStopped, true
	})
	c.mu.Unlock()
	tasksCancelled, err := c.cancelTasks(ctx, killed)
	text := "Stopped " + sa.ShortID(n.session.ID)
	if stopped > 1 {
		text += " and " + plural(stopped-1, "agent") + " forked from it"
	}
	var what []string
	if cancelled > 0 {
		what = append(what, plural(cancelled, "running turn"))
	}
	if tasksCancelled > 0 {
		what = append(what, plural(tasksCancelled, "background task"))
	}
	if len(what) == 0 {
		text += " (no turn or task was running)."
	} else {
		text += " (" + strings.Join(what, " and ") + " cancelled)."
	}
	r := note("%s", text)
	if err != nil {
		r.Blocks = append(r.Blocks, Block{Kind: BlockError, Text: fmt.Sprintf("cannot cancel the background tasks of the stopped agents: %v", err)})
		r.Failed = true
	}
	if inView {
		moved := c.moveTo(n.parent.session)
		r.Blocks = append(r.Blocks, moved.Blocks...)
	}
	return r
}

func cmdModel(ctx context.Context, c *Chat, in Input) Reply {
	model := in.Args
	if model == "" {
		cur := c.Current()
		a, err := c.state(ctx, cur.ID)
		if err != nil {
			return failed(err.Error())
		}
		c.mu.Lock()
		m := a.model
		c.mu.Unlock()
		if m == "" {
			var err error
			if m, err = c.rt.Sessions().Model(cur); err != nil {
				return failed(err.Error())
			}
		}
		return note("%s uses %s; /model provider/model changes it.", sa.ShortID(cur.ID), m)
	}
	return c.setModel(ctx, model)
}

// setModel checks a model string and makes it the model of the agent's
// later turns, recorded in its session so that a restart keeps it.
func (c *Chat) setModel(ctx context.Context, model string) Reply {
	if err := c.rt.Agents().CheckModel(model); err != nil {
		return failed(errorText(err, model))
	}
	cur := c.Current()
	a, err := c.state(ctx, cur.ID)
	if err != nil {
		return failed(err.Error())
	}
	if _, err := c.rt.Sessions().Append(ctx, cur.ID, runtime.HolderChat, commandMessage(modelPrefix+model)); err != nil {
		return failed(fmt.Sprintf("cannot record the model: %s", runtime.Describe(err)))
	}
	c.mu.Lock()
	a.model = model
	c.mu.Unlock()
	return note("%s uses %s from its next turn.", sa.ShortID(cur.ID), model)
}

// helpColumn is the width of the command column of /help; longer usages
// put their explanation on the next line.
const helpColumn = 26

func cmdHelp(context.Context, *Chat, Input) Reply {
	var b strings.Builder
	b.WriteString("Type a message to talk to the agent in view, or a command:\n")
	for _, cmd := range Commands() {
		name := "/" + cmd.Name
		if cmd.Usage != "" {
			name += " " + cmd.Usage
		}
		if len(name) > helpColumn {
			name += "\n  " + strings.Repeat(" ", helpColumn)
		}
		fmt.Fprintf(&b, "  %-*s %s\n", helpColumn, name, cmd.Help)
	}
	b.WriteString(`Quoting: a prompt is the rest of the line as typed, or one "quoted string"
(with \" and \\ inside); --desc takes one word or a "quoted text".
/task's other options: --timeout N (seconds), --max-cost N (dollars),
--max-tokens N, and --isolation worktree (a git worktree of its own).
IDs may be shortened to a unique prefix of 4+ characters.
Background tasks show in the status line; their notifications appear here when
they end, and an idle agent is woken to answer them once all its tasks have
ended. A task may ask a question: it shows here, and /send ID answers it.
An agent stopped by /kill starts again when you send it a message.
`)
	b.WriteString("Keys: Enter sends; ↑/↓ go through the lines typed before; Tab completes a\n" +
		"command; Esc or Ctrl+C stops the running turn (or a wait); Ctrl+C twice at an\n" +
		"empty prompt, or Ctrl+D, leaves.")
	return note("%s", b.String())
}

func cmdExit(context.Context, *Chat, Input) Reply { return Reply{Quit: true} }

func cmdExitNow(context.Context, *Chat, Input) Reply { return Reply{Quit: true, Force: true} }

// plural says "1 agent" or "2 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// cmdCompact asks the agent's model for a summary of the conversation and
// stores it (the compaction shape of FORK-PIPE-2); it runs in the background,
// like a blocking /output, and holds the session meanwhile.
func cmdCompact(ctx context.Context, c *Chat, in Input) Reply {
	cur := c.Current()
	model, err := c.idleModel(ctx, cur, "compact")
	if err != nil {
		return refused(err)
	}
	instructions := in.parsed.text
	compactIt := func(ctx context.Context) (string, error) {
		res, err := c.rt.Sessions().Compact(ctx, cur.ID, runtime.HolderChat, model, instructions)
		if err != nil {
			return "", errors.New(runtime.Describe(err))
		}
		return fmt.Sprintf("Compacted %d messages of %s into a summary: its later turns start from it (history keeps everything).",
			res.Compacted, sa.ShortID(cur.ID)), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.newWait(cur.ID, compactIt)
	c.waits[w] = true
	r := note("Compacting %s: asking its model for a summary…", sa.ShortID(cur.ID))
	r.turn = w
	return r
}
