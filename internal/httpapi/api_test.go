package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/sqlite"
)

// taskList is the answer of GET /v1/tasks.
type taskList struct {
	Tasks  []sa.Task `json:"tasks"`
	Total  int       `json:"total"`
	Limit  int       `json:"limit"`
	Offset int       `json:"offset"`
}

func ids(list []sa.Task) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.ID)
	}
	return out
}

func TestTaskEndpoints(t *testing.T) {
	testStart := time.Now()
	h := newHarness(t)
	parent := h.session()
	other := h.session()

	// Launch through the API with a session id prefix; the task runs and
	// completes in the background.
	var launched sa.Task
	r := h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": parent.ID[:6], "agent": "general",
		"description": "Find the LOGIN bug", "prompt": "quick: login"}, &launched)
	if r.header.Get("Location") != "/v1/tasks/"+launched.ID || launched.ParentSessionID != parent.ID {
		t.Fatalf("launch: Location %q, task %+v", r.header.Get("Location"), launched)
	}
	done := h.waitTask(launched.ID)
	if done.Status != sa.TaskCompleted || done.Result != "answer: login" {
		t.Fatalf("task ended %s with %q, want completed with the scripted answer", done.Status, done.Result)
	}
	second := h.launch(parent.ID, "write the docs", "quick: docs")
	h.waitTask(second.ID)
	third := h.launch(other.ID, "login page styles", "quick: css")
	h.waitTask(third.ID)

	t.Run("get by prefix", func(t *testing.T) {
		var got struct {
			sa.Task
			Indicators string `json:"indicators"`
			DurationMS *int64 `json:"duration_ms"`
		}
		h.ok(http.StatusOK, "GET", "/v1/tasks/"+launched.ID[:5], nil, &got)
		if got.ID != launched.ID || got.Result != "answer: login" || got.DurationMS == nil {
			t.Fatalf("GET task = %+v", got)
		}
	})

	t.Run("list filters", func(t *testing.T) {
		tests := []struct {
			query string
			want  []string
			total int
		}{
			{"", []string{third.ID, second.ID, launched.ID}, 3},
			{"?search=login", []string{third.ID, launched.ID}, 2},
			{"?search=LOGIN&session=" + parent.ID[:6], []string{launched.ID}, 1},
			{"?status=completed&agent=general&limit=1", []string{third.ID}, 3},
			{"?status=Completed", []string{third.ID, second.ID, launched.ID}, 3},
			{"?limit=1&offset=1", []string{second.ID}, 3},
			{"?limit=2&offset=2", []string{launched.ID}, 3},
			{"?status=running", nil, 0},
			{"?agent=explore", nil, 0},
			{"?batch=" + launched.BatchID[:6], []string{launched.ID}, 1},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				var got taskList
				h.ok(http.StatusOK, "GET", "/v1/tasks"+tt.query, nil, &got)
				if !slices.Equal(ids(got.Tasks), tt.want) || got.Total != tt.total {
					t.Fatalf("GET /v1/tasks%s = %v (total %d), want %v (total %d)", tt.query, ids(got.Tasks), got.Total, tt.want, tt.total)
				}
				if got.Limit == 0 {
					t.Errorf("the reply has no limit: %+v", got)
				}
			})
		}
	})

	t.Run("messages", func(t *testing.T) {
		var got struct {
			SessionID string       `json:"session_id"`
			Messages  []sa.Message `json:"messages"`
		}
		h.ok(http.StatusOK, "GET", "/v1/tasks/"+launched.ID+"/messages", nil, &got)
		var texts []string
		for _, m := range got.Messages {
			texts = append(texts, m.Text())
		}
		if got.SessionID != launched.ID || !slices.Equal(texts, []string{"quick: login", "answer: login"}) {
			t.Fatalf("task messages = %q", texts)
		}
		var after struct{ Messages []sa.Message }
		h.ok(http.StatusOK, "GET", fmt.Sprintf("/v1/tasks/%s/messages?after=%d", launched.ID, got.Messages[0].ID), nil, &after)
		if len(after.Messages) != 1 || after.Messages[0].Text() != "answer: login" {
			t.Fatalf("messages after the first = %+v", after.Messages)
		}
	})

	t.Run("resume", func(t *testing.T) {
		var resumed sa.Task
		h.ok(http.StatusAccepted, "POST", "/v1/tasks/"+second.ID+"/resume", map[string]any{"prompt": "quick: more docs"}, &resumed)
		if resumed.Status != sa.TaskResumed || resumed.ResumeCount != 1 {
			t.Fatalf("resume answered %+v", resumed)
		}
		if again := h.waitTask(second.ID); again.Status != sa.TaskCompleted || again.Result != "answer: more docs" {
			t.Fatalf("resumed task ended %s with %q", again.Status, again.Result)
		}
		// The same through POST /v1/tasks with resume.
		h.ok(http.StatusAccepted, "POST", "/v1/tasks", map[string]any{"resume": second.ID[:6], "prompt": "quick: once more"}, &resumed)
		if again := h.waitTask(second.ID); again.ResumeCount != 2 || again.Result != "answer: once more" {
			t.Fatalf("second resume ended %+v", again)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		gate := h.gate("cancel-gate")
		running := h.launch(parent.ID, "waits", "gate: "+string(gate))
		h.toolStarted(running.ID)
		// While it runs, the stats list it as active.
		var stats struct {
			Active      int       `json:"active"`
			ActiveTasks []sa.Task `json:"active_tasks"`
		}
		h.ok(http.StatusOK, "GET", "/v1/stats", nil, &stats)
		if stats.Active != 1 || len(stats.ActiveTasks) != 1 || stats.ActiveTasks[0].ID != running.ID || stats.ActiveTasks[0].Status != sa.TaskRunning {
			t.Fatalf("stats while %s runs: active %d, active_tasks %+v", running.ID, stats.Active, stats.ActiveTasks)
		}
		var cancelled sa.Task
		h.ok(http.StatusOK, "POST", "/v1/tasks/"+running.ID+"/cancel", nil, &cancelled)
		if cancelled.Status != sa.TaskCancelled {
			t.Fatalf("cancel answered %s", cancelled.Status)
		}
		var got sa.Task
		h.ok(http.StatusOK, "GET", "/v1/tasks/"+running.ID, nil, &got)
		if got.Status != sa.TaskCancelled {
			t.Fatalf("after cancel the task is %s", got.Status)
		}
	})

	t.Run("stats and health", func(t *testing.T) {
		var stats struct {
			Total       int                   `json:"total"`
			ByStatus    map[sa.TaskStatus]int `json:"by_status"`
			ByAgent     map[string]int        `json:"by_agent"`
			ToolCalls   int                   `json:"tool_calls"`
			Active      int                   `json:"active"`
			ActiveTasks []sa.Task             `json:"active_tasks"`
			Durations   struct {
				Count int   `json:"count"`
				AvgMS int64 `json:"avg_ms"`
				MaxMS int64 `json:"max_ms"`
				MinMS int64 `json:"min_ms"`
			} `json:"durations"`
		}
		h.ok(http.StatusOK, "GET", "/v1/stats", nil, &stats)
		if stats.Total != 4 || stats.ByStatus[sa.TaskCompleted] != 3 || stats.ByStatus[sa.TaskCancelled] != 1 ||
			stats.ByAgent["general"] != 4 || stats.Active != 0 || len(stats.ActiveTasks) != 0 || stats.ToolCalls < 1 {
			t.Fatalf("stats = %+v", stats)
		}
		// The cancelled task ran a model call and a tool: its run took
		// time, so the average is above 0.
		if d := stats.Durations; d.Count != 4 || d.AvgMS <= 0 || d.AvgMS < d.MinMS || d.AvgMS > d.MaxMS {
			t.Fatalf("durations = %+v, want 4 with min <= avg <= max and avg > 0", d)
		}
		if _, ok := stats.ByStatus[sa.TaskQueued]; !ok {
			t.Error("by_status leaves out statuses no task has")
		}
		var health struct {
			Status        string    `json:"status"`
			Version       string    `json:"version"`
			Tasks         int       `json:"tasks"`
			StartedAt     time.Time `json:"started_at"`
			UptimeSeconds *int64    `json:"uptime_seconds"`
			Uptime        string    `json:"uptime"`
		}
		h.ok(http.StatusOK, "GET", "/v1/health", nil, &health)
		if health.Status != "ok" || health.Tasks != 4 || health.Version != "test" {
			t.Fatalf("health = %+v", health)
		}
		// The server started with this test, and has been up since.
		now := time.Now()
		if health.StartedAt.Before(testStart) || health.StartedAt.After(now) || health.StartedAt.Location() != time.UTC {
			t.Errorf("health: started_at %v, want a UTC time between %v and %v", health.StartedAt, testStart, now)
		}
		upper := now.Sub(health.StartedAt)
		if health.UptimeSeconds == nil || *health.UptimeSeconds < 0 || time.Duration(*health.UptimeSeconds)*time.Second > upper {
			t.Errorf("health: uptime_seconds %v, want 0 to %v", health.UptimeSeconds, upper)
		}
		if d, err := time.ParseDuration(health.Uptime); err != nil || d < 0 || d > upper+time.Second {
			t.Errorf("health: uptime %q (%v), want a duration of 0 to %v", health.Uptime, err, upper)
		}
	})
}

// A launch's timeout is whole seconds up to the configured task time
// limit; none (or 0) is that limit.
func TestLaunchTimeout(t *testing.T) {
	h := newHarness(t, withLimits(func(l *config.Tasks) { l.Timeout = config.Duration{Duration: 10 * time.Minute} }))
	parent := h.session()
	tests := []struct {
		name    string
		timeout any // nil: not sent
		want    time.Duration
	}{
		{"none", nil, 10 * time.Minute},
		{"zero", 0, 10 * time.Minute},
		{"a minute", 60, time.Minute},
		{"the limit", 600, 10 * time.Minute},
		{"written as a float", 90.0, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"session_id": parent.ID, "agent": "general", "description": tt.name, "prompt": "quick: " + tt.name}
			if tt.timeout != nil {
				body["timeout"] = tt.timeout
			}
			// The task shows its time limit in seconds, as it was asked.
			var task struct {
				ID      string  `json:"id"`
				Timeout float64 `json:"timeout"`
			}
			h.ok(http.StatusCreated, "POST", "/v1/tasks", body, &task)
			if task.Timeout != tt.want.Seconds() {
				t.Errorf("timeout %v made a task with a time limit of %vs, want %vs", tt.timeout, task.Timeout, tt.want.Seconds())
			}
			h.waitTask(task.ID)
		})
	}
	r := h.request("POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "general", "description": "d", "prompt": "p", "timeout": 601})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "at most 600 seconds") {
		t.Fatalf("a timeout over the limit = %d %s, want 400 naming the limit", r.status, r.body)
	}
}

// A launch with fork gives the task the parent's context: the task is
// marked forked, and its conversation opens with the fork's preamble and
// the digest of the parent's history, before the prompt.
func TestLaunchFork(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+parent.ID+"/messages?wait=true", map[string]any{"text": "quick: the port is 8080"}, nil)
	tests := []struct {
		name       string
		fork       bool
		indicators string
	}{
		{"fork", true, "(forked)"},
		{"no fork", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var launched struct {
				sa.Task
				Indicators string `json:"indicators"`
			}
			h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "general",
				"description": tt.name, "prompt": "quick: " + tt.name, "fork": tt.fork}, &launched)
			if launched.IsForked != tt.fork || launched.Indicators != tt.indicators {
				t.Fatalf("launch answered is_forked %v, indicators %q; want %v, %q", launched.IsForked, launched.Indicators, tt.fork, tt.indicators)
			}
			if done := h.waitTask(launched.ID); done.Status != sa.TaskCompleted || done.Result != "answer: "+tt.name {
				t.Fatalf("task ended %s with %q", done.Status, done.Result)
			}
			var got struct {
				Messages []sa.Message `json:"messages"`
			}
			h.ok(http.StatusOK, "GET", "/v1/tasks/"+launched.ID+"/messages", nil, &got)
			msgs := got.Messages
			if tt.fork {
				if len(msgs) == 0 || msgs[0].Role != sa.RoleSystem || !strings.Contains(msgs[0].Text(), "forked from a parent agent") ||
					!strings.Contains(msgs[0].Text(), "User: quick: the port is 8080") {
					t.Fatalf("a forked task's first message is not the preamble with the parent's digest: %+v", msgs)
				}
				msgs = msgs[1:]
			}
			if len(msgs) == 0 || msgs[0].Role != sa.RoleUser || msgs[0].Text() != "quick: "+tt.name {
				t.Fatalf("the task's conversation does not go on with its prompt: %+v", msgs)
			}
		})
	}
}

// taskGroup is the answer of GET /v1/batches/{batch}.
type taskGroup struct {
	BatchID        string    `json:"batch_id"`
	Tasks          []sa.Task `json:"tasks"`
	Total          int       `json:"total"`
	Queued         int       `json:"queued"`
	Running        int       `json:"running"`
	Completed      int       `json:"completed"`
	Error          int       `json:"error"`
	Cancelled      int       `json:"cancelled"`
	CompletionRate float64   `json:"completion_rate"`
	EndedAt        *string   `json:"ended_at"`
	DurationMS     *int64    `json:"duration_ms"`
	ToolCalls      *int      `json:"tool_calls"`
}

// String shows the sums, not the tasks.
func (g taskGroup) String() string {
	deref := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	calls := any(nil)
	if g.ToolCalls != nil {
		calls = *g.ToolCalls
	}
	return fmt.Sprintf("batch %s: %d tasks, %d queued, %d running, %d completed, %d error, %d cancelled; completion_rate %v, tool_calls %v, duration_ms %v, ended_at %v",
		g.BatchID, g.Total, g.Queued, g.Running, g.Completed, g.Error, g.Cancelled, g.CompletionRate, calls, deref(g.DurationMS), g.EndedAt != nil)
}

func TestTaskGroup(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	// The agent launches five tasks in one turn, one batch: three that
	// complete, one that waits for a gate until it is cancelled, and one
	// whose model call fails.
	gate := h.gate("group-gate")
	var turn struct {
		Turn struct{ Status, Answer string } `json:"turn"`
	}
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+parent.ID+"/messages?wait=true",
		map[string]any{"text": "launch: quick: one | quick: two | quick: three | gate: " + string(gate) + " | fail"}, &turn)
	if turn.Turn.Status != "completed" {
		t.Fatalf("turn = %+v", turn)
	}
	var list taskList
	h.ok(http.StatusOK, "GET", "/v1/tasks?session="+parent.ID, nil, &list)
	if len(list.Tasks) != 5 {
		t.Fatalf("the turn launched %d tasks, want 5", len(list.Tasks))
	}
	var gated sa.Task
	for _, task := range list.Tasks {
		if strings.HasPrefix(task.Prompt, "gate:") {
			gated = task
		}
	}
	batch := gated.BatchID
	h.toolStarted(gated.ID)
	for _, task := range list.Tasks {
		if task.ID != gated.ID {
			h.waitTask(task.ID)
		}
	}

	var group taskGroup
	h.ok(http.StatusOK, "GET", "/v1/batches/"+batch, nil, &group)
	if group.Total != 5 || group.Running != 1 || group.Completed != 3 || group.Error != 1 || group.EndedAt != nil {
		t.Fatalf("group while one task runs: %v", group)
	}

	h.ok(http.StatusOK, "POST", "/v1/tasks/"+gated.ID+"/cancel", nil, nil)
	h.ok(http.StatusOK, "GET", "/v1/task-groups/"+batch[:6], nil, &group)
	if group.BatchID != batch || group.Total != 5 || group.Queued != 0 || group.Running != 0 ||
		group.Completed != 3 || group.Error != 1 || group.Cancelled != 1 || group.CompletionRate != 0.6 || group.EndedAt == nil {
		t.Fatalf("group: %v", group)
	}
	// The gated task ran bash; the batch lasted from its first launch to
	// its last ending.
	if group.ToolCalls == nil || *group.ToolCalls < 1 || group.DurationMS == nil || *group.DurationMS <= 0 {
		t.Fatalf("group: %v; want tool_calls and duration_ms above 0", group)
	}
	if !slices.IsSortedFunc(group.Tasks, func(a, b sa.Task) int { return a.CreatedAt.Compare(b.CreatedAt) }) {
		t.Errorf("group tasks are not in launch order: %+v", group.Tasks)
	}
	for _, task := range list.Tasks {
		if task.BatchID != batch {
			t.Errorf("task %s has batch %s, want %s", task.ID, task.BatchID, batch)
		}
	}
}

// sequentialIDs makes ids that share a prefix, to test ambiguity.
func sequentialIDs() sqlite.Option {
	n := 0
	return sqlite.WithIDGenerator(func() string {
		n++
		return fmt.Sprintf("abcd%012d", n)
	})
}

func TestErrorCodes(t *testing.T) {
	h := newHarness(t, withStore(sequentialIDs()), withLimits(func(l *config.Tasks) { l.SpawnDepth = 1 }))
	parent := h.session() // abcd000000000001
	h.session()           // abcd000000000002: "abcd" is ambiguous
	completed := h.launch(parent.ID, "done", "quick: done")
	h.waitTask(completed.ID)
	gate := h.gate("errors-gate")
	running := h.launch(parent.ID, "waits", "gate: "+string(gate))
	t.Cleanup(func() { gate.open(t); h.waitTask(running.ID) })
	busy := h.session()
	turnGate := h.gate("turn-gate")
	h.ok(http.StatusAccepted, "POST", "/v1/sessions/"+busy.ID+"/messages", map[string]any{"text": "gate: " + string(turnGate)}, nil)
	t.Cleanup(func() { turnGate.open(t) })

	// The store session of an MCP client, as mcpserver makes it: it has
	// no agent to run.
	mcpClient, err := h.store.CreateSession(context.Background(), sa.NewSession{Agent: sa.MCPClientAgent, Title: "MCP client"})
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(h.cfg.Tasks.Timeout.Seconds())

	big := `{"text": "` + strings.Repeat("x", 1<<20) + `"}`
	tests := []struct {
		name, method, path string
		body               any
		headers            []string
		want               int
		wantErr            string // a piece of the error message
		wantField          string
	}{
		{"limit too large", "GET", "/v1/tasks?limit=201", nil, nil, 400, "between 1 and 200", "limit"},
		{"limit not a number", "GET", "/v1/tasks?limit=ten", nil, nil, 400, "whole number", "limit"},
		{"negative offset", "GET", "/v1/tasks?offset=-1", nil, nil, 400, "between", "offset"},
		{"unknown status", "GET", "/v1/tasks?status=done", nil, nil, 400, "unknown status", "status"},
		{"bad include_cleared", "GET", "/v1/tasks?include_cleared=maybe", nil, nil, 400, "true or false", "include_cleared"},
		{"ambiguous prefix", "GET", "/v1/sessions/abcd", nil, nil, 400, "ambiguous", ""},
		{"prefix too short", "GET", "/v1/tasks/abc", nil, nil, 400, "too short", ""},
		{"bad id characters", "GET", "/v1/tasks/ABCD!", nil, nil, 400, "lowercase", ""},
		{"fork with resume", "POST", "/v1/tasks", map[string]any{"fork": true, "resume": completed.ID, "prompt": "x"}, nil, 400, "mutually exclusive", "resume"},
		{"missing prompt", "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "general", "description": "d"}, nil, 400, "required", "prompt"},
		{"missing session", "POST", "/v1/tasks", map[string]any{"agent": "general", "description": "d", "prompt": "p"}, nil, 400, "required", "session_id"},
		{"unknown agent", "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "nobody", "description": "d", "prompt": "p"}, nil, 400, "available agents", "agent"},
		{"unknown field", "POST", "/v1/tasks", map[string]any{"sesion_id": parent.ID}, nil, 400, "not a field", "sesion_id"},
		{"wrong type", "POST", "/v1/tasks", map[string]any{"fork": "yes"}, nil, 400, "true or false", "fork"},
		{"negative timeout", "POST", "/v1/tasks", map[string]any{"timeout": -5}, nil, 400, "negative", "timeout"},
		{"fractional timeout", "POST", "/v1/tasks", `{"timeout": 1.5}`, nil, 400, "must be a whole number of seconds, not 1.5", "timeout"},
		{"timeout as a string", "POST", "/v1/tasks", `{"timeout": "60"}`, nil, 400, "must be a whole number of seconds, not a string", "timeout"},
		{"timeout above the task limit", "POST", "/v1/tasks", map[string]any{"timeout": limit + 1}, nil, 400, fmt.Sprintf("at most %d seconds", limit), "timeout"},
		// Seconds that would wrap around once in nanoseconds: to 0.29 s,
		// and to a negative duration.
		{"timeout wrapping to a short one", "POST", "/v1/tasks", `{"timeout": 18446744074}`, nil, 400, "at most", "timeout"},
		{"timeout wrapping to a negative one", "POST", "/v1/tasks", `{"timeout": 9300000000}`, nil, 400, "at most", "timeout"},
		{"timeout beyond any integer", "POST", "/v1/tasks", `{"timeout": 1e300}`, nil, 400, "whole number of seconds, not 1e300", "timeout"},
		{"session_id too short", "POST", "/v1/tasks", map[string]any{"session_id": "zzz", "agent": "general", "description": "d", "prompt": "p"}, nil, 400, `session_id: id prefix "zzz" is too short`, "session_id"},
		{"unknown session_id", "POST", "/v1/tasks", map[string]any{"session_id": "zzzzzzzz", "agent": "general", "description": "d", "prompt": "p"}, nil, 404, "session_id: no session", "session_id"},
		{"ambiguous session_id", "POST", "/v1/tasks", map[string]any{"session_id": "abcd", "agent": "general", "description": "d", "prompt": "p"}, nil, 400, `session_id: id prefix "abcd" is ambiguous`, "session_id"},
		{"resume id too short", "POST", "/v1/tasks", map[string]any{"resume": "zzz", "prompt": "more"}, nil, 400, `resume: id prefix "zzz" is too short`, "resume"},
		{"unknown resume id", "POST", "/v1/tasks", map[string]any{"resume": "zzzzzzzz", "prompt": "more"}, nil, 404, "resume: no task", "resume"},
		{"ambiguous resume id", "POST", "/v1/tasks", map[string]any{"resume": "abcd", "prompt": "more"}, nil, 400, `resume: id prefix "abcd" is ambiguous`, "resume"},
		// A task whose state refuses the resume is no fault of the field.
		{"resume a running task in the body", "POST", "/v1/tasks", map[string]any{"resume": running.ID, "prompt": "more"}, nil, 409, "only completed tasks", ""},
		{"unknown agent with resume", "POST", "/v1/tasks", map[string]any{"resume": completed.ID, "prompt": "more", "agent": "nobody"}, nil, 400, `unknown agent "nobody"`, "agent"},
		{"another agent with resume", "POST", "/v1/tasks", map[string]any{"resume": completed.ID, "prompt": "more", "agent": "explore"}, nil, 400, "a resumed task keeps its agent", "agent"},
		{"timeout with resume", "POST", "/v1/tasks", map[string]any{"resume": completed.ID, "prompt": "more", "timeout": 60}, nil, 400, "resumed task keeps", "timeout"},
		{"session filter too short", "GET", "/v1/tasks?session=zzz", nil, nil, 400, "too short", "session"},
		{"unknown session filter", "GET", "/v1/tasks?session=zzzzzzzz", nil, nil, 404, "no session", "session"},
		{"ambiguous session filter", "GET", "/v1/tasks?session=abcd", nil, nil, 400, "ambiguous", "session"},
		{"batch filter too short", "GET", "/v1/tasks?batch=zzz", nil, nil, 400, "too short", "batch"},
		{"parent filter too short", "GET", "/v1/sessions?parent=zzz", nil, nil, 400, "too short", "parent"},
		{"NUL in search", "GET", "/v1/tasks?search=a%00b", nil, nil, 400, "NUL", "search"},
		{"not JSON", "POST", "/v1/tasks", "{not json", nil, 400, "not valid JSON", ""},
		{"two JSON values", "POST", "/v1/tasks", `{} {}`, nil, 400, "more than one", ""},
		{"a JSON array", "POST", "/v1/tasks", `[]`, nil, 400, "JSON object", ""},
		{"no body", "POST", "/v1/tasks", nil, nil, 400, "needs a JSON body", ""},
		{"not JSON content type", "POST", "/v1/tasks", "a=b", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "must be JSON", ""},
		{"empty message", "POST", "/v1/sessions/" + parent.ID + "/messages", map[string]any{"text": "  "}, nil, 400, "required", "text"},
		{"unknown model", "POST", "/v1/sessions/" + parent.ID + "/messages", map[string]any{"text": "hi", "model": "nowhere/x"}, nil, 400, "nowhere", "model"},
		{"bad after", "GET", "/v1/sessions/" + parent.ID + "/history?after=x", nil, nil, 400, "message id", "after"},
		{"bad wait", "POST", "/v1/sessions/" + parent.ID + "/messages?wait=perhaps", map[string]any{"text": "hi"}, nil, 400, "true or false", "wait"},
		{"unknown task", "GET", "/v1/tasks/zzzzzzzz", nil, nil, 404, "no task", ""},
		{"unknown session", "GET", "/v1/sessions/zzzzzzzz/history", nil, nil, 404, "no session", ""},
		{"unknown batch", "GET", "/v1/batches/zzzzzzzz", nil, nil, 404, "no batch", ""},
		{"unknown endpoint", "GET", "/v1/nothing", nil, nil, 404, "no such endpoint", ""},
		{"wrong method", "DELETE", "/v1/tasks", nil, nil, 405, "not allowed", ""},
		{"wrong method on a task", "PUT", "/v1/tasks/" + completed.ID, nil, nil, 405, "not allowed", ""},
		{"resume a running task", "POST", "/v1/tasks/" + running.ID + "/resume", map[string]any{"prompt": "more"}, nil, 409, "only completed tasks", ""},
		{"cancel a completed task", "POST", "/v1/tasks/" + completed.ID + "/cancel", nil, nil, 409, "nothing to cancel", ""},
		{"message during a turn", "POST", "/v1/sessions/" + busy.ID + "/messages", map[string]any{"text": "hi"}, nil, 409, "turn is running", ""},
		{"clear during a turn", "POST", "/v1/sessions/" + busy.ID + "/clear", nil, nil, 409, "turn is running", ""},
		{"message to a task's session", "POST", "/v1/sessions/" + completed.ID + "/messages", map[string]any{"text": "hi"}, nil, 409, "resume", ""},
		{"clear a running task's session", "POST", "/v1/sessions/" + running.ID + "/clear", nil, nil, 409, "cannot be cleared", ""},
		{"clear a completed task's session", "POST", "/v1/sessions/" + completed.ID + "/clear", nil, nil, 409, "cannot be cleared", ""},
		{"message to an MCP client's session", "POST", "/v1/sessions/" + mcpClient.ID + "/messages", map[string]any{"text": "hi"}, nil, 409, "MCP client", ""},
		{"body too large", "POST", "/v1/sessions/" + parent.ID + "/messages", big, nil, 413, "larger than", ""},
		{"spawn depth", "POST", "/v1/tasks", map[string]any{"session_id": completed.ID, "agent": "general", "description": "d", "prompt": "p"}, nil, 429, "spawn_depth", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request(tt.method, tt.path, tt.body, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.want)
			}
			var body struct {
				Error      string   `json:"error"`
				Status     int      `json:"status"`
				Field      string   `json:"field"`
				Candidates []string `json:"candidates"`
			}
			r.decode(t, &body)
			if body.Status != tt.want || !strings.Contains(body.Error, tt.wantErr) || body.Field != tt.wantField {
				t.Fatalf("error body = %+v, want status %d, an error about %q, field %q", body, tt.want, tt.wantErr, tt.wantField)
			}
			if tt.name == "ambiguous prefix" && len(body.Candidates) < 2 {
				t.Errorf("an ambiguous prefix lists no candidates: %+v", body)
			}
			if tt.want == 405 && r.header.Get("Allow") == "" {
				t.Error("405 without an Allow header")
			}
		})
	}

	t.Run("expired task session", func(t *testing.T) {
		if err := h.store.DeleteSession(context.Background(), completed.ID); err != nil {
			t.Fatal(err)
		}
		r := h.request("POST", "/v1/tasks/"+completed.ID+"/resume", map[string]any{"prompt": "more"})
		if r.status != http.StatusGone || !strings.Contains(r.object(t)["error"].(string), "new superagents_task") {
			t.Fatalf("resume of a task whose session is gone = %d %s, want 410", r.status, r.body)
		}
		r = h.request("POST", "/v1/tasks", map[string]any{"resume": completed.ID, "prompt": "more"})
		if body := r.object(t); r.status != http.StatusGone || body["field"] != nil {
			t.Fatalf("resume in the body of a task whose session is gone = %d %s, want 410 with no field", r.status, r.body)
		}
	})
}

// TestErrorBodiesGolden keeps the error replies people read, word for
// word, in testdata/errors.golden (go test -update rewrites it).
func TestErrorBodiesGolden(t *testing.T) {
	h := newHarness(t, withStore(sequentialIDs()))
	h.session()
	h.session()
	requests := []struct {
		method, path string
		body         any
		headers      []string
	}{
		{"GET", "/v1/health", nil, []string{"Authorization", ""}},
		{"GET", "/v1/health", nil, []string{"Authorization", "Bearer nope"}},
		{"GET", "/v1/tasks?limit=500", nil, nil},
		{"GET", "/v1/tasks?status=finished", nil, nil},
		{"GET", "/v1/sessions/abcd", nil, nil},
		{"GET", "/v1/tasks/zzzzzzzz", nil, nil},
		{"POST", "/v1/tasks", map[string]any{"fork": true, "resume": "abcd000000000001", "prompt": "p"}, nil},
		{"POST", "/v1/tasks", map[string]any{"sesion_id": "abcd000000000001"}, nil},
		{"POST", "/v1/tasks", map[string]any{"session_id": "abcd000000000001", "agent": "nobody", "description": "d", "prompt": "p"}, nil},
		{"POST", "/v1/tasks", `{"timeout": "soon"}`, nil},
		{"POST", "/v1/tasks", `{"timeout": 1.5}`, nil},
		{"POST", "/v1/tasks", `{"timeout": 18446744074}`, nil},
		{"GET", "/v1/tasks?session=zzz", nil, nil},
		{"POST", "/v1/tasks", map[string]any{"session_id": "zzzzzzzz", "agent": "general", "description": "d", "prompt": "p"}, nil},
		{"POST", "/v1/tasks", map[string]any{"resume": "zzz", "prompt": "p"}, nil},
		{"POST", "/v1/tasks/abcd000000000001/messages", map[string]any{"message": ""}, nil},
		{"POST", "/v1/tasks/zzzzzzzz/messages", map[string]any{"message": "more"}, nil},
		{"DELETE", "/v1/tasks", nil, nil},
		{"PUT", "/v1/tasks/abcd000000000001/messages", nil, nil},
		{"GET", "/v1/nowhere", nil, nil},
	}
	var out strings.Builder
	for _, rq := range requests {
		r := h.request(rq.method, rq.path, rq.body, rq.headers...)
		fmt.Fprintf(&out, "%s %s\n%d %s", rq.method, rq.path, r.status, r.body)
		if allow := r.header.Get("Allow"); allow != "" {
			fmt.Fprintf(&out, "Allow: %s\n", allow)
		}
		out.WriteString("\n")
	}
	golden.Check(t, "errors.golden", []byte(out.String()))
}

// A path the mux cleans is redirected with a JSON answer, as every other
// answer of the API is.
func TestUncleanPathRedirect(t *testing.T) {
	h := newHarness(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest("GET", h.url+"/v1//tasks", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("the redirect's body is not JSON: %v", err)
	}
	if res.StatusCode/100 != 3 || res.Header.Get("Location") != "/v1/tasks" || body.Status != res.StatusCode ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1//tasks = %d, Location %q, Content-Type %q, body %+v; want a redirect to /v1/tasks in JSON",
			res.StatusCode, res.Header.Get("Location"), res.Header.Get("Content-Type"), body)
	}
}
