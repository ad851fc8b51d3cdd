package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"
)

// chatFlags are the options of a chat, taken by `superagents chat` and by
// `superagents` alone.
type chatFlags struct {
	agent, model, session string
	resume                bool
}

func (f *chatFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.agent, "agent", "", "agent profile of a new chat (default general; see 'superagents agents')")
	cmd.Flags().StringVar(&f.model, "model", "", "model as provider/model, e.g. anthropic/claude-sonnet-4-5 or offline (default: the agent's, then the configured one)")
	cmd.Flags().StringVar(&f.session, "session", "", "open this session (an id or a unique prefix) with its tree of agents")
	cmd.Flags().BoolVar(&f.resume, "continue", false, "open the session that was active last, with its tree of agents")
}

const chatLong = `Chat with an agent. Type a message to talk to the agent in view; lines
that start with / are commands (/help lists them): /fork makes a child
that inherits the whole conversation, /agents shows the tree of agents,
/switch and /parent move between them, /kill stops one. Agents launch
background tasks (and /task does for you): their progress shows in the
status line, their notifications in the chat, and an idle agent is woken
to answer them once all its tasks have ended. Quitting stops the tasks
still running (the chat asks first).

With --session or --continue the chat opens an earlier session and its
tree: the oldest ancestor it was forked from and every agent forked from
that one.

When standard input or output is not a terminal, lines are read from
standard input (messages and commands alike) and the transcript is printed
as plain text, so that a script can drive the chat. When the input ends,
the chat waits for the background tasks and the turns they wake before it
exits. The exit status is 1 when a line failed.`

func (a *app) chatCommand() *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat with agents in the terminal (the default command)",
		Long:  chatLong,
		Args:  exactArgs(0, "no arguments (type your messages in the chat)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.chat(cmd, f)
		},
	}
	f.bind(cmd)
	return cmd
}

// chatHistoryFile keeps the lines typed in the terminal, in the data
// directory.
const chatHistoryFile = "chat_history"

// chat checks the flags, opens the runtime and the session they name, and
// hands the chat to the way in that runs it.
func (a *app) chat(cmd *cobra.Command, f chatFlags) error {
	switch {
	case f.session != "" && f.resume:
		return usagef("--session and --continue together: give one")
	case (f.session != "" || f.resume) && f.agent != "":
		return usagef("--agent starts a new chat: an existing session keeps its own agent")
	}
	ways, err := a.waysIn("chat")
	if err != nil {
		return err
	}
	proc, err := a.process()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	terminal := a.env.StdinIsTerminal && a.env.StdoutIsTerminal
	// The terminal chat shows the model notice in its transcript: printed
	// before it starts, a line wider than the screen would be drawn over.
	a.holdNotice = terminal
	rt, err := a.openRuntime(ctx, f.model)
	if err != nil {
		return err
	}
	req := ChatRequest{
		Process: proc, Runtime: rt, Continue: f.resume, Agent: f.agent, Model: f.model,
		Terminal: terminal, HistoryFile: filepath.Join(proc.DataDir, chatHistoryFile), Notice: a.heldNotice,
	}
	if f.session != "" {
		sess, err := a.resolveSession(ctx, f.session)
		if err != nil {
			return err
		}
		req.SessionID = sess.ID
	}
	return ways.Chat(ctx, req)
}
