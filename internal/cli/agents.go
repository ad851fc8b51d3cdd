package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/agents"
)

func (a *app) agentsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agent profiles and where each comes from",
		Long: `List the agent profiles: the built-in ones (general, explore), the user's
($XDG_CONFIG_HOME/superagents/agents/*.md) and the project's
(<workspace>/.superagents/agents/*.md). A profile hides those of the same
name with lower precedence (project, then user, then built-in). Files that
do not parse are reported with their path and line; the others load.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.workspaceDir()
			if err != nil {
				return err
			}
			catalog, problems := agents.Load(a.agentDirs(ws))
			if asJSON {
				type profileJSON struct {
					Name        string   `json:"name"`
					Description string   `json:"description"`
					Model       string   `json:"model,omitempty"`
					Tools       []string `json:"tools"`
					MaxSteps    int      `json:"max_steps,omitempty"`
					Source      string   `json:"source"`
					Path        string   `json:"path,omitempty"`
				}
				out := struct {
					Agents   []profileJSON `json:"agents"`
					Problems []string      `json:"problems"`
				}{Agents: []profileJSON{}, Problems: []string{}}
				for _, p := range catalog.List() {
					tools := p.Tools
					if tools == nil {
						tools = []string{"*"}
					}
					out.Agents = append(out.Agents, profileJSON{Name: p.Name, Description: p.Description, Model: p.Model,
						Tools: tools, MaxSteps: p.MaxSteps, Source: string(p.Source.Kind), Path: p.Source.Path})
				}
				for _, p := range problems {
					out.Problems = append(out.Problems, p.Error())
				}
				return writeJSON(a.env.Stdout, out)
			}
			return agents.RenderList(a.env.Stdout, catalog.List(), problems,
				agents.RenderOptions{Workspace: ws, Home: a.env.Getenv("HOME")})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) contextCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "context ID",
		Short: "Preview what a task forked from this session would inherit",
		Long: `Show exactly what a background task forked from the session would receive:
the preamble, the digest of the conversation (compaction, tool results cut
by age, budgets applied) and the figures: messages, characters and tokens
before and after, tool results per tier, messages removed. Limits come from
the [fork] section of the configuration.`,
		Args: exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig("")
			if err != nil {
				return err
			}
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			// Building the pipeline loads the tokenizer's vocabulary, about
			// as long as reading a large history: both at once.
			type built struct {
				pipeline *forkctx.Pipeline
				err      error
			}
			ready := make(chan built, 1)
			go func() {
				p, err := forkctx.New(cfg.Fork)
				ready <- built{p, err}
			}()
			st, _ := a.openStore(cmd.Context())
			history, err := st.History(cmd.Context(), sess.ID)
			b := <-ready
			if err != nil {
				return err
			}
			pipeline, err := b.pipeline, b.err
			if err != nil {
				return err
			}
			res, err := pipeline.Build(history)
			if err != nil {
				return err
			}
			if asJSON {
				raw, err := res.JSON()
				if err != nil {
					return err
				}
				_, err = a.env.Stdout.Write(append(raw, '\n'))
				return err
			}
			_, err = fmt.Fprint(a.env.Stdout, forkctx.Preview(res))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object: preamble, digest, stats")
	return cmd
}
