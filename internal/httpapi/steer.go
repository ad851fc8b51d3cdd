package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasktools"
)

// sentView is the answer of POST /v1/tasks/{id}/messages: the task (as
// superagents_send shows it: answered, answer), the question the message
// answered or the message as stored, and the sentence a person reads.
type sentView struct {
	tasktools.SendView
	AnsweredQuestion string          `json:"answered_question,omitempty"`
	Message          *sa.TaskMessage `json:"message,omitempty"`
	Text             string          `json:"text"`
}

// sendToTask is POST /v1/tasks/{id}/messages: a message to an active
// task, or the answer to the question it waits on. The token's holder is
// the user, as in the dashboard.
func (s *Server) sendToTask(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Message string `json:"message"`
	}
	if err := decodeBody(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkTaskMessage(body.Message); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	t, err := s.store.ResolveTask(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sent, err := s.rt.Tasks().Send(ctx, t.ID, tasktools.FromUser, body.Message)
	if err != nil {
		s.fail(w, r, s.sendError(ctx, t.ID, err))
		return
	}
	view := sentView{
		SendView: tasktools.SendView{View: tasktools.NewView(sent.Task, time.Now()), Answered: sent.Answered != nil, Answer: sent.Answer},
		Message:  sent.Message,
		Text:     tasktools.SentText(sent),
	}
	if sent.Answered != nil {
		view.AnsweredQuestion = sent.Answered.Message
	}
	s.withQuestion(ctx, &view.View) // the next one, if it asked several
	writeJSON(w, http.StatusOK, view)
}

// checkTaskMessage refuses, before anything is looked up, a message no
// task would be sent.
func checkTaskMessage(msg string) error {
	if err := required("message", msg, "what the task should know, or your answer to its question"); err != nil {
		return err
	}
	if len(msg) > sa.MaxTaskMessage {
		return badField("message", "is %d bytes; at most %d bytes", len(msg), sa.MaxTaskMessage)
	}
	return nil
}

// sendError says a refused send in the API's terms: an answer that does
// not fit the question is the message's fault, and a completed task is
// resumed through this API's route.
func (s *Server) sendError(ctx context.Context, taskID string, err error) error {
	switch {
	case errors.Is(err, sa.ErrInvalid):
		return inField("message", err)
	case !errors.Is(err, sa.ErrConflict):
		return err
	}
	t, terr := s.store.Task(ctx, taskID)
	if terr != nil || t.Status != sa.TaskCompleted {
		return err
	}
	return errStatus(http.StatusConflict, "task %s (%q) has ended (completed): nothing can be sent to it; resume it to send a follow-up, with POST /v1/tasks/%s/resume",
		sa.ShortID(t.ID), t.Description, t.ID)
}

// inboxView is GET /v1/tasks/{id}/inbox: what was sent to a task, and
// what it asked in its current run.
type inboxView struct {
	TaskID string `json:"task_id"`
	// Messages are every message sent to the task, oldest first.
	Messages []sa.TaskMessage `json:"messages"`
	// Questions are those of the task's current run, oldest first (none
	// once it has ended: its transcript keeps them).
	Questions []questionView `json:"questions"`
}

// questionView is a question a task asked whoever launched it.
type questionView struct {
	Key      string `json:"key"`
	Question string `json:"question"`
	// Choices are the answers it takes ("yes" and "no" for a permission
	// question); none for a free answer.
	Choices    []string   `json:"choices,omitempty"`
	AskedAt    time.Time  `json:"asked_at"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	// Outcome is "waiting", "answered" (with Answer), "declined",
	// "dismissed" or "no_answer" (nobody answered in time).
	Outcome string `json:"outcome"`
	Answer  string `json:"answer,omitempty"`
}

func (s *Server) taskInbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := s.store.ResolveTask(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	msgs, err := s.rt.Tasks().Messages(ctx, t.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	reqs, err := s.store.InputRequests(ctx, t.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := inboxView{TaskID: t.ID, Messages: msgs, Questions: make([]questionView, 0, len(reqs))}
	if out.Messages == nil {
		out.Messages = []sa.TaskMessage{}
	}
	for _, q := range reqs {
		out.Questions = append(out.Questions, viewQuestion(q))
	}
	writeJSON(w, http.StatusOK, out)
}

// elicitResult is a stored answer: MCP's elicitation result.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// viewQuestion reads a stored question and its answer. A request or an
// answer that cannot be read shows as a free question, unanswered words.
func viewQuestion(q sa.InputRequest) questionView {
	v := questionView{Key: q.Key, Question: q.Message, AskedAt: q.CreatedAt, AnsweredAt: q.AnsweredAt, Outcome: "waiting"}
	if form, err := q.Form(); err == nil {
		v.Choices = form.Choices
		if form.YesNo {
			v.Choices = []string{"yes", "no"}
		}
	}
	if q.Pending() {
		return v
	}
	var res elicitResult
	_ = json.Unmarshal(q.Response, &res) // unreadable: dismissed, as below
	switch res.Action {
	case "accept":
		v.Outcome = "answered"
		for _, value := range res.Content {
			v.Answer = answerText(value)
		}
	case "decline":
		v.Outcome = "declined"
	case "no_answer":
		v.Outcome = "no_answer"
	default:
		v.Outcome = "dismissed"
	}
	return v
}

// answerText is an answer's value as a person reads it.
func answerText(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case bool:
		if v {
			return "yes"
		}
		return "no"
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return string(raw)
}

// withQuestion fills in the question an active task waits on, as
// superagents_list does.
func (s *Server) withQuestion(ctx context.Context, v *tasktools.View) {
	if v.Status.Active() {
		v.Question = s.rt.Tasks().Question(ctx, v.ID)
	}
}

// withQuestions is withQuestion for each of views.
func (s *Server) withQuestions(ctx context.Context, views []tasktools.View) []tasktools.View {
	for i := range views {
		s.withQuestion(ctx, &views[i])
	}
	return views
}
