package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
)

// TestSendRacesTheEnd sends messages to tasks while each task's run
// ends: its model answers at once and ends its turn, and the sends land
// at moments spread over the time from its model request to its ending
// and after (measured first on tasks sent nothing): before its run
// reads its inbox for the last time, between that and its ending (its
// completion is refused, and it takes another turn), and after it.
// Every message is either refused (the task ended, ErrConflict) or
// delivered in that run: present once in the task's session, recorded as
// delivered, and read by the model in the run's last request. None is
// accepted and lost, and the task completes.
func TestSendRacesTheEnd(t *testing.T) {
	// When the task of each round first asks its model (its prompt
	// starts with the round's).
	first := &llmtest.Arrival{}
	h := newHarness(t, func(r llmtest.Request) llmtest.Reply {
		first.Saw(r)
		return llmtest.Reply{Text: "done", HeaderDelay: time.Millisecond}
	})
	parent := h.parent(user("parent: hi"))
	launch := func(round int) (sa.Task, string, <-chan time.Time) {
		prompt := fmt.Sprintf("race-%d: answer", round)
		asked := first.Expect(func(r llmtest.Request) bool {
			texts := facts(t, r).Texts
			return len(texts) > 0 && strings.HasPrefix(texts[0], prompt)
		})
		return h.launch(parent.ID, tasks.LaunchRequest{Description: fmt.Sprintf("race %d", round), Prompt: prompt}), prompt, asked
	}
	// How long a run takes from its model request to its ending, here.
	var spans []time.Duration
	for round := range 5 {
		task, _, asked := launch(-1 - round)
		ended := h.wait(task.ID)
		spans = append(spans, ended.CompletedAt.Sub(<-asked))
	}
	slices.Sort(spans)
	span := spans[len(spans)/2]

	const rounds, senders = 150, 3
	var accepted, refused, extended int
	for round := range rounds {
		seen := len(h.srv.Requests())
		task, prompt, asked := launch(round)
		// From a third of the span after the model request to a third
		// past the span.
		after := span * time.Duration(10+round%30) / 30
		sent, late := sendWhileItEnds(t, h.mgr, asked, task.ID, round, senders, after)
		ended := h.wait(task.ID)
		if ended.Status != sa.TaskCompleted {
			t.Fatalf("round %d: the task ended %s: %s", round, ended.Status, ended.Error)
		}
		checkDelivered(t, h, task.ID, prompt, sent, h.srv.Requests()[seen:])
		accepted, refused = accepted+len(sent), refused+late
		if len(sent) > 0 {
			extended++
		}
	}
	t.Logf("runs of %s from the model request to the ending; %d messages delivered, %d refused; %d of %d runs took messages",
		span, accepted, refused, extended, rounds)
}

// sendWhileItEnds sends one message to a task from each of senders
// goroutines, each at a moment at random in the 0.3 ms that start after
// the task's model was asked (asked tells when), as the model answers
// and its run ends. It returns the texts accepted and how many sends
// were refused.
func sendWhileItEnds(t *testing.T, m *tasks.Manager, asked <-chan time.Time, id string, round, senders int, after time.Duration) ([]string, int) {
	var (
		mu      sync.Mutex
		sent    []string
		refused int
		wg      sync.WaitGroup
	)
	var at time.Time
	select {
	case at = <-asked:
	case <-time.After(time.Minute):
		t.Fatal("the task's model was never asked")
	}
	for g := range senders {
		wg.Go(func() {
			time.Sleep(time.Until(at.Add(after + rand.N(300*time.Microsecond))))
			text := fmt.Sprintf("steer %d.%d", round, g)
			_, err := m.Send(context.Background(), id, "the user", text)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				sent = append(sent, text)
			case errors.Is(err, sa.ErrConflict) && strings.Contains(err.Error(), "has ended (completed)"):
				refused++
			default:
				t.Errorf("send %q: %v", text, err)
			}
		})
	}
	wg.Wait()
	return sent, refused
}

// checkDelivered checks that every text sent to a task is in its session
// once, recorded as delivered, and in the last model request its run made
// (the last of reqs whose first message is prompt).
func checkDelivered(t *testing.T, h *harness, id, prompt string, sent []string, reqs []llmtest.Request) {
	t.Helper()
	ctx := context.Background()
	stored, err := h.store.TaskMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(sent) {
		t.Fatalf("task %s: %d messages accepted, %d stored", id, len(sent), len(stored))
	}
	for _, m := range stored {
		if m.DeliveredAt == nil || m.MessageID == 0 || m.Undelivered != "" {
			t.Fatalf("task %s: message %d (%q) accepted but not delivered: %+v", id, m.Seq, m.Text, m)
		}
	}
	history, err := h.store.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, r := range reqs {
		if f := facts(t, r); len(f.Texts) > 0 && strings.HasPrefix(f.Texts[0], prompt) {
			last = string(r.Body)
		}
	}
	for _, text := range sent {
		n := 0
		for _, m := range history {
			if strings.Contains(m.Text(), "\n\n"+text) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("task %s: message %q is in its session %d times, want once", id, text, n)
		}
		if !strings.Contains(last, text) {
			t.Fatalf("task %s: message %q was delivered, but its run's last model request does not hold it", id, text)
		}
	}
}
