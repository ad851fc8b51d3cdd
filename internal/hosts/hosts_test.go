package hosts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/hosttest"
)

// The hosts, with the name each gives its conversation in the fork note.
var hostNames = []struct{ host, title string }{
	{hosttest.ClaudeCode, "Claude Code"},
	{hosttest.Codex, "Codex"},
	{hosttest.OpenCode, "OpenCode"},
}

// fact is said only in the host conversation's first turn; a forked
// sub-agent that was given it answers "SAW:" + fact.
const fact = "PELICAN-4711"

// runLimit bounds one host run; testLimit a whole test. They guard
// against a hung host, they measure nothing.
const (
	runLimit  = 3 * time.Minute
	testLimit = 8 * time.Minute
)

// TestHosts drives each host through one conversation over several
// one-shot processes, and a second conversation:
//
//  1. the user says a fact (the first process);
//  2. the next process of the conversation forks a sub-agent, whose model
//     call is held until that process has exited: the sub-agent's request
//     carries the fact, the host's model is told the fork carries its
//     conversation, and the task completes after the host has gone;
//  3. the next process lists the task (its id, and the notice that it
//     finished reach the model), reads its result and resumes it;
//  4. another conversation asks for that task and is told it is not found.
//
// The hosts run in parallel.
func TestHosts(t *testing.T) {
	for _, hn := range hostNames {
		t.Run(hn.host, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), testLimit)
			defer cancel()
			sub := hosttest.NewSubModel(t, fact)
			h := newHost(t, hn.host, hosttest.Options{Script: script, Sub: sub})
			session := conversation(ctx, t, h, hn.title)
			if dir := os.Getenv(envSave); dir != "" && session != "" {
				saveTranscript(ctx, t, h, session, filepath.Join(dir, hn.host))
			}
		})
	}
}

// envSave names a directory where TestHosts saves each host's transcript
// of the conversation (transcripts/testdata/realhosts is made so).
const envSave = "SUPERAGENTS_HOSTS_SAVE_TRANSCRIPTS"

// saveTranscript writes the host's own record of the conversation into dir.
func saveTranscript(ctx context.Context, t *testing.T, h *hosttest.Host, session, dir string) {
	t.Helper()
	name, data, err := h.Transcript(ctx, session)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if err != nil {
		t.Errorf("saving the transcript: %v", err)
	}
}

// conversation runs the steps of TestHosts and returns the conversation's
// id.
func conversation(ctx context.Context, t *testing.T, h *hosttest.Host, title string) string {
	dump := func() string { return "\nwhat the host sent its model:\n" + h.Model.Dump() }

	// 1. The fact.
	session, r := runHost(ctx, t, h, cmdRemember+": the code word is "+fact+". Just say noted.", "")
	if r.Err != nil || session == "" {
		t.Fatalf("first run: no conversation id\n%s%s", r, dump())
	}

	// 2. The fork, held at its model call until the host has exited.
	sub := h.Sub
	sub.Hold()
	mark := len(h.Model.Convs())
	again, r := runHost(ctx, t, h, cmdFork+": ask a sub-agent for the code word.", session)
	if r.Err != nil {
		t.Fatalf("fork run failed\n%s%s", r, dump())
	}
	if again != "" && again != session {
		t.Logf("the resumed conversation has a new id %s (was %s)", again, session)
		session = again
	}
	launch, _ := h.Model.Find(mark, func(c hosttest.Conv) bool {
		return c.Last().Kind == hosttest.ToolResult && strings.HasSuffix(c.Last().Name, "superagents_task")
	})
	if launch.Req.Body == nil {
		t.Fatalf("the host's model never got the result of superagents_task%s", dump())
	}
	answer := launch.Last().Text
	wantNote := "starts with a digest of your " + title + " conversation"
	if !shows(answer, wantNote) {
		t.Errorf("the fork note did not reach the host's model: the superagents_task result it got does not contain %q:\n%s", wantNote, hosttest.Trim(answer, 2000))
	}
	task := onlyTask(ctx, t, h)
	if task.Status != "running" && task.Status != "queued" {
		t.Errorf("when the host exited the task was %s, not running (error %q)", task.Status, task.Error)
	}
	sub.Release()
	task = waitEnded(ctx, t, h, task.ID)
	if task.Status != "completed" {
		t.Errorf("the task the host left running ended %s, not completed (error %q)", task.Status, task.Error)
	}
	if reqs := sub.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0], fact) {
		first := ""
		if len(reqs) > 0 {
			first = reqs[0]
		}
		t.Errorf("the forked sub-agent's first model request (of %d) does not carry the fact %q said earlier in the host conversation:\n%s", len(reqs), fact, hosttest.Trim(first, 3000))
	}

	// 3. The next process of the conversation lists, reads and resumes it.
	mark = len(h.Model.Convs())
	if _, r = runHost(ctx, t, h, cmdCheck+" "+task.ID+": how is the sub-agent doing?", session); r.Err != nil {
		t.Errorf("check run failed\n%s", r)
	}
	results := resultsSince(h, mark)
	list := resultOf(results, "superagents_list")
	if !strings.Contains(list, task.ID[:8]) {
		t.Errorf("superagents_list from the next process of the conversation does not name task %s:\n%s", task.ID, hosttest.Trim(list, 2000))
	}
	notice := fmt.Sprintf("Agent %q finished", forkDescription)
	if !shows(strings.Join(results.texts(), "\n"), notice) {
		t.Errorf("no superagents result of the next process told the host's model %s:%s", notice, dump())
	}
	if out := resultOf(results, "superagents_output"); !shows(out, "SAW:"+fact) {
		t.Errorf("superagents_output from the next process does not give the sub-agent's answer SAW:%s:\n%s", fact, hosttest.Trim(out, 2000))
	}
	resumed := resultsNamed(results, "superagents_task")
	if len(resumed) == 0 || notFound(resumed[0]) {
		t.Errorf("resuming the task from the next process failed: %q", resumed)
	} else if tk := waitEnded(ctx, t, h, task.ID); tk.Status != "completed" || tk.ResumeCount != 1 {
		t.Errorf("after the resume from the next process the task is %s, resumed %d times, want completed and 1 (error %q)", tk.Status, tk.ResumeCount, tk.Error)
	}
	followUp := false
	for _, body := range sub.Requests() {
		followUp = followUp || strings.Contains(body, "Say the code word once more.")
	}
	if !followUp {
		t.Errorf("the sub-agent's model never got the follow-up of the resume")
	}

	// 4. Another conversation does not see it.
	mark = len(h.Model.Convs())
	other, r := runHost(ctx, t, h, cmdPeek+" "+task.ID+": what did that task say?", "")
	if r.Err != nil {
		t.Errorf("other conversation's run failed\n%s", r)
	}
	if other == session {
		t.Errorf("a run without resume continued the conversation %s", session)
	}
	peek := resultOf(resultsSince(h, mark), "superagents_output")
	t.Logf("another conversation's superagents_output: %s", hosttest.Trim(peek, 400))
	if strings.Contains(peek, "SAW:") || !notFound(peek) {
		t.Errorf("another conversation's superagents_output of task %s was not refused as not found:\n%s", task.ID, hosttest.Trim(peek, 2000))
	}
	return session
}

// runHost runs the host once and logs how it went.
func runHost(ctx context.Context, t *testing.T, h *hosttest.Host, prompt, session string) (string, hosttest.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, runLimit)
	defer cancel()
	id, r := h.Run(ctx, prompt, session)
	t.Logf("%s %q (conversation %q): %v", h.Name, prompt, id, r.Err)
	return id, r
}

// task is the part of `superagents tasks --json` the tests read.
type task struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	Result      string `json:"result"`
	Description string `json:"description"`
	ResumeCount int    `json:"resume_count"`
}

func listTasks(ctx context.Context, t *testing.T, h *hosttest.Host) []task {
	t.Helper()
	r := h.Superagents(ctx, "tasks", "--json")
	var list []task
	if r.Err != nil || json.Unmarshal([]byte(r.Stdout), &list) != nil {
		t.Fatalf("superagents tasks --json:\n%s", r)
	}
	return list
}

func onlyTask(ctx context.Context, t *testing.T, h *hosttest.Host) task {
	t.Helper()
	list := listTasks(ctx, t, h)
	if len(list) != 1 {
		t.Fatalf("superagents tasks: want the one forked task, got %d: %+v\nwhat the host sent its model:\n%s", len(list), list, h.Model.Dump())
	}
	return list[0]
}

// waitEnded waits until the task has ended (no longer queued, running or
// resumed), at most a minute.
func waitEnded(ctx context.Context, t *testing.T, h *hosttest.Host, id string) task {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		for _, tk := range listTasks(ctx, t, h) {
			if tk.ID == id && tk.Status != "running" && tk.Status != "queued" && tk.Status != "resumed" {
				return tk
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s has not ended after a minute", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// results are the tool results the host sent its model, in order.
type results []hosttest.Item

func (rs results) texts() []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Text)
	}
	return out
}

// resultsSince returns the tool results in the host's requests from the
// index mark on: those of the newest request, which holds the others.
func resultsSince(h *hosttest.Host, mark int) results {
	convs := h.Model.Convs()
	var out results
	seen := map[string]bool{}
	for _, c := range convs[min(mark, len(convs)):] {
		for _, it := range c.Items {
			if it.Kind == hosttest.ToolResult && !seen[it.CallID+it.Text] {
				seen[it.CallID+it.Text] = true
				out = append(out, it)
			}
		}
	}
	// Keep only the results that came after the mark's conversation.
	if mark > 0 && mark <= len(convs) {
		before := map[string]bool{}
		for _, it := range convs[mark-1].Items {
			before[it.CallID+it.Text] = true
		}
		var fresh results
		for _, it := range out {
			if !before[it.CallID+it.Text] {
				fresh = append(fresh, it)
			}
		}
		out = fresh
	}
	return out
}

func resultsNamed(rs results, suffix string) []string {
	var out []string
	for _, r := range rs {
		if strings.HasSuffix(r.Name, suffix) {
			out = append(out, r.Text)
		}
	}
	return out
}

// resultOf returns the first result of the tool, or "".
func resultOf(rs results, suffix string) string {
	if all := resultsNamed(rs, suffix); len(all) > 0 {
		return all[0]
	}
	return ""
}

func notFound(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "not found") || strings.Contains(s, "no task")
}

// shows reports whether text, as the host gave it to its model, holds s:
// as it is, or inside a JSON string (Claude Code and Codex show a result's
// structured content, JSON, when it has some).
func shows(text, s string) bool {
	b, _ := json.Marshal(s)
	return strings.Contains(text, s) || strings.Contains(text, string(b[1:len(b)-1]))
}
