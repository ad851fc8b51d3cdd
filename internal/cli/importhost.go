package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/transcripts"
)

// hostImport holds the flags of 'import --from'.
type hostImport struct {
	from   string
	latest bool
}

func (h *hostImport) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.from, "from", "", "import a conversation of another coding agent: claude-code, codex or opencode")
	cmd.Flags().BoolVar(&h.latest, "latest", false, "with --from: the newest conversation held in the current directory (or --workspace)")
}

// set reports whether the command imports from a host.
func (h *hostImport) set() bool { return h.from != "" || h.latest }

// hostImportHelp is appended to the import command's help.
const hostImportHelp = `

With --from HOST, imports a conversation of another coding agent instead:
Claude Code (claude-code), Codex (codex) or OpenCode (opencode), named by
the path of its transcript, by its session id, or with --latest as the
newest one held in the current directory (or --workspace). The host's
files are only read. Importing the same conversation again appends what
the host wrote since to the same session, so forks made earlier stay as
they are. Messages the host is still writing (a reply whose tools are
running) are left for the next import.

  superagents import --from claude-code --latest
  superagents import --from codex 019a2d7a-41c4-78b1-b7cc-a45d62a89cd5
  superagents import --from opencode ~/.local/share/opencode/storage/session/<project>/<session>.json`

func (a *app) importFromHost(ctx context.Context, h hostImport, args []string, agent, title string, asJSON bool) error {
	if h.from == "" {
		return usagef("--latest needs --from claude-code|codex|opencode")
	}
	host, err := transcripts.ParseHost(h.from)
	if err != nil {
		return usagef("--from %s: unknown host (use claude-code, codex or opencode)", h.from)
	}
	t, err := a.locateTranscript(ctx, host, h.latest, args)
	if err != nil {
		return err
	}
	// An import needs the store only: the engine and its tokenizer (about
	// 40 ms to build) would double what a repeated import costs.
	cfg, err := a.loadConfig("")
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	a.noticeOnce(cfg.Notice())
	out, err := runtime.NewImports(st).ImportHost(ctx, t, sa.NewSession{Agent: agent, Title: title})
	switch {
	case errors.Is(err, runtime.ErrNothingToImport):
		return usageError{err}
	case err != nil:
		return hostError(err)
	}
	if asJSON {
		return writeJSON(a.env.Stdout, out)
	}
	a.reportImport(out, host)
	_, err = fmt.Fprintln(a.env.Stdout, out.ID)
	return err
}

// reportImport tells on stderr what the import did beyond the session id.
func (a *app) reportImport(out runtime.HostImport, host transcripts.Host) {
	w := a.env.Stderr
	if m := out.Malformed.String(); m != "" {
		fmt.Fprintf(w, "superagents: %s: %s\n", out.Path, m)
	}
	switch {
	case out.Created:
		fmt.Fprintf(w, "Imported %d messages of %s session %s.\n", out.Imported, host.Label(), out.Import.HostSessionID)
	case out.Imported == 0:
		fmt.Fprintf(w, "Nothing new in %s session %s since the last import.\n", host.Label(), out.Import.HostSessionID)
	default:
		fmt.Fprintf(w, "Appended %d new messages of %s session %s.\n", out.Imported, host.Label(), out.Import.HostSessionID)
	}
	if out.Pending > 0 {
		fmt.Fprintf(w, "The newest %d messages are still being written; the next import takes them.\n", out.Pending)
	}
}

// locateTranscript finds the transcript named by a path, a host session
// id, or --latest.
func (a *app) locateTranscript(ctx context.Context, host transcripts.Host, latest bool, args []string) (transcripts.Transcript, error) {
	env := transcripts.Env{Getenv: a.env.Getenv}
	switch {
	case latest && len(args) > 0:
		return transcripts.Transcript{}, usagef("give either --latest or a transcript (%s), not both", args[0])
	case latest:
		dir, err := a.workspaceDir()
		if err != nil {
			return transcripts.Transcript{}, err
		}
		found, err := transcripts.Find(ctx, host, dir, env)
		if err != nil {
			return transcripts.Transcript{}, hostError(err)
		}
		// Hosts leave files without a conversation behind (a session opened
		// and left at once): the newest one that holds messages is meant.
		for _, t := range found {
			if res, err := transcripts.Read(ctx, t, transcripts.Position{}); err == nil && len(res.All()) > 0 {
				return t, nil
			}
		}
		return transcripts.Transcript{}, usagef("no %s conversation found for %s", host.Label(), dir)
	case len(args) == 0:
		return transcripts.Transcript{}, usagef("import --from %s takes a transcript path, a %s session id, or --latest", host, host.Label())
	case args[0] == "-":
		return transcripts.Transcript{}, usagef("import --from reads the host's files itself: give a path or a session id, not standard input")
	}
	ref := args[0]
	if _, err := os.Stat(ref); err == nil {
		t, err := transcripts.Inspect(host, ref)
		return t, hostError(err)
	}
	if strings.ContainsAny(ref, `/\`) {
		return transcripts.Transcript{}, usagef("cannot read %s: no such file", ref)
	}
	t, err := transcripts.Lookup(ctx, host, ref, env)
	return t, hostError(err)
}

// hostError makes a file that is not the host's transcript the caller's
// mistake (exit code 2).
func hostError(err error) error {
	if errors.Is(err, transcripts.ErrNotTranscript) {
		return usageError{err}
	}
	return err
}

// sessionOrigins returns "host host-session-id" for the listed sessions
// that were imported from a host.
func (a *app) sessionOrigins(ctx context.Context, st sa.HostLinker, list []sa.SessionSummary) (map[string]sa.HostLink, error) {
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return st.SessionHostLinks(ctx, ids)
}

func originLabels(origins map[string]sa.HostLink) map[string]string {
	if len(origins) == 0 {
		return nil
	}
	out := make(map[string]string, len(origins))
	for id, l := range origins {
		out[id] = l.Host + " " + l.HostSessionID
	}
	return out
}
