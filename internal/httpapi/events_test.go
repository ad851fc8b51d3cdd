package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/httpapi"
)

type snapshotEvent struct {
	Reason      string                `json:"reason"`
	Note        string                `json:"note"`
	LastEventID int64                 `json:"last_event_id"`
	Tasks       []sa.Task             `json:"tasks"`
	Counts      map[sa.TaskStatus]int `json:"counts"`
	Sessions    []sa.SessionSummary   `json:"sessions"`
}

func decodeSnapshot(t testing.TB, ev sseEvent) snapshotEvent {
	t.Helper()
	if ev.name != "snapshot" {
		t.Fatalf("event %q, want a snapshot", ev.name)
	}
	var s snapshotEvent
	if err := json.Unmarshal([]byte(ev.data), &s); err != nil {
		t.Fatal(err)
	}
	if ev.id != strconv.FormatInt(s.LastEventID, 10) {
		t.Fatalf("snapshot id %q, last_event_id %d: they must agree", ev.id, s.LastEventID)
	}
	return s
}

// changeIDs lists the store's change ids in (after, upto].
func (h *harness) changeIDs(after, upto int64) []int64 {
	h.t.Helper()
	var out []int64
	for {
		batch, err := h.store.Changes(context.Background(), after, 1000)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, c := range batch {
			if c.ID > upto {
				return out
			}
			out = append(out, c.ID)
			after = c.ID
		}
		if len(batch) == 0 {
			return out
		}
	}
}

func TestEventsSnapshotThenLiveChanges(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	before := h.launch(parent.ID, "before", "quick: before")
	h.waitTask(before.ID)

	s := h.events("")
	snap := decodeSnapshot(t, s.next(t))
	if snap.Reason != "connect" || len(snap.Tasks) != 1 || snap.Tasks[0].ID != before.ID || snap.Counts[sa.TaskCompleted] != 1 {
		t.Fatalf("snapshot = %+v", snap)
	}
	if len(snap.Sessions) != 2 {
		t.Errorf("snapshot sessions = %d, want 2 (the parent and the task's)", len(snap.Sessions))
	}

	task := h.launch(parent.ID, "live", "quick: live")
	h.waitTask(task.ID)
	last, err := h.store.LastChangeID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	kinds := map[string]int{}
	for {
		ev := s.next(t)
		id, err := strconv.ParseInt(ev.id, 10, 64)
		if err != nil {
			t.Fatalf("event %q has id %q", ev.name, ev.id)
		}
		var c sa.Change
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil || c.ID != id || string(c.Kind) != ev.name {
			t.Fatalf("event %s/%s carries %+v, %v", ev.id, ev.name, c, err)
		}
		got = append(got, id)
		kinds[ev.name]++
		if id == last {
			break
		}
	}
	want := h.changeIDs(snap.LastEventID, last)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("event ids %v, want the change log's %v", got, want)
	}
	for _, k := range []string{"task.created", "task.completed", "session.message"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event among %v", k, kinds)
		}
	}
}

// A client that reconnects with Last-Event-ID gets every change it
// missed, once: the events of both connections together are the change
// log, with no gap and no duplicate.
func TestEventsResumeWithLastEventID(t *testing.T) {
	h := newHarness(t)
	parent := h.session()

	first := h.events("")
	start := decodeSnapshot(t, first.next(t)).LastEventID
	launchAll := func(n int, label string) {
		for i := range n {
			h.launch(parent.ID, fmt.Sprintf("%s %d", label, i), "quick: "+label)
		}
	}
	launchAll(5, "first")
	// Read part of what happened, then drop the connection.
	var seen []int64
	for len(seen) < 12 {
		ev := first.next(t)
		id, _ := strconv.ParseInt(ev.id, 10, 64)
		seen = append(seen, id)
	}
	first.close()

	// More happens while the client is away.
	launchAll(5, "second")
	list, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range list {
		h.waitTask(task.ID)
	}
	last, err := h.store.LastChangeID(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	second := h.events(strconv.FormatInt(seen[len(seen)-1], 10))
	for {
		ev := second.next(t)
		if ev.name == "snapshot" {
			t.Fatalf("a resumable Last-Event-ID got a snapshot: %s", ev.data)
		}
		id, _ := strconv.ParseInt(ev.id, 10, 64)
		seen = append(seen, id)
		if id == last {
			break
		}
	}
	want := h.changeIDs(start, last)
	counts := map[int64]int{}
	for _, id := range seen {
		counts[id]++
	}
	for _, id := range want {
		if counts[id] != 1 {
			t.Errorf("change %d was received %d times, want once", id, counts[id])
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("received %d events over two connections, the log holds %d changes after the snapshot", len(seen), len(want))
	}
	t.Logf("%d changes, %d before the reconnect, each received once", len(want), 12)

	t.Run("resume at the newest change", func(t *testing.T) {
		s := h.events(strconv.FormatInt(last, 10))
		h.session() // one new change
		ev := s.next(t)
		if ev.name != "session.created" || ev.id != strconv.FormatInt(last+1, 10) {
			t.Fatalf("first event after resuming at the end = %s %s, want session.created %d", ev.id, ev.name, last+1)
		}
	})
}

func TestEventsResetWhenTheLogCannotResume(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	for i := range 3 {
		h.waitTask(h.launch(parent.ID, fmt.Sprint("task ", i), "quick: x").ID)
	}
	last, err := h.store.LastChangeID(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("newer than the log", func(t *testing.T) {
		snap := decodeSnapshot(t, h.events(strconv.FormatInt(last+100, 10)).next(t))
		if snap.Reason != "reset" || !strings.Contains(snap.Note, "newer") || snap.LastEventID != last || len(snap.Tasks) != 3 {
			t.Fatalf("snapshot = %+v", snap)
		}
	})

	t.Run("pruned from the log", func(t *testing.T) {
		// The log keeps its newest entries: prune as it does, from the start.
		if _, err := h.store.DB().Exec(`DELETE FROM changes WHERE id <= ?`, last-5); err != nil {
			t.Fatal(err)
		}
		snap := decodeSnapshot(t, h.events(strconv.FormatInt(last-10, 10)).next(t))
		if snap.Reason != "reset" || !strings.Contains(snap.Note, "no longer reaches back") {
			t.Fatalf("snapshot = %+v", snap)
		}
		// The oldest change kept can still be resumed from.
		s := h.events(strconv.FormatInt(last-4, 10))
		if ev := s.next(t); ev.id != strconv.FormatInt(last-3, 10) {
			t.Fatalf("resuming at the oldest kept change gave %s %s", ev.id, ev.name)
		}
	})

	t.Run("not a number", func(t *testing.T) {
		r := h.request("GET", "/v1/events", nil, "Last-Event-ID", "seven")
		if r.status != http.StatusBadRequest || r.object(t)["field"] != "Last-Event-ID" {
			t.Fatalf("bad Last-Event-ID = %d %s", r.status, r.body)
		}
	})
}

func TestEventsHeartbeat(t *testing.T) {
	h := newHarness(t, withServer(func(o *httpapi.Options) { o.Heartbeat = 20 * time.Millisecond }))
	s := h.events("")
	decodeSnapshot(t, s.next(t))
	ev := s.next(t)
	if ev.name != "heartbeat" || ev.hasID {
		t.Fatalf("a silent stream sent %+v, want a heartbeat without an id", ev)
	}
}

// Shutdown ends the event streams, lets a request in flight finish, and
// leaves the task manager to end running tasks as interrupted.
func TestGracefulShutdown(t *testing.T) {
	h := newHarness(t, withServer(func(o *httpapi.Options) { o.ShutdownTimeout = time.Minute }))
	parent := h.session()
	taskGate := h.gate("task")
	task := h.launch(parent.ID, "still running", "gate: "+string(taskGate))
	stream := h.events("")
	decodeSnapshot(t, stream.next(t))

	// A request in flight: its turn waits for a gate.
	turnGate := h.gate("turn")
	cursor := h.cursor()
	var wg sync.WaitGroup
	var inflight response
	wg.Add(1)
	go func() {
		defer wg.Done()
		inflight = h.request("POST", "/v1/sessions/"+parent.ID+"/messages?wait=true", map[string]any{"text": "gate: " + string(turnGate)})
	}()
	h.waitFor("the turn's tool call", cursor, func(c sa.Change) bool {
		m, err := c.Message()
		return err == nil && c.SessionID == parent.ID && len(m.Parts) > 0 && m.Parts[len(m.Parts)-1].Type == sa.PartToolCall
	})

	served := make(chan error, 1)
	go func() { served <- h.shutdown() }()
	if err := stream.ended(t); err == nil {
		t.Error("the event stream ended without an error")
	}
	// The stream ended: shutdown has begun. The request in flight still
	// finishes.
	turnGate.open(t)
	wg.Wait()
	if inflight.status != http.StatusOK || !strings.Contains(string(inflight.body), `"status":"completed"`) {
		t.Fatalf("request in flight = %d %s, want its turn completed", inflight.status, inflight.body)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if _, err := h.client.Get(h.url + "/v1/health"); err == nil {
		t.Error("the server still answers after shutdown")
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.mgr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ended, err := h.store.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != sa.TaskError || !strings.Contains(ended.Error, "interrupted") {
		t.Fatalf("running task after shutdown = %s %q, want error: interrupted", ended.Status, ended.Error)
	}
}

// Everything is served from the store: sessions, histories and tasks
// from before a restart are there.
func TestRestartKeepsEverything(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+parent.ID+"/messages?wait=true", map[string]any{"text": "quick: remember"}, nil)
	task := h.launch(parent.ID, "before restart", "quick: kept")
	h.waitTask(task.ID)
	url := h.url

	h.restart()
	if h.url == url {
		t.Log("the restarted server got the same port")
	}
	var got sa.Task
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+task.ID, nil, &got)
	if got.Status != sa.TaskCompleted || got.Result != "answer: kept" {
		t.Fatalf("task after restart = %+v", got)
	}
	var hist history
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+parent.ID+"/history", nil, &hist)
	if texts := hist.texts(); len(texts) < 3 || texts[0] != "quick: remember" || texts[1] != "answer: remember" {
		t.Fatalf("history after restart = %q", texts)
	}
	snap := decodeSnapshot(t, h.events("").next(t))
	if len(snap.Tasks) != 1 || snap.Counts[sa.TaskCompleted] != 1 {
		t.Fatalf("snapshot after restart = %+v", snap)
	}
}
