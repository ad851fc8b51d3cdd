package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

func (a *app) taskSendCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE",
		Short: "Send a message to a running task, or answer the question it asks",
		Long: `Send a message to a queued or running task without stopping it: the task
reads it before its next model request (a tool already running is not
interrupted), whichever superagents process runs it. When the task waits
for an answer to its question ('task output' shows it), the message is the
answer: yes or no for a permission question, one of the choices for a
question that has them. The message is the arguments joined by spaces, or
standard input when it is "-".

A task that has ended cannot be sent anything: resume a completed one with
'superagents task resume' instead.`,
		Example: `  superagents task send k3x9qa "Skip the vendored code: only internal/ matters."
  superagents task send k3x9qa blue
  git diff | superagents task send k3x9qa -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.textFrom(args[1:], "message")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rt, err := a.openSessions(ctx)
			if err != nil {
				return err
			}
			tt, err := tasktools.New(rt)
			if err != nil {
				return err
			}
			r, err := tt.SendTool(ctx, "", tasktools.FromUser, tasktools.SendInput{TaskID: args[0], Message: text})
			if err != nil {
				return resumeInstead(ctx, rt, args[0], err)
			}
			return a.printReply(r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// resumeInstead words the refusal of a send to a completed task with the
// command that continues it; other errors are left as they are.
func resumeInstead(ctx context.Context, rt *runtime.Runtime, ref string, err error) error {
	if !errors.Is(err, sa.ErrConflict) {
		return err
	}
	t, rerr := rt.Store().ResolveTask(ctx, ref)
	if rerr != nil || t.Status != sa.TaskCompleted {
		return err
	}
	return fmt.Errorf("%w: task %s (%q) has completed: resume it to send a follow-up: superagents task resume %s PROMPT",
		sa.ErrConflict, sa.ShortID(t.ID), t.Description, t.ID)
}

// answerCommand is how a person at the command line answers a task's
// question (see tasktools.Tools.OutputToolFor).
func answerCommand(taskID string) string {
	return "Answer it with: superagents task send " + taskID + " ANSWER"
}

// outputJSON is task output --json: the task's output and the messages
// sent to it, if any (left out otherwise, as partial is).
type outputJSON struct {
	tasktools.OutputView
	Messages []sa.TaskMessage `json:"messages,omitempty"`
}

// printOutput prints a task's output (OutputToolFor's reply) with the
// messages sent to the task.
func (a *app) printOutput(ctx context.Context, rt *runtime.Runtime, r tasktools.Reply, asJSON bool) error {
	out, ok := r.Data.(tasktools.OutputView)
	if !ok {
		return a.printReply(r, asJSON)
	}
	msgs, err := rt.Tasks().Messages(ctx, out.ID)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.env.Stdout, outputJSON{OutputView: out, Messages: msgs})
	}
	if text := tasktools.MessagesText(msgs); text != "" {
		r.Text += "\n\n" + text
	}
	return a.printReply(r, false)
}
