package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/mcptasks"
)

// postgresNode is one node of a cluster on PostgreSQL, as serve runs it:
// its own store connection, runtime (working the job queue) and MCP
// server, reached over streamable HTTP.
type postgresNode struct {
	*harness
	rt *runtime.Runtime
}

func newPostgresNode(t *testing.T, url, workspace string, cfg config.Config) *postgresNode {
	t.Helper()
	st, rt := stacktest.OpenNode(t, url, workspace, cfg, stacktest.NodeOptions{Work: true})
	srv, err := mcpserver.New(mcpserver.Options{Runtime: rt, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	n := &postgresNode{harness: &harness{t: t, ws: workspace, store: st, srv: srv}, rt: rt}
	t.Cleanup(func() {
		if n.http != nil {
			n.http.Close()
		}
		if err := srv.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("close node: %v", err)
		}
		st.Close()
	})
	return n
}

// TestTasksFromAnyNode (MCP-7): on PostgreSQL, any node answers
// the Tasks extension for a task another node launched and runs. A task
// that asks its user is reported input_required by the node that does
// not run it, that node stores the answer, and the running node picks it
// up; a completed task's result is read from the node that did not run it.
// Every node refuses a client with another API token than the launcher's.
func TestTasksFromAnyNode(t *testing.T) {
	url := pgtest.URL(t)
	model := llmtest.NewAnthropic(t)
	model.Handle(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(string(req.Body), "What is 2+2?") {
			return fakeModel(req)
		}
		return askModel(req)
	})
	workspace := t.TempDir()
	cfg := stacktest.Config(t, workspace, model.BaseURL())
	cfg.Permissions.Bash = tools.BashRules{Allow: []string{"ls"}, Unlisted: tools.UnlistedAsk}
	nodes := []*postgresNode{newPostgresNode(t, url, workspace, cfg), newPostgresNode(t, url, workspace, cfg)}
	clients := make([]*conn, len(nodes))
	for i, n := range nodes {
		clients[i] = n.connectAt(streamableHTTP, "tasks-client", "1.0", statelessRevision, tasksClient())
	}
	// notRunning is the index of a node that does not run task id (the
	// job queue picks the runner).
	notRunning := func(id string) int {
		t.Helper()
		tk, err := nodes[0].store.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.RunnerID == nodes[0].rt.RunnerID() {
			return 1
		}
		return 0
	}

	// A task launched through node 0 asks its user; the other node (the
	// one that does not run it) reports the question and takes the answer.
	id := clients[0].deferred(nodes[0].harness, map[string]any{"description": "marker", "prompt": "please run the marker", "agent": "general"})
	_, key, _ := clients[0].waitInput(id)
	other := notRunning(id)
	asked, err := clients[other].getTask(id)
	if err != nil || asked.Status != mcptasks.StatusInputRequired || asked.InputRequests[key] == nil {
		t.Fatalf("tasks/get on the node not running the task: %+v, %v; want input_required with request %q", asked, err, key)
	}
	// The launcher is stored with the task: on that node too, a client
	// with another token finds no such task, and cannot answer it.
	nodes[other].token = "another token"
	stranger := nodes[other].connectAt(streamableHTTP, "tasks-client", "1.0", statelessRevision, tasksClient())
	_, err = stranger.getTask(id)
	wantNotFound(t, "tasks/get with another token", err)
	err = stranger.updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}})
	wantNotFound(t, "tasks/update with another token", err)
	if err := clients[other].updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}}); err != nil {
		t.Fatalf("tasks/update on the node not running the task: %v", err)
	}
	for i, c := range clients {
		if done := c.waitTask(id); done.Status != mcptasks.StatusCompleted || !strings.Contains(resultText(done.Result), "The command printed ask-marker-42.") {
			t.Fatalf("node %d: the answered task ended %+v (%q)", i, done, resultText(done.Result))
		}
	}

	// A plain task launched through node 1: its result, read from the
	// node that did not run it.
	plain := clients[1].deferred(nodes[1].harness, map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"})
	clients[1].waitTask(plain)
	other = notRunning(plain)
	done := clients[other].waitTask(plain)
	if done.Status != mcptasks.StatusCompleted || !strings.Contains(resultText(done.Result), "2+2 equals 4.") {
		t.Fatalf("tasks/get of a completed task on node %d: %+v (%q)", other, done, resultText(done.Result))
	}
}
