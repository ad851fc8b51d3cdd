package httpapi

import (
	"net/http"

	"github.com/superagents/superagents/internal/runtime"
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
	res, err := s.rt.Sessions().Compact(ctx, sess.ID, runtime.HolderHTTP, req.Model, req.Instructions)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
