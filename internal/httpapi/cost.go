package httpapi

import (
	"context"
	"net/http"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/tasktools"
)

// sessionCost answers what a session (or a task: its id is its session's)
// cost, alone and with every task it launched, with the same for each of
// those tasks.
func (s *Server) sessionCost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sess, err := s.store.ResolveSession(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tree, err := cost.TaskTree(ctx, s.store, sess.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tree.Priced(s.rt.Config().ModelInfo))
}

// costedTask is a task as the API answers it: its view and what it cost
// (the fields and shape of `tasks --json`).
type costedTask struct {
	tasktools.View
	cost.Costs
}

// costedSession is a listed session and what it cost (as `sessions
// --json`).
type costedSession struct {
	sa.SessionSummary
	cost.Costs
}

func (s *Server) costs(ctx context.Context, id string) (cost.Costs, error) {
	return cost.Listed(ctx, s.store, s.rt.Config().ModelInfo, id)
}

func (s *Server) costedTask(ctx context.Context, t sa.Task) (costedTask, error) {
	c, err := s.costs(ctx, t.ID)
	return costedTask{View: tasktools.NewView(t, time.Now()), Costs: c}, err
}

func (s *Server) costedTasks(ctx context.Context, list []sa.Task) ([]costedTask, error) {
	now := time.Now()
	return cost.Each(ctx, s.store, s.rt.Config().ModelInfo, list, func(t sa.Task) string { return t.ID },
		func(t sa.Task, c cost.Costs) costedTask { return costedTask{View: tasktools.NewView(t, now), Costs: c} })
}

func (s *Server) costedSessions(ctx context.Context, list []sa.SessionSummary) ([]costedSession, error) {
	return cost.Each(ctx, s.store, s.rt.Config().ModelInfo, list, func(x sa.SessionSummary) string { return x.ID },
		func(x sa.SessionSummary, c cost.Costs) costedSession {
			return costedSession{SessionSummary: x, Costs: c}
		})
}
