package httpapi

import (
	"net/http"

	"github.com/superagents/superagents/cost"
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
	writeJSON(w, http.StatusOK, tree.Priced(s.rt.Engine.Config.ModelInfo))
}
