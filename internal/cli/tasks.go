package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

func (a *app) tasksCommand() *cobra.Command {
	var (
		asJSON           bool
		sessionID, state string
		limit            int
	)
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List background tasks, newest first",
		Long: `List background tasks, newest first: all of them, or those a session
launched (--session). "(forked)" marks tasks that started with their
parent's context, "(resumed)" tasks that were continued.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			status, err := sa.ParseTaskStatus(state)
			if err != nil {
				return usagef("unknown --status %q: use one of %s", state, sa.TaskStatusNames())
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			// Tasks of a process that died are ended first, so that none
			// is listed as running when nothing runs it.
			if _, err := runtime.Reconcile(cmd.Context(), st); err != nil {
				return err
			}
			filter := sa.TaskFilter{Status: status, Limit: limit}
			if sessionID != "" {
				sess, err := st.ResolveSession(cmd.Context(), sessionID)
				if err != nil {
					return err
				}
				filter.ParentSessionID = sess.ID
			}
			list, err := st.ListTasks(cmd.Context(), filter)
			if err != nil {
				return err
			}
			if asJSON {
				costed, err := a.costedTasks(cmd.Context(), st, list)
				if err != nil {
					return err
				}
				return writeJSON(a.env.Stdout, costed)
			}
			return writeTaskTable(a.env.Stdout, list, time.Now())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&sessionID, "session", "", "only the tasks this session launched")
	cmd.Flags().StringVar(&state, "status", "", "only tasks with this status")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many (0: all)")
	return cmd
}

// writeTaskTable prints tasks as an aligned table.
func writeTaskTable(w io.Writer, list []sa.Task, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No background tasks found")
		return err
	}
	rows := make([][]string, len(list))
	for i, t := range list {
		id := sa.ShortID(t.ID)
		if marks := tasktools.Indicators(t); marks != "" {
			id += " " + marks
		}
		took := t.Duration(now)
		rows[i] = []string{id, string(t.Status), t.Agent, sa.ShortID(t.ParentSessionID), took.Round(time.Second).String(),
			fmt.Sprint(t.Progress.ToolCalls), truncateRunes(oneLineText(t.Description), 50)}
	}
	return writeTable(w, []string{"ID", "STATUS", "AGENT", "PARENT", "TIME", "TOOLS", "DESCRIPTION"}, rows)
}

func (a *app) taskCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Launch, inspect, message, cancel or resume one background task",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.taskOutputCommand(), a.taskSendCommand(), a.taskCancelCommand(), a.taskResumeCommand(), a.taskLaunchCommand(), a.taskWorkCommand())
	return cmd
}

func (a *app) taskOutputCommand() *cobra.Command {
	var (
		asJSON, block bool
		timeout       int
	)
	cmd := &cobra.Command{
		Use:   "output ID",
		Short: "Show a task's result, or its progress while it runs",
		Long: `Show a task's result when it has completed (and mark it read), or its
status and progress while it runs, with the question it waits to have
answered, if any ('task send' answers it), and the messages sent to it.
--block waits until it ends or the timeout passes (seconds; default 60, at
most 600).`,
		Args: exactArgs(1, "one task id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if most := int(sa.MaxBlockTimeout.Seconds()); timeout < 1 || timeout > most {
				return usagef("--timeout must be between 1 and %d seconds, not %d", most, timeout)
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			tt, err := tasktools.New(rt)
			if err != nil {
				return err
			}
			r, err := tt.OutputToolFor(cmd.Context(), "", tasktools.OutputInput{TaskID: args[0], Block: block, Timeout: timeout}, answerCommand)
			if err != nil {
				return err
			}
			return a.printOutput(cmd.Context(), rt, r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&block, "block", false, "wait until the task ends")
	cmd.Flags().IntVar(&timeout, "timeout", 60, "with --block: the most seconds to wait")
	return cmd
}

func (a *app) printReply(r tasktools.Reply, asJSON bool) error {
	if asJSON {
		return writeJSON(a.env.Stdout, r.Data)
	}
	_, err := fmt.Fprintln(a.env.Stdout, r.Text)
	return err
}

func (a *app) taskCancelCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a queued, running or resuming task",
		Long: `Cancel a task: it is ended as cancelled at once, and its model stream and
tools stop (a task running in another superagents process stops within a
second, when that process sees the change).`,
		Args: exactArgs(1, "one task id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			tt, err := tasktools.New(rt)
			if err != nil {
				return err
			}
			r, err := tt.CancelTool(cmd.Context(), "", tasktools.CancelInput{TaskID: args[0]})
			if err != nil {
				return err
			}
			return a.printReply(r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) taskResumeCommand() *cobra.Command {
	var asJSON, wait bool
	cmd := &cobra.Command{
		Use:   "resume ID PROMPT",
		Short: "Send a follow-up to a completed task; it runs in the background",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.launchWorker(cmd.Context(), workerRequest{resume: args[0], prompt: strings.Join(args[1:], " ")}, asJSON, wait)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&wait, "wait", false, "stay until the task ends and print its result")
	return cmd
}

func (a *app) taskLaunchCommand() *cobra.Command {
	var (
		asJSON, fork, wait          bool
		session, agent, description string
		timeout                     int64
		budget                      sa.Budget
		isolation                   string
	)
	cmd := &cobra.Command{
		Use:   "launch --session ID --agent NAME --description TEXT [--fork] [--isolation worktree] PROMPT",
		Short: "Launch a background task for a session",
		Long: `Launch a background task as if the session's agent had called
superagents_task: the task runs in a background superagents process, this
command prints its id and returns, and the session gets a notification when
the task ends. --fork gives the task the session's context. --isolation
worktree runs it in a git worktree of its own, on a branch named after it.
--wait stays until the task ends and prints its result instead.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" {
				return usagef("--session is required: the session the task reports to")
			}
			req := workerRequest{session: session, agent: agent, description: description,
				fork: fork, timeout: timeout, budget: budget, isolation: isolation, prompt: strings.Join(args, " ")}
			// Refused here, before a background worker is started.
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			if err := rt.Tasks().Check(req.request("")); err != nil {
				return taskRequestError(err)
			}
			return a.launchWorker(cmd.Context(), req, asJSON, wait)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&fork, "fork", false, "give the task the session's context")
	cmd.Flags().BoolVar(&wait, "wait", false, "stay until the task ends and print its result")
	cmd.Flags().StringVar(&session, "session", "", "the parent session (required)")
	cmd.Flags().StringVar(&agent, "agent", "", "the agent to run (required; see 'superagents agents')")
	cmd.Flags().StringVar(&description, "description", "", "a few words naming the task (required)")
	cmd.Flags().Int64Var(&timeout, "timeout", 0, "stop the task after this many seconds (default and most: tasks.timeout)")
	cmd.Flags().Float64Var(&budget.MaxCost, "max-cost", 0, "US dollars the task and the tasks it launches may spend (default and cap: tasks.max_cost)")
	cmd.Flags().Int64Var(&budget.MaxTokens, "max-tokens", 0, "tokens the task and the tasks it launches may use (default and cap: tasks.max_tokens)")
	cmd.Flags().StringVar(&isolation, "isolation", "", `"worktree": work in a git worktree of its own (default: the agent profile's)`)
	return cmd
}

// workerRequest is a launch or resume handed to a background worker.
type workerRequest struct {
	session, agent, description string
	fork                        bool
	timeout                     int64
	budget                      sa.Budget
	isolation                   string
	resume, prompt              string
}

func (r workerRequest) args() []string {
	args := []string{"task", "work", "--prompt", r.prompt}
	if r.resume != "" {
		return append(args, "--resume", r.resume)
	}
	args = append(args, "--session", r.session, "--agent", r.agent, "--description", r.description)
	if r.fork {
		args = append(args, "--fork")
	}
	if r.timeout > 0 {
		args = append(args, "--timeout", fmt.Sprint(r.timeout))
	}
	if r.budget.MaxCost > 0 {
		args = append(args, "--max-cost", strconv.FormatFloat(r.budget.MaxCost, 'g', -1, 64))
	}
	if r.budget.MaxTokens > 0 {
		args = append(args, "--max-tokens", fmt.Sprint(r.budget.MaxTokens))
	}
	if r.isolation != "" {
		args = append(args, "--isolation", r.isolation)
	}
	return args
}

// launchWorker starts a detached worker process that launches (or
// resumes) the task and runs it, reads back the task id or the error, and
// returns; with wait it stays and prints the result.
func (a *app) launchWorker(ctx context.Context, req workerRequest, asJSON, wait bool) error {
	if wait {
		// In this process: launch, then wait.
		rt, err := a.openRuntime(ctx, "")
		if err != nil {
			return err
		}
		tt, err := tasktools.New(rt)
		if err != nil {
			return err
		}
		t, err := a.workerLaunch(ctx, rt, req)
		if err != nil {
			return err
		}
		return a.waitAndPrint(ctx, tt, t.ID, asJSON)
	}
	dir, err := a.resolveDataDir()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the superagents binary: %w", err)
	}
	logDir := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return fmt.Errorf("worker log directory: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, "worker-"+time.Now().Format("20060102-150405.000")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("worker log: %w", err)
	}
	defer logFile.Close()
	args := []string{"--data-dir", dir}
	if a.workspace != "" {
		ws, err := a.workspaceDir()
		if err != nil {
			return err
		}
		args = append(args, "--workspace", ws)
	}
	cmd := exec.Command(self, append(args, req.args()...)...)
	cmd.Env = a.env.Environ
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command and its terminal
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start a background worker: %w", err)
	}
	line, readErr := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Release()
	verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch {
	case verb == "ok":
		if asJSON {
			return writeJSON(a.env.Stdout, map[string]string{"id": rest, "log": logFile.Name()})
		}
		_, err := fmt.Fprintln(a.env.Stdout, rest)
		return err
	case verb == "invalid":
		return usagef("%s", rest)
	case verb == "error":
		return errors.New(rest)
	}
	return fmt.Errorf("the background worker did not start (see %s): %v", logFile.Name(), readErr)
}

// request is the task request a worker makes, for the parent session
// (its id; "" before it is resolved).
func (r workerRequest) request(parent string) runtime.TaskRequest {
	return runtime.TaskRequest{Parent: parent, Description: r.description, Prompt: r.prompt, Agent: r.agent, Fork: r.fork,
		Resume: r.resume, Timeout: r.timeout, MaxCost: r.budget.MaxCost, MaxTokens: r.budget.MaxTokens, Isolation: r.isolation}
}

// taskFlags are the flags of task launch, by the task request's field
// they set.
var taskFlags = map[string]string{
	runtime.FieldDescription: "--description",
	runtime.FieldPrompt:      "PROMPT",
	runtime.FieldAgent:       "--agent",
	runtime.FieldTimeout:     "--timeout",
	runtime.FieldMaxCost:     "--max-cost",
	runtime.FieldMaxTokens:   "--max-tokens",
	runtime.FieldIsolation:   "--isolation",
}

// taskRequestError words a refusal of the task request policy with the
// command line's names of the fields: a usage error.
func taskRequestError(err error) error {
	var re *runtime.RequestError
	if !errors.As(err, &re) {
		return err
	}
	if flag, ok := taskFlags[re.Field]; ok {
		return usagef("%s", re.Named(flag))
	}
	return usagef("%s", re.Error())
}

// workerLaunch launches or resumes the request's task.
func (a *app) workerLaunch(ctx context.Context, rt *runtime.Runtime, req workerRequest) (sa.Task, error) {
	parent := ""
	if req.resume == "" {
		st, err := a.openStore(ctx)
		if err != nil {
			return sa.Task{}, err
		}
		sess, err := st.ResolveSession(ctx, req.session)
		if err != nil {
			return sa.Task{}, err
		}
		parent = sess.ID
	}
	t, _, err := rt.Tasks().Submit(ctx, req.request(parent))
	return t, taskRequestError(err)
}

// taskWorkCommand is the background worker: it launches or resumes one
// task, reports the id (or the error) on its first line of output, and
// runs the task to its end.
func (a *app) taskWorkCommand() *cobra.Command {
	var req workerRequest
	cmd := &cobra.Command{
		Use:    "work",
		Short:  "Run one task in the background (started by task launch and task resume)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			report := func(verb, text string) {
				fmt.Fprintf(a.env.Stdout, "%s %s\n", verb, oneLine(text))
				if f, ok := a.env.Stdout.(*os.File); ok {
					f.Close() // the launcher stops reading here
				}
			}
			rt, err := a.openRuntime(ctx, "")
			if err != nil {
				report("error", err.Error())
				return err
			}
			t, err := a.workerLaunch(ctx, rt, req)
			if err != nil {
				// The launcher exits as this process would have: a usage
				// error, or a failure (a task whose state refuses it too).
				verb := "error"
				if exitCode(err) == ExitUsage {
					verb = "invalid"
				}
				report(verb, tasktools.Message(err))
				return err
			}
			report("ok", t.ID)
			fmt.Fprintf(a.env.Stderr, "running task %s\n", t.ID)
			// Until the task this process runs has ended (on a PostgreSQL
			// database the cluster's nodes run it: nothing to wait for).
			return rt.Tasks().WaitLocal(ctx, t.ParentSessionID)
		},
	}
	cmd.Flags().StringVar(&req.session, "session", "", "")
	cmd.Flags().StringVar(&req.agent, "agent", "", "")
	cmd.Flags().StringVar(&req.description, "description", "", "")
	cmd.Flags().StringVar(&req.prompt, "prompt", "", "")
	cmd.Flags().StringVar(&req.resume, "resume", "", "")
	cmd.Flags().BoolVar(&req.fork, "fork", false, "")
	cmd.Flags().Int64Var(&req.timeout, "timeout", 0, "")
	cmd.Flags().Float64Var(&req.budget.MaxCost, "max-cost", 0, "")
	cmd.Flags().Int64Var(&req.budget.MaxTokens, "max-tokens", 0, "")
	cmd.Flags().StringVar(&req.isolation, "isolation", "", "")
	return cmd
}

// waitAndPrint waits for a task to end and prints its output. A question
// the task asks meanwhile is shown on stderr, with how to answer it, and
// the wait goes on.
func (a *app) waitAndPrint(ctx context.Context, tt *tasktools.Tools, taskID string, asJSON bool) error {
	for {
		r, err := tt.OutputToolFor(ctx, "", tasktools.OutputInput{TaskID: taskID, Block: true, Timeout: int(sa.MaxBlockTimeout / time.Second)}, answerCommand)
		if err != nil {
			return err
		}
		out, _ := r.Data.(tasktools.OutputView)
		if out.Told {
			fmt.Fprintf(a.env.Stderr, "%s\n", r.Text)
			continue
		}
		if !out.TimedOut {
			return a.printReply(r, asJSON)
		}
	}
}
