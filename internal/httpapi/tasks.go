package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

// viewTasks shows tasks as every way in does (tasktools.View).
func viewTasks(list []sa.Task) []tasktools.View { return tasktools.NewViews(list, time.Now()) }

// durationView is a DurationStats in milliseconds.
type durationView struct {
	Count int   `json:"count"`
	AvgMS int64 `json:"avg_ms"`
	MinMS int64 `json:"min_ms"`
	MaxMS int64 `json:"max_ms"`
}

func viewDurations(d sa.DurationStats) durationView {
	return durationView{Count: d.Count, AvgMS: d.Avg.Milliseconds(), MinMS: d.Min.Milliseconds(), MaxMS: d.Max.Milliseconds()}
}

// byStatus lists every status, with 0 for those no task has.
func byStatus(counts map[sa.TaskStatus]int) map[sa.TaskStatus]int {
	out := make(map[sa.TaskStatus]int, len(sa.TaskStatuses))
	for _, s := range sa.TaskStatuses {
		out[s] = counts[s]
	}
	return out
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	total, err := s.store.CountTasks(r.Context(), sa.TaskFilter{IncludeCleared: true})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	uptime := time.Since(s.started)
	writeJSON(w, http.StatusOK, map[string]any{
		"status":         "ok",
		"version":        s.opts.Version,
		"started_at":     s.started.UTC(),
		"uptime_seconds": int64(uptime.Seconds()),
		"uptime":         uptime.Round(time.Second).String(),
		"tasks":          total,
	})
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// Stats cover every task ever stored, cleared ones too: clearing only
	// removes a task from its parent's listing.
	st, err := s.store.TaskStats(ctx, sa.TaskFilter{IncludeCleared: true})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	active, err := s.store.ListTasks(ctx, sa.TaskFilter{Active: true, IncludeCleared: true})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"total":        st.Total,
		"by_status":    byStatus(st.ByStatus),
		"by_agent":     st.ByAgent,
		"tool_calls":   st.ToolCalls,
		"durations":    viewDurations(st.Durations),
		"active":       len(active),
		"active_tasks": s.withQuestions(ctx, viewTasks(active)),
	})
}

func (s *Server) listAgents(w http.ResponseWriter, _ *http.Request) {
	type agentView struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Model       string `json:"model,omitempty"`
	}
	var out []agentView
	for _, p := range s.rt.Agents().List() {
		out = append(out, agentView{Name: p.Name, Description: p.Description, Model: p.Model})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

// taskFilter reads the filters of GET /v1/tasks.
func (s *Server) taskFilter(r *http.Request) (sa.TaskFilter, error) {
	q := r.URL.Query()
	f := sa.TaskFilter{Agent: q.Get("agent"), Search: q.Get("search")}
	if strings.ContainsRune(f.Search, 0) {
		return f, badField("search", "cannot contain a NUL character (%%00)")
	}
	var err error
	if f.Status, err = sa.ParseTaskStatus(q.Get("status")); err != nil {
		return f, badField("status", "unknown status %q: use one of %s", q.Get("status"), sa.TaskStatusNames())
	}
	if ref := q.Get("session"); ref != "" {
		sess, err := s.store.ResolveSession(r.Context(), ref)
		if err != nil {
			return f, inField("session", err)
		}
		f.ParentSessionID = sess.ID
	}
	if ref := q.Get("batch"); ref != "" {
		batch, err := s.store.ResolveBatch(r.Context(), ref)
		if err != nil {
			return f, inField("batch", err)
		}
		f.BatchID = batch
	}
	// The API shows every task: clearing only hides tasks from their
	// parent agent's own listing. include_cleared=false hides them here.
	f.IncludeCleared = true
	if q.Get("include_cleared") != "" {
		if f.IncludeCleared, err = queryBool(r, "include_cleared"); err != nil {
			return f, err
		}
	}
	if f.Limit, f.Offset, err = page(r); err != nil {
		return f, err
	}
	return f, nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	f, err := s.taskFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.store.ListTasks(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	total, err := s.countTasks(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	costed, err := s.costedTasks(r.Context(), list)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for i := range costed {
		s.withQuestion(r.Context(), &costed[i].View)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": costed, "total": total, "limit": f.Limit, "offset": f.Offset})
}

// countCache keeps task counts until the next change: paging through a
// listing counts once, not once per page and client.
type countCache struct {
	mu     sync.Mutex
	change int64 // the change log position the counts are for
	counts map[sa.TaskFilter]int
}

// countTasks counts the tasks a filter selects, from the cache when no
// change was written since.
func (s *Server) countTasks(ctx context.Context, f sa.TaskFilter) (int, error) {
	f.Limit, f.Offset = 0, 0
	last, err := s.store.LastChangeID(ctx)
	if err != nil {
		return 0, err
	}
	c := &s.counts
	c.mu.Lock()
	n, ok := c.counts[f]
	ok = ok && c.change == last
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	if n, err = s.store.CountTasks(ctx, f); err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.change != last || c.counts == nil {
		c.change, c.counts = last, map[sa.TaskFilter]int{}
	}
	if len(c.counts) < 1024 {
		c.counts[f] = n
	}
	c.mu.Unlock()
	return n, nil
}

// launchRequest is the body of POST /v1/tasks: superagents_task's input
// plus the parent session.
type launchRequest struct {
	SessionID   string `json:"session_id"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
	Fork        bool   `json:"fork"`
	Resume      string `json:"resume"`
	// Timeout is in whole seconds (0: the task time limit).
	Timeout int64 `json:"timeout"`
	// MaxCost and MaxTokens are the task tree's budget, as in
	// superagents_task.
	MaxCost   float64 `json:"max_cost"`
	MaxTokens int64   `json:"max_tokens"`
	// Isolation "worktree" runs the task in a git worktree of its own.
	Isolation string `json:"isolation"`
}

func (s *Server) launchTask(w http.ResponseWriter, r *http.Request) {
	var body launchRequest
	if err := decodeBody(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	req := runtime.TaskRequest{Description: body.Description, Prompt: body.Prompt, Agent: body.Agent, Fork: body.Fork,
		Resume: body.Resume, Timeout: body.Timeout, MaxCost: body.MaxCost, MaxTokens: body.MaxTokens, Isolation: body.Isolation}
	if err := s.rt.Tasks().Check(req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Resume != "" {
		// Resolved here so that a bad id names its field; the states
		// that refuse a resume (409, 410) are the task's, not the field's.
		t, err := s.store.ResolveTask(r.Context(), req.Resume)
		if err != nil {
			s.fail(w, r, inField("resume", err))
			return
		}
		if err := s.rt.Tasks().CheckResumeAgent(t, req.Agent); err != nil {
			s.fail(w, r, inField("agent", err))
			return
		}
		s.resume(w, r, t.ID, req.Prompt)
		return
	}
	if err := required("session_id", body.SessionID, "the session the task reports to"); err != nil {
		s.fail(w, r, err)
		return
	}
	parent, err := s.store.ResolveSession(r.Context(), body.SessionID)
	if err != nil {
		s.fail(w, r, inField("session_id", err))
		return
	}
	req.Parent = parent.ID
	t, _, err := s.rt.Tasks().Submit(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/tasks/"+t.ID)
	writeJSON(w, http.StatusCreated, tasktools.NewView(t, time.Now()))
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := s.store.ResolveTask(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	costed, err := s.costedTask(r.Context(), t)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.withQuestion(r.Context(), &costed.View)
	writeJSON(w, http.StatusOK, costed)
}

func (s *Server) taskMessages(w http.ResponseWriter, r *http.Request) {
	t, err := s.store.ResolveTask(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeHistory(w, r, t.ID)
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) {
	t, err := s.rt.Tasks().Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tasktools.NewView(t, time.Now()))
}

func (s *Server) resumeTask(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt string `json:"prompt"`
	}
	if err := decodeBody(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	s.resume(w, r, r.PathValue("id"), req.Prompt)
}

// resume sends a follow-up to a completed task, which runs it in the
// background: 202 Accepted.
func (s *Server) resume(w http.ResponseWriter, r *http.Request, ref, prompt string) {
	t, _, err := s.rt.Tasks().Submit(r.Context(), runtime.TaskRequest{Resume: ref, Prompt: prompt})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/tasks/"+t.ID)
	writeJSON(w, http.StatusAccepted, tasktools.NewView(t, time.Now()))
}

// groupView sums up the tasks of one batch (launched by one turn).
type groupView struct {
	BatchID   string           `json:"batch_id"`
	Tasks     []tasktools.View `json:"tasks"`
	Total     int              `json:"total"`
	Queued    int              `json:"queued"`
	Running   int              `json:"running"`
	Completed int              `json:"completed"`
	Error     int              `json:"error"`
	Cancelled int              `json:"cancelled"`
	// CompletionRate is the share of the tasks that completed, 0 to 1.
	CompletionRate float64   `json:"completion_rate"`
	ToolCalls      int       `json:"tool_calls"`
	StartedAt      time.Time `json:"started_at"`
	// EndedAt is set once every task of the batch has ended.
	EndedAt *time.Time `json:"ended_at,omitempty"`
	// DurationMS runs from the first launch to the last ending (or now).
	DurationMS int64 `json:"duration_ms"`
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request) {
	batch, err := s.store.ResolveBatch(r.Context(), r.PathValue("batch"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.store.ListTasks(r.Context(), sa.TaskFilter{BatchID: batch, IncludeCleared: true})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	slices.Reverse(list) // launch order
	writeJSON(w, http.StatusOK, summarizeGroup(batch, list, time.Now()))
}

func summarizeGroup(batch string, list []sa.Task, now time.Time) groupView {
	g := groupView{BatchID: batch, Tasks: viewTasks(list), Total: len(list)}
	var last time.Time
	ended := true
	for i, t := range list {
		switch t.Status {
		case sa.TaskQueued:
			g.Queued++
		case sa.TaskRunning, sa.TaskResumed:
			g.Running++
		case sa.TaskCompleted:
			g.Completed++
		case sa.TaskError:
			g.Error++
		case sa.TaskCancelled:
			g.Cancelled++
		}
		g.ToolCalls += t.Progress.ToolCalls
		if i == 0 || t.CreatedAt.Before(g.StartedAt) {
			g.StartedAt = t.CreatedAt
		}
		if t.CompletedAt == nil {
			ended = false
		} else if t.CompletedAt.After(last) {
			last = *t.CompletedAt
		}
	}
	if g.Total > 0 {
		g.CompletionRate = float64(g.Completed) / float64(g.Total)
	}
	end := now
	if ended && g.Total > 0 {
		g.EndedAt, end = &last, last
	}
	g.DurationMS = max(end.Sub(g.StartedAt), 0).Milliseconds()
	return g
}
