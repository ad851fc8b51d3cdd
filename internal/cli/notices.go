package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

const noticesLong = `Take the notices of a host conversation's background tasks that it was not
given yet, and print them: a notice is given to a conversation once, by
this command or by the next answer of superagents' MCP tools, whichever
comes first. --host names the host (claude-code, codex, opencode),
--session its own id of the conversation.

With --follow (no --session) it serves the superagents plugin of OpenCode,
which starts it: it prints one JSON object a line as the tasks of the
host's conversations are launched ({"type":"launched"}) and end
({"type":"ended"}), and when a conversation is due to be woken
({"type":"due"}: a batch of its tasks has ended, none runs, and not only
by a cancel); each line it reads, {"take":"SESSION","id":N}, takes that
conversation's notices and answers {"type":"notices","id":N,"text":...}
("" when there are none). It ends when its standard input closes.`

func (a *app) noticesCommand() *cobra.Command {
	var host, session string
	var follow bool
	cmd := &cobra.Command{
		Use:   "notices --host HOST (--session ID | --follow)",
		Short: "Take the notices of a host conversation's ended tasks",
		Long:  noticesLong,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case host != "claude-code" && host != "codex" && host != "opencode":
				return usagef("--host must be claude-code, codex or opencode, not %q", host)
			case follow == (session != ""):
				return usagef("give one of --session ID and --follow")
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			if follow {
				return followNotices(cmd.Context(), rt, host, a.env.Stdin, a.env.Stdout)
			}
			text, err := takeNotices(cmd.Context(), rt, host, session)
			if err != nil || text == "" {
				return err
			}
			_, err = fmt.Fprintln(a.env.Stdout, text)
			return err
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the host: claude-code, codex or opencode")
	cmd.Flags().StringVar(&session, "session", "", "the host's id of the conversation")
	cmd.Flags().BoolVar(&follow, "follow", false, "serve the OpenCode plugin: JSON lines on standard input and output")
	return cmd
}

// takeNotices takes a conversation's notices, as the text a host's model
// is given ("" when there are none).
func takeNotices(ctx context.Context, rt *runtime.Runtime, host, session string) (string, error) {
	notices, err := rt.Sessions().TakeNotices(ctx, host, session)
	if err != nil || len(notices) == 0 {
		return "", err
	}
	return tasktools.NoticesHeader + strings.Join(notices, "\n\n"), nil
}

// noticeFollower follows the change log for the tasks of one host's
// conversations and answers the plugin's takes.
type noticeFollower struct {
	rt   *runtime.Runtime
	host string

	outMu sync.Mutex
	enc   *json.Encoder

	convs map[string]string // store session → host conversation ("" for none)
	woke  map[string]int64  // store session → the notification it was due for
	fresh map[string]bool   // store session → an ending not by a cancel since
}

// followLine is one line the follower prints.
type followLine struct {
	Type        string `json:"type"`
	ID          int64  `json:"id,omitempty"`
	Session     string `json:"session,omitempty"`
	Task        string `json:"task,omitempty"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status,omitempty"`
	Text        string `json:"text"`
	Error       string `json:"error,omitempty"`
}

// followNotices serves the plugin until stdin closes or ctx ends.
func followNotices(ctx context.Context, rt *runtime.Runtime, host string, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &noticeFollower{rt: rt, host: host, enc: json.NewEncoder(stdout),
		convs: map[string]string{}, woke: map[string]int64{}, fresh: map[string]bool{}}
	cursor := rt.Events().Now()
	go func() {
		defer cancel() // the plugin's end (stdin closed) ends the command
		f.serveTakes(ctx, stdin)
	}()
	f.print(followLine{Type: "ready"})
	for {
		ch, err := cursor.Next(ctx)
		if err != nil {
			return nil // ctx ended: stdin closed or the command was stopped
		}
		f.change(ctx, ch)
	}
}

// serveTakes answers each take the plugin asks for.
func (f *noticeFollower) serveTakes(ctx context.Context, stdin io.Reader) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		var req struct {
			Take string `json:"take"`
			ID   int64  `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.Take == "" {
			f.print(followLine{Type: "error", ID: req.ID, Error: "not a take: " + sc.Text()})
			continue
		}
		text, err := takeNotices(ctx, f.rt, f.host, req.Take)
		line := followLine{Type: "notices", ID: req.ID, Session: req.Take, Text: text}
		if err != nil {
			line.Error = err.Error()
		}
		f.print(line)
	}
}

func (f *noticeFollower) print(l followLine) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.enc.Encode(l) //nolint:errcheck // a closed stdout ends the plugin, and with it stdin
}

// change tells the plugin of a task of one of the host's conversations.
func (f *noticeFollower) change(ctx context.Context, ch sa.Change) {
	ends := runtime.EndsTask(ch)
	if ch.Kind != sa.ChangeTaskCreated && !ends && ch.Kind != sa.ChangeTaskQuestion &&
		(ch.Kind != sa.ChangeSessionMessage || ch.TaskID == "") {
		return
	}
	conv := f.conversation(ctx, ch.SessionID)
	if conv == "" {
		return
	}
	switch {
	case ch.Kind == sa.ChangeTaskCreated, ends:
		t, err := ch.Task()
		if err != nil {
			return
		}
		typ := "launched"
		if ends {
			typ = "ended"
			// A batch a cancel alone ended wakes no one: the user chose it.
			f.fresh[ch.SessionID] = f.fresh[ch.SessionID] || ch.Kind != sa.ChangeTaskCancelled
		}
		f.print(followLine{Type: typ, Session: conv, Task: t.ID, Description: t.Description, Status: string(t.Status)})
	case ch.Kind == sa.ChangeTaskQuestion:
		f.fresh[ch.SessionID] = true
	}
	f.check(ctx, ch.SessionID, conv)
}

// check says a conversation is due once for the same notifications.
func (f *noticeFollower) check(ctx context.Context, session, conv string) {
	if !f.fresh[session] {
		return
	}
	mark, err := f.rt.Tasks().WakeMark(ctx, session)
	if err != nil || mark == 0 || mark <= f.woke[session] {
		return
	}
	f.woke[session], f.fresh[session] = mark, false
	f.print(followLine{Type: "due", Session: conv})
}

// conversation is the host conversation a store session is the MCP
// session of, for this host ("" for none).
func (f *noticeFollower) conversation(ctx context.Context, session string) string {
	if conv, ok := f.convs[session]; ok {
		return conv
	}
	host, conv, ok, err := f.rt.Sessions().ConversationOf(ctx, session)
	if err != nil {
		return "" // looked up again at its next change
	}
	if !ok || host != f.host {
		conv = ""
	}
	f.convs[session] = conv
	return conv
}
