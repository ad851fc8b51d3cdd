package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/internal/postgres"
)

// defaultDrain is how long a stopping worker lets its running tasks
// finish before it interrupts them.
const defaultDrain = 25 * time.Second

const workerLong = `Runs a node of a cluster on one PostgreSQL database without the HTTP API:
it takes tasks from the shared job queue, up to tasks.concurrency at once,
and runs them, until SIGINT or SIGTERM.

Every serve on the database works the queue as well; worker adds
capacity without serving anything. On SIGINT or SIGTERM it stops taking
tasks, lets those it runs finish for up to --drain, then interrupts the
rest (each ends as interrupted, with its notification).

The database comes from --database, SUPERAGENTS_DATABASE_URL or
database.url in config.toml; on the SQLite file, tasks run in the process
that launched them, so there is nothing for a worker to do.`

func (a *app) workerCommand() *cobra.Command {
	var model string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run tasks from the cluster's job queue (PostgreSQL), without serving HTTP",
		Long:  workerLong,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.worker(cmd.Context(), model)
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "default model of the tasks whose agent names none, as provider/model (default: the configured one)")
	cmd.Flags().DurationVar(&a.drain, "drain", defaultDrain, "how long running tasks may finish when the worker stops, before they are interrupted")
	return cmd
}

func (a *app) worker(ctx context.Context, model string) error {
	if a.drain < 0 {
		return usagef("--drain cannot be negative")
	}
	url, err := a.databaseURL()
	if err != nil {
		return err
	}
	if url == "" {
		return usagef("worker needs a PostgreSQL database (--database, %s or database.url): with the SQLite file, tasks run in the process that launches them", EnvDatabaseURL)
	}
	a.node = true
	rt, err := a.openRuntime(ctx, model)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig(model)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stderr, "worker %s: running tasks from %s, up to %d at once; SIGINT or SIGTERM stops it\n",
		rt.RunnerID(), postgres.Redact(url), cfg.Tasks.Concurrency)
	<-ctx.Done()
	fmt.Fprintf(a.env.Stderr, "worker %s: stopping; running tasks may finish for %s\n", rt.RunnerID(), a.drain)
	return nil
}
