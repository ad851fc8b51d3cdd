package httpapi

import (
	"net/http"

	"github.com/superagents/superagents/compact"
	"github.com/superagents/superagents/engine"
)

// compactRequest is the body of POST /v1/sessions/{id}/compact; both
// fields are optional.
type compactRequest struct {
	// Instructions say what the summary must keep.
	Instructions string `json:"instructions"`
	// Model writes the summary instead of the session's own.
	Model string `json:"model"`
}

// compactSession asks the session's model for a summary and stores the
// compaction (marker, then summary); it answers with both and the number
// of messages the summary replaces.
func (s *Server) compactSession(w http.ResponseWriter, r *http.Request) {
	var req compactRequest
	if err := decodeBody(r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	sess, err := s.store.ResolveSession(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.notTaskSession(ctx, sess.ID, ", which compacts on its own when its context fills up"); err != nil {
		s.fail(w, r, err)
		return
	}
	var res compact.Result
	// Holding the session's turn slot keeps a turn from starting while
	// the summary is written.
	err = s.turns.hold(sess.ID, func() error {
		loop, err := s.opts.Engine.Loop(ctx, sess, engine.TurnOptions{Model: req.Model})
		if err != nil {
			return err
		}
		res, err = loop.Compactor().Compact(ctx, sess.ID, req.Instructions)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
