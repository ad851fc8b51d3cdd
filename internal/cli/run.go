package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

func (a *app) runCommand() *cobra.Command {
	var (
		asJSON, wait                bool
		agentName, model, sessionID string
	)
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one turn of an agent and print its answer",
		Long: `Run one turn of an agent: send the prompt, let the agent use its tools
until it answers, and print the answer. A new session is created unless
--session names one to continue. The prompt is the arguments joined by
spaces, or standard input when it is "-".

When standard output is a terminal the answer is streamed and the tools the
agent uses are shown on standard error. With --json every event is printed
as one JSON object per line: text, reasoning, tool_call, tool_result,
usage, then done (or error).

The agent may launch background tasks. They stop when run exits (on a
PostgreSQL database they run on the cluster's serve and worker nodes, and
go on), unless --wait: then run waits for them, prints each one's
notification as it ends, and, once all have ended, wakes the agent to
answer them. A notification the agent reads while it works is printed
before its answer.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := a.promptFrom(args)
			if err != nil {
				return err
			}
			if sessionID != "" && agentName != "" {
				return usagef("--agent and --session together: a session keeps its own agent")
			}
			ctx := cmd.Context()
			rt, err := a.openRuntime(ctx, model)
			if err != nil {
				return err
			}
			sess, err := a.runSession(ctx, rt, sessionID, sa.NewSession{Agent: agentName, Model: model, Origin: sa.OriginCLI, Title: titleFrom([]sa.Message{sa.UserMessage(prompt)})})
			if err != nil {
				return err
			}
			// The session is this command's until it exits (its wakes
			// included): no other turn, in any process, runs there meanwhile.
			turn, err := rt.Sessions().Begin(ctx, sess.ID, runtime.HolderRun)
			if err != nil {
				return err
			}
			defer turn.End()
			p := &turnPrinter{ctx: ctx, out: a.env.Stdout, errOut: a.env.Stderr, json: asJSON, stream: a.env.StdoutIsTerminal}
			if wait {
				p.notices, p.store, p.session = true, rt.Store(), sess.ID
				if p.mark, err = lastMessageID(ctx, rt.Store(), sess.ID); err != nil {
					return err
				}
			}
			opts := runtime.TurnOptions{OnEvent: p.event}
			ended := func(outcome sa.TurnOutcome, runErr error) error { return p.finish(sess, outcome, runErr) }
			if !wait {
				if err := ended(turn.Run(ctx, opts, sa.UserMessage(prompt))); err != nil {
					return err
				}
				a.warnTasksStop(rt, sess.ID)
				return nil
			}
			// Wait for the session's tasks, show their notifications, and
			// wake the agent once they all ended so it can use them: the
			// one turn loop, whose waker decides, once per batch.
			return turn.Settle(ctx, runtime.SettleOptions{TurnOptions: opts, Ended: ended,
				BeforeWake: func(context.Context) error { return p.notifications(0) }}, sa.UserMessage(prompt))
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "after the turn, wait for the session's background tasks, print their notifications, and let the agent answer them")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print events as JSON lines")
	cmd.Flags().StringVar(&agentName, "agent", "", "agent profile of a new session (default general; see 'superagents agents')")
	cmd.Flags().StringVar(&model, "model", "", "model as provider/model, e.g. anthropic/claude-sonnet-4-5 or offline (default: the agent's, then the configured one)")
	cmd.Flags().StringVar(&sessionID, "session", "", "continue this session instead of starting one")
	return cmd
}

// warnTasksStop warns that the session's background tasks running here
// stop when run exits without --wait.
func (a *app) warnTasksStop(rt *runtime.Runtime, sessionID string) {
	if n := rt.Tasks().Active(sessionID); n > 0 {
		fmt.Fprintf(a.env.Stderr, "warning: %d background task(s) of this session stop now that run exits; use --wait to let them finish\n", n)
	}
}

// runSession returns the session a run continues (sessionID, which must
// be one a turn may run in), or the new one it creates.
func (a *app) runSession(ctx context.Context, rt *runtime.Runtime, sessionID string, ns sa.NewSession) (sa.Session, error) {
	if sessionID == "" {
		return rt.Sessions().Create(ctx, ns)
	}
	sess, err := a.resolveSession(ctx, sessionID)
	if err != nil {
		return sa.Session{}, err
	}
	if err := rt.Sessions().CheckWritable(ctx, sess.ID); err != nil {
		return sa.Session{}, err
	}
	if err := rt.Sessions().Check(sess); err != nil {
		return sa.Session{}, err
	}
	return sess, nil
}

// promptFrom joins the arguments, or reads standard input for "-".
func (a *app) promptFrom(args []string) (string, error) { return a.textFrom(args, "prompt") }

// textFrom is a text a command takes (what names it): the arguments
// joined, or standard input for "-".
func (a *app) textFrom(args []string, what string) (string, error) {
	text := strings.Join(args, " ")
	if text == "-" {
		data, err := io.ReadAll(a.env.Stdin)
		if err != nil {
			return "", fmt.Errorf("read the %s from standard input: %w", what, err)
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return "", usagef("no %s: give it as arguments, or \"-\" to read standard input", what)
	}
	return text, nil
}

// turnPrinter shows a turn: as JSON lines, streamed to a terminal, or as
// the final answer only.
type turnPrinter struct {
	ctx         context.Context
	out, errOut io.Writer
	json        bool
	stream      bool
	// notices (run --wait): the task notifications the session receives
	// are printed too, in the order of the session, so that each comes
	// before the answer that reacts to it.
	notices bool
	store   sa.SessionReader
	session string

	mu       sync.Mutex
	streamed bool  // some text went out already
	mark     int64 // the newest message of the session whose notification was printed, or that is not one
	answer   int64 // the newest assistant message
}

// jsonEvent is one line of `run --json`.
type jsonEvent struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id,omitempty"`
	Text       string          `json:"text,omitempty"`
	CallID     string          `json:"call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     *string         `json:"output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Usage      *sa.Usage       `json:"usage,omitempty"`
	Steps      int             `json:"steps,omitempty"`
	ToolCalls  int             `json:"tool_calls,omitempty"`
	StopReason sa.StopReason   `json:"stop_reason,omitempty"`
	Error      string          `json:"error,omitempty"`
}

func (p *turnPrinter) line(e jsonEvent) {
	b, _ := json.Marshal(e)
	p.out.Write(append(b, '\n'))
}

func (p *turnPrinter) event(e sa.TurnEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.Type == sa.TurnEventMessage && e.Message.Role == sa.RoleAssistant:
		p.answer = e.Message.ID
	case e.Type == sa.TurnEventStep && p.notices && (p.json || p.stream):
		// What the model is about to read goes out before what it writes.
		// A notification stored from now until the model request reads
		// the session is printed when the turn ends.
		if err := p.printNotifications(0); err != nil {
			fmt.Fprintf(p.errOut, "warning: %v\n", err)
		}
	}
	if p.json {
		switch e.Type {
		case sa.TurnEventTextDelta:
			p.line(jsonEvent{Type: "text", Text: e.Text})
		case sa.TurnEventReasoningDelta:
			p.line(jsonEvent{Type: "reasoning", Text: e.Text})
		case sa.TurnEventToolStart:
			p.line(jsonEvent{Type: "tool_call", CallID: e.Call.CallID, Name: e.Call.Name, Input: e.Call.Input})
		case sa.TurnEventToolEnd:
			out := e.Result.Output
			p.line(jsonEvent{Type: "tool_result", CallID: e.Result.CallID, Name: e.Result.Name, Output: &out, IsError: e.Result.IsError})
		case sa.TurnEventMessage:
			if m := e.Message; m.Role == sa.RoleAssistant && !m.Usage.IsZero() {
				u := m.Usage
				p.line(jsonEvent{Type: "usage", Usage: &u})
			}
		}
		return
	}
	if !p.stream {
		return
	}
	switch e.Type {
	case sa.TurnEventTextDelta:
		io.WriteString(p.out, e.Text)
		p.streamed = true
	case sa.TurnEventToolStart:
		if p.streamed {
			io.WriteString(p.out, "\n")
			p.streamed = false
		}
		fmt.Fprintf(p.errOut, "  → %s %s\n", e.Call.Name, truncateRunes(oneLineText(string(e.Call.Input)), 100))
	case sa.TurnEventToolEnd:
		if e.Result.IsError {
			fmt.Fprintf(p.errOut, "  ✗ %s: %s\n", e.Call.Name, truncateRunes(oneLineText(e.Result.Output), 100))
		}
	}
}

// finish prints the end of the turn and returns the turn's error. The
// notifications the turn read before its answer come first.
func (p *turnPrinter) finish(sess sa.Session, o sa.TurnOutcome, runErr error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if runErr == nil && p.answer > p.mark {
		if err := p.printNotifications(p.answer); err != nil {
			return err
		}
	}
	if p.json {
		if runErr != nil {
			p.line(jsonEvent{Type: "error", SessionID: sess.ID, Error: runErr.Error()})
			return runErr
		}
		u := o.Usage
		p.line(jsonEvent{Type: "done", SessionID: sess.ID, Text: o.Text, Steps: o.Steps, ToolCalls: o.ToolCalls, Usage: &u, StopReason: o.StopReason})
		return nil
	}
	if runErr != nil {
		if p.streamed {
			io.WriteString(p.out, "\n")
		}
		return runErr
	}
	switch {
	case p.stream:
		io.WriteString(p.out, "\n")
		fmt.Fprintf(p.errOut, "[session %s]\n", sa.ShortID(sess.ID))
	default:
		io.WriteString(p.out, o.Text+"\n")
	}
	return nil
}

// lastMessageID returns the id of a session's newest message (0 if none).
func lastMessageID(ctx context.Context, st sa.SessionReader, sessionID string) (int64, error) {
	hist, err := st.History(ctx, sessionID)
	if err != nil || len(hist) == 0 {
		return 0, err
	}
	return hist[len(hist)-1].ID, nil
}

// notifications prints the task notifications stored after those
// printed before, up to the message before (all of them when 0).
func (p *turnPrinter) notifications(before int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.printNotifications(before)
}

// printNotifications is notifications with p.mu held.
func (p *turnPrinter) printNotifications(before int64) error {
	if !p.notices {
		return nil
	}
	hist, err := p.store.History(p.ctx, p.session)
	if err != nil {
		return err
	}
	for _, m := range hist {
		if m.ID <= p.mark || before > 0 && m.ID >= before {
			continue
		}
		p.mark = m.ID
		if m.Kind != sa.KindNotification {
			continue
		}
		switch {
		case p.json:
			p.line(jsonEvent{Type: "notification", SessionID: p.session, Text: m.Text()})
		default:
			if p.streamed {
				io.WriteString(p.out, "\n")
				p.streamed = false
			}
			fmt.Fprintln(p.out, m.Text())
		}
	}
	return nil
}
