package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

func (a *app) sessionsCommand() *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions, newest first",
		Long: `List sessions, newest first: id, parent (for forks), agent, the number of
messages the session stores itself (inherited ones are not counted),
creation time and title, and for a session imported from another coding
agent, where from (host and its session id).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", limit)
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			list, err := st.ListSessions(cmd.Context(), sa.SessionFilter{Limit: limit})
			if err != nil {
				return err
			}
			origins, err := a.sessionOrigins(cmd.Context(), st, list)
			if err != nil {
				return err
			}
			if asJSON {
				costed, err := a.costedSessions(cmd.Context(), st, list)
				if err != nil {
					return err
				}
				for i := range costed {
					if l, ok := origins[costed[i].ID]; ok {
						costed[i].Import = &l
					}
				}
				return writeJSON(a.env.Stdout, costed)
			}
			return writeSessionTable(a.env.Stdout, list, originLabels(origins), time.Local)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many (0: all)")
	return cmd
}

func (a *app) importCommand() *cobra.Command {
	var (
		asJSON       bool
		agent, title string
		host         hostImport
	)
	cmd := &cobra.Command{
		Use:   "import [FILE|-] | import --from HOST [PATH|HOST-SESSION-ID|--latest]",
		Short: "Create a session from JSONL, one message per line",
		Long: `Create a session from JSONL: one message per line, each an object with a
"role" (user, assistant, system or tool) and either "text" or "parts".
Reads standard input when FILE is "-" or missing. The output of
'superagents export' reads back unchanged. Prints the new session's id.

Nothing is written unless every line is valid; a bad line is reported with
its number.

  {"role":"user","text":"What is 2+2?"}
  {"role":"assistant","text":"2+2 equals 4."}` + hostImportHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if host.set() {
				return a.importFromHost(cmd.Context(), host, args, agent, title, asJSON)
			}
			in, name, err := a.openInput(args)
			if err != nil {
				return err
			}
			defer in.Close()
			msgs, err := ParseJSONL(in)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(msgs) == 0 {
				return usagef("%s holds no messages", name)
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			if title == "" {
				title = titleFrom(msgs)
			}
			sess, err := runtime.NewImports(st).ImportSession(cmd.Context(), sa.NewSession{Agent: agent, Title: title, Origin: sa.OriginImport, Messages: msgs})
			if err != nil {
				return err
			}
			return a.printSession(sess, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new session as JSON")
	cmd.Flags().StringVar(&agent, "agent", "general", "agent profile of the new session")
	cmd.Flags().StringVar(&title, "title", "", "title (default: the first user message)")
	host.bind(cmd)
	return cmd
}

// printSession prints a new session's id, or the session as JSON.
func (a *app) printSession(sess sa.Session, asJSON bool) error {
	if asJSON {
		return writeJSON(a.env.Stdout, sess)
	}
	_, err := fmt.Fprintln(a.env.Stdout, sess.ID)
	return err
}

// openInput opens the named file, or stdin for "-" or no argument.
func (a *app) openInput(args []string) (io.ReadCloser, string, error) {
	if len(args) == 0 || args[0] == "-" {
		return io.NopCloser(a.env.Stdin), "standard input", nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		if isNotExist(err) {
			return nil, "", usagef("cannot read %s: no such file", args[0])
		}
		return nil, "", fmt.Errorf("cannot read %s: %w", args[0], err)
	}
	return f, args[0], nil
}

func (a *app) appendCommand() *cobra.Command {
	var (
		asJSON     bool
		role, text string
	)
	cmd := &cobra.Command{
		Use:   "append ID --role user|assistant --text TEXT",
		Short: "Append one message to a session (no model turn is run)",
		Args:  exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := sa.Role(role)
			if r != sa.RoleUser && r != sa.RoleAssistant {
				return usagef("unknown --role %q: use user or assistant", role)
			}
			if strings.TrimSpace(text) == "" {
				return usagef("--text is empty: give the message text")
			}
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			stored, err := rt.Sessions().Append(cmd.Context(), sess.ID, runtime.HolderCLI, sa.Message{Role: r, Parts: []sa.Part{sa.TextPart(text)}})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.env.Stdout, stored[0])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stored message as JSON")
	cmd.Flags().StringVar(&role, "role", "user", "user or assistant")
	cmd.Flags().StringVar(&text, "text", "", "the message text (required)")
	return cmd
}

func (a *app) forkCommand() *cobra.Command {
	var (
		asJSON       bool
		agent, title string
	)
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Fork a session: the child inherits its history; prints the child's id",
		Long: `Fork a session. The child inherits the parent's whole effective history up to
now, without copying it (one row is written). Messages added to either
afterwards are seen only by that one. Prints the child's id.`,
		Args: exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			parent, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			child, err := rt.Sessions().Fork(cmd.Context(), parent.ID, sa.ForkOptions{Agent: agent, Title: title})
			if err != nil {
				return err
			}
			return a.printSession(child, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the child session as JSON")
	cmd.Flags().StringVar(&agent, "agent", "", "agent profile of the child (default: the parent's)")
	cmd.Flags().StringVar(&title, "title", "", "title of the child (default: the parent's)")
	return cmd
}

func (a *app) clearCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "clear ID",
		Short: "Start the session's context over (forks keep what they inherited)",
		Args:  exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			stored, err := rt.Sessions().Clear(cmd.Context(), sess.ID, runtime.HolderCLI)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.env.Stdout, stored)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the clear message as JSON")
	return cmd
}

func (a *app) historyCommand() *cobra.Command {
	return a.historyLikeCommand("history ID", "Print a session's effective history (inherited messages included)", false)
}

func (a *app) exportCommand() *cobra.Command {
	return a.historyLikeCommand("export ID", "Print a session's effective history as JSONL (what import reads)", true)
}

// historyLikeCommand builds history (text, or JSONL with --json) and
// export (always JSONL): one output, two names people look for.
func (a *app) historyLikeCommand(use, short string, alwaysJSON bool) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			st, _ := a.openStore(cmd.Context())
			if asJSON || alwaysJSON {
				// Written out while the rest is read.
				return writeJSONLFrom(a.env.Stdout, func(emit func([]sa.Message) error) error {
					return st.HistoryChunks(cmd.Context(), sess.ID, jsonlChunk, emit)
				})
			}
			hist, err := st.History(cmd.Context(), sess.ID)
			if err != nil {
				return err
			}
			return writeTranscript(a.env.Stdout, hist)
		},
	}
	if !alwaysJSON {
		cmd.Flags().BoolVar(&asJSON, "json", false, "print JSONL, one message per line (what import reads)")
	} else {
		cmd.Flags().BoolVar(&asJSON, "json", true, "JSONL output (always on; accepted for symmetry)")
	}
	return cmd
}

func (a *app) deleteCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a session (sessions forked from it keep their history)",
		Long: `Delete a session. It disappears from listings and can no longer be used.
Sessions forked from it keep everything they inherited: the rows they need
are kept, hidden, until no descendant needs them. Background tasks the
session launched are removed from listings; those still running are
cancelled (the process running them stops them within moments).`,
		Args: exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			rt, err := a.openSessions(cmd.Context())
			if err != nil {
				return err
			}
			if err := rt.Sessions().Delete(cmd.Context(), sess.ID); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.env.Stdout, map[string]string{"deleted": sess.ID})
			}
			_, err = fmt.Fprintf(a.env.Stdout, "deleted %s\n", sa.ShortID(sess.ID))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the deleted id as JSON")
	return cmd
}
