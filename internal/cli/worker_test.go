package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/stacktest"
)

// TestWorkerRefuses checks the worker's refusals: no PostgreSQL database,
// a negative drain.
func TestWorkerRefuses(t *testing.T) {
	h := newHarness(t)
	r := h.run("worker")
	if r.code != 2 || !strings.Contains(r.stderr, "worker needs a PostgreSQL database") {
		t.Fatalf("worker on SQLite: exit %d, stderr %q", r.code, r.stderr)
	}
	r = h.run("worker", "--drain", "-1s")
	if r.code != 2 || !strings.Contains(r.stderr, "--drain cannot be negative") {
		t.Fatalf("worker --drain -1s: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestWorkerRunsQueuedTasks starts a worker on PostgreSQL, queues a task
// from a process that does not work the queue, sees the worker run it,
// and stops the worker as SIGINT would (its context ends).
func TestWorkerRunsQueuedTasks(t *testing.T) {
	url := pgtest.URL(t)
	h := newHarness(t)
	h.env["SUPERAGENTS_DATABASE_URL"] = url
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Main(ctx, []string{"worker", "--drain", "1s"}, cli.Env{
			Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()

	// A process that only queues tasks, as run and chat are on PostgreSQL.
	st, rt := stacktest.OpenNode(t, url, t.TempDir(), config.Default(), stacktest.NodeOptions{})
	defer st.Close()
	defer rt.Close(context.Background())
	parent, err := rt.Sessions().Create(context.Background(), sa.NewSession{Agent: "general", Model: "offline"})
	if err != nil {
		t.Fatal(err)
	}
	task, _, err := rt.Tasks().Submit(context.Background(), runtime.TaskRequest{Parent: parent.ID,
		Description: "sum", Prompt: "What is 20+22?", Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.Tasks().Output(context.Background(), task.ID, true, time.Minute)
	if err != nil || out.TimedOut || out.Task.Status != sa.TaskCompleted || !strings.Contains(out.Task.Result, "42") {
		t.Fatalf("the queued task: %+v, %v\nworker: %s", out, err, stderr.String())
	}
	// River's client goes by its process's runner id.
	var worked string
	err = st.Pool().QueryRow(context.Background(), `SELECT attempted_by[1] FROM river_job WHERE args->>'task_id' = $1`, task.ID).Scan(&worked)
	if err != nil || worked == rt.RunnerID() || !strings.Contains(stderr.String(), worked) {
		t.Fatalf("the task's job was worked by %q (%v), not by the worker:\n%s", worked, err, stderr.String())
	}
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("worker exit %d: %s", c, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "running tasks from postgres://") || !strings.Contains(s, "stopping") {
		t.Fatalf("worker said %q", s)
	}
}

// TestMigrateAppliesTheQueueSchema checks that migrate creates River's
// tables next to ours.
func TestMigrateAppliesTheQueueSchema(t *testing.T) {
	url := pgtest.URL(t)
	h := newHarness(t)
	h.ok("", "--database", url, "migrate")
	// Read without opening a store, which would migrate.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var version int
	if err := conn.QueryRow(context.Background(), `SELECT MAX(version) FROM river_migration`).Scan(&version); err != nil || version == 0 {
		t.Fatalf("River's schema after migrate: version %d, %v", version, err)
	}
}
