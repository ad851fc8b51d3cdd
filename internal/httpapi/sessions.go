package httpapi

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/runtime"
)

// sessionView is a session with what this server knows of its turns and,
// when answered alone, what it cost.
type sessionView struct {
	sa.Session
	Turn runtime.TurnState `json:"turn"`
	*cost.Costs
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	limit, offset, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := sa.SessionFilter{Limit: limit, Offset: offset}
	if ref := r.URL.Query().Get("parent"); ref != "" {
		parent, err := s.store.ResolveSession(r.Context(), ref)
		if err != nil {
			s.fail(w, r, inField("parent", err))
			return
		}
		f.ParentID = parent.ID
	}
	list, err := s.store.ListSessions(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	costed, err := s.costedSessions(r.Context(), list)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": costed, "limit": limit, "offset": offset})
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Agent string `json:"agent"`
		Model string `json:"model"`
		Title string `json:"title"`
	}
	if err := decodeBody(r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	sess, err := s.rt.Sessions().Create(r.Context(), sa.NewSession{Agent: req.Agent, Model: req.Model, Title: req.Title, Origin: sa.OriginHTTP})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	writeJSON(w, http.StatusCreated, sessionView{Session: sess, Turn: s.turns.State(sess.ID)})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	sess, err := s.store.ResolveSession(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.costs(r.Context(), sess.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sessionView{Session: sess, Turn: s.turns.State(sess.ID), Costs: &c})
}

func (s *Server) sessionHistory(w http.ResponseWriter, r *http.Request) {
	sess, err := s.store.ResolveSession(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeHistory(w, r, sess.ID)
}

// writeHistory answers with a session's effective history (what its agent
// sees, inherited messages included), or with the messages after the id
// ?after= names.
func (s *Server) writeHistory(w http.ResponseWriter, r *http.Request, sessionID string) {
	var after int64
	if raw := r.URL.Query().Get("after"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, r, badField("after", "must be a message id (a whole number), not %q", raw))
			return
		}
		after = n
	}
	msgs, err := s.store.History(r.Context(), sessionID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"session_id": sessionID, "messages": messagesAfter(msgs, after)})
}

func messagesAfter(msgs []sa.Message, after int64) []sa.Message {
	out := []sa.Message{}
	for _, m := range msgs {
		if m.ID > after {
			out = append(out, m)
		}
	}
	return out
}

// postMessage stores a user message and runs the agent's turn in the
// background: 202 Accepted at once with the stored message, the turn's
// messages following on the event stream. With ?wait=true it answers
// when the turn has ended, with the turn's outcome and messages.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Text  string `json:"text"`
		Model string `json:"model"`
	}
	if err := decodeBody(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := required("text", req.Text, "the message to the agent"); err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := queryBool(r, "wait")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	sess, err := s.store.ResolveSession(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.notTaskSession(ctx, sess.ID, ""); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.hasAgent(sess); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.rt.Sessions().Check(sa.Session{Agent: sess.Agent, Model: cmp.Or(req.Model, sess.Model)}); err != nil {
		s.fail(w, r, err)
		return
	}
	var stored sa.Message
	tr, err := s.turns.Start(sess.ID, runtime.TurnRequest{Model: req.Model, Before: func(lease *runtime.Turn) error {
		msgs, err := lease.Append(ctx, sa.UserMessage(req.Text))
		if err == nil {
			stored = msgs[0]
		}
		return err
	}})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	if !wait {
		writeJSON(w, http.StatusAccepted, map[string]any{"message": stored, "turn": tr.StartedState()})
		return
	}
	select {
	case <-tr.Done():
	case <-ctx.Done():
		return // the client left; the turn goes on
	}
	msgs, err := s.store.History(ctx, sess.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": stored, "turn": tr.State(), "messages": messagesAfter(msgs, stored.ID)})
}

// notTaskSession refuses to change a task's session outside the task's
// own lifecycle (why says what the refusal is about): its conversation
// is the task's, which is continued by resuming it. Forking is fine.
func (s *Server) notTaskSession(ctx context.Context, sessionID, why string) error {
	t, err := s.store.Task(ctx, sessionID)
	switch {
	case errors.Is(err, sa.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return errStatus(http.StatusConflict, "session %s is the session of task %s%s: send a follow-up with POST /v1/tasks/%s/resume",
		sa.ShortID(sessionID), sa.ShortID(t.ID), why, t.ID)
}

// hasAgent refuses a turn in a session whose agent is not defined: the
// session of an MCP client (its parent session, which only records its
// tasks' notices) or one whose agent was removed from the configuration.
func (s *Server) hasAgent(sess sa.Session) error {
	if _, err := s.rt.Agents().Profile(sess.Agent); err == nil {
		return nil
	}
	if sess.Agent == sa.MCPClientAgent {
		return errStatus(http.StatusConflict, "session %s belongs to an MCP client: it records the client's tasks and has no agent to run a turn; "+
			"create a session with POST /v1/sessions, or launch a task with POST /v1/tasks", sa.ShortID(sess.ID))
	}
	return errStatus(http.StatusConflict, "session %s runs agent %q, which is not defined any more: available agents are %s; fork the session with another agent",
		sa.ShortID(sess.ID), sess.Agent, strings.Join(s.rt.Agents().Names(), ", "))
}

func (s *Server) forkSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Agent string `json:"agent"`
		Title string `json:"title"`
	}
	if err := decodeBody(r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Agent != "" {
		if _, err := s.rt.Agents().Profile(req.Agent); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	ctx := r.Context()
	parent, err := s.store.ResolveSession(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	child, err := s.rt.Sessions().Fork(ctx, parent.ID, sa.ForkOptions{Agent: req.Agent, Title: req.Title})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+child.ID)
	writeJSON(w, http.StatusCreated, sessionView{Session: child, Turn: s.turns.State(child.ID)})
}

func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.fail(w, r, err)
		return
	}
	sess, err := s.store.ResolveSession(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.notTaskSession(r.Context(), sess.ID, ", whose conversation cannot be cleared (fork the session to start from it)"); err != nil {
		s.fail(w, r, err)
		return
	}
	stored, err := s.rt.Sessions().Clear(r.Context(), sess.ID, runtime.HolderHTTP)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": stored})
}

// deleteSession deletes a session: sessions forked from it keep their
// history, its active tasks end as cancelled.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	sess, err := s.store.ResolveSession(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.rt.Sessions().Delete(r.Context(), sess.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": sess.ID})
}

// clearTasks is superagents_clear for a session: its active tasks are
// cancelled and all its tasks leave its listing (their sessions stay).
func (s *Server) clearTasks(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.fail(w, r, err)
		return
	}
	sess, err := s.store.ResolveSession(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	cancelled, cleared, _, err := s.rt.Tasks().Clear(r.Context(), sess.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"cancelled": cancelled, "cleared": cleared})
}
