package frontends

import (
	"context"
	"errors"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/repl"
)

// Chat opens the chat a request names and runs it in the terminal, or on
// piped lines.
func (WaysIn) Chat(ctx context.Context, req cli.ChatRequest) error {
	sessionID := req.SessionID
	if req.Continue {
		sess, err := repl.LatestSession(ctx, req.Runtime.Store())
		if errors.Is(err, sa.ErrNotFound) {
			return cli.Usagef("--continue: there is no session yet; run 'superagents' to start one")
		}
		if err != nil {
			return err
		}
		sessionID = sess.ID
	}
	chat, err := repl.Open(ctx, repl.Options{Runtime: req.Runtime, Session: sessionID, Agent: req.Agent, Model: req.Model})
	if err != nil {
		return err
	}
	var runErr error
	if req.Terminal {
		runErr = repl.RunTerminal(ctx, chat, repl.TerminalOptions{
			In: req.Stdin, Out: req.Stdout, Environ: req.Environ,
			HistoryFile: req.HistoryFile, Notice: req.Notice,
		})
	} else {
		runErr = repl.RunPlain(ctx, chat, req.Stdin, req.Stdout)
	}
	if err := chat.Close(); err != nil {
		fmt.Fprintf(req.Stderr, "warning: %v\n", err)
	}
	return runErr
}
