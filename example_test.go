package superagents_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	sa "github.com/superagents/superagents"
)

// demoLineage is a LineageReader over each session's own messages, in id
// order, and each session's parent and fork point: what a store keeps.
type demoLineage struct {
	parent map[string]string
	fork   map[string]int64
	own    map[string][]sa.Message
}

func (d demoLineage) Link(_ context.Context, id string) (string, int64, error) {
	if _, ok := d.own[id]; !ok {
		return "", 0, fmt.Errorf("session %s: %w", id, sa.ErrNotFound)
	}
	return d.parent[id], d.fork[id], nil
}

func (d demoLineage) LastClear(_ context.Context, id string, upto int64) (int64, error) {
	var last int64
	for _, m := range d.own[id] {
		if m.ID <= upto && m.Kind == sa.KindClear {
			last = m.ID
		}
	}
	return last, nil
}

func (d demoLineage) CountMessages(ctx context.Context, id string, after, upto int64) (int, error) {
	msgs, err := d.AppendMessages(ctx, nil, id, after, upto, 0)
	return len(msgs), err
}

func (d demoLineage) AppendMessages(_ context.Context, dst []sa.Message, id string, after, upto int64, limit int) ([]sa.Message, error) {
	n := 0
	for _, m := range d.own[id] {
		if m.ID > after && m.ID <= upto && (limit == 0 || n < limit) {
			dst = append(dst, m)
			n++
		}
	}
	return dst, nil
}

// demoStore holds three sessions: "main", a "fork" of it made after
// message 2, and "fresh", forked from "fork" and then cleared.
func demoStore() demoLineage {
	msg := func(id int64, session string, role sa.Role, text string) sa.Message {
		return sa.Message{ID: id, SessionID: session, Role: role, Parts: []sa.Part{sa.TextPart(text)}}
	}
	return demoLineage{
		parent: map[string]string{"fork": "main", "fresh": "fork"},
		fork:   map[string]int64{"fork": 2, "fresh": 6},
		own: map[string][]sa.Message{
			"main": {
				msg(1, "main", sa.RoleUser, "Why does make build fail?"),
				msg(2, "main", sa.RoleAssistant, "The Makefile asks for a missing build tag."),
				// Written after the fork: the fork does not see them.
				msg(3, "main", sa.RoleUser, "Fix it."),
				msg(4, "main", sa.RoleAssistant, "Fixed."),
			},
			"fork": {
				msg(5, "fork", sa.RoleUser, "Which tag exactly?"),
				msg(6, "fork", sa.RoleAssistant, "heron."),
			},
			"fresh": {
				{ID: 7, SessionID: "fresh", Role: sa.RoleUser, Kind: sa.KindClear},
				msg(8, "fresh", sa.RoleUser, "Start over: list the targets."),
			},
		},
	}
}

// BuildHistory replays a fork: the parent's messages up to the fork point,
// then the child's own. A clear ends what is inherited.
func ExampleBuildHistory() {
	ctx := context.Background()
	store := demoStore()
	for _, session := range []string{"main", "fork", "fresh"} {
		history, err := sa.BuildHistory(ctx, store, session)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%s):\n", session, sa.Plural(len(history), "message"))
		for _, m := range history {
			fmt.Printf("  %d %s %s: %s\n", m.ID, m.SessionID, m.Role, m.Text())
		}
	}
	// Output:
	// main (4 messages):
	//   1 main user: Why does make build fail?
	//   2 main assistant: The Makefile asks for a missing build tag.
	//   3 main user: Fix it.
	//   4 main assistant: Fixed.
	// fork (4 messages):
	//   1 main user: Why does make build fail?
	//   2 main assistant: The Makefile asks for a missing build tag.
	//   5 fork user: Which tag exactly?
	//   6 fork assistant: heron.
	// fresh (1 message):
	//   8 fresh user: Start over: list the targets.
}

// PlanHistory tells which part of each session's own messages a history
// holds, without reading them: the messages with ids in (After, Upto].
func ExamplePlanHistory() {
	ctx := context.Background()
	store := demoStore()
	for _, session := range []string{"fork", "fresh", "gone"} {
		segments, err := sa.PlanHistory(ctx, store, session)
		if err != nil {
			fmt.Println(session+":", err, errors.Is(err, sa.ErrNotFound))
			continue
		}
		fmt.Print(session + ":")
		for _, seg := range segments {
			upto := fmt.Sprint(seg.Upto)
			if seg.Upto == sa.Unbounded {
				upto = "end"
			}
			fmt.Printf(" %s(%d, %s]", seg.SessionID, seg.After, upto)
		}
		fmt.Println()
	}
	// Output:
	// fork: main(0, 2] fork(0, end]
	// fresh: fresh(7, end]
	// gone: read session gone: session gone: not found true
}

// Ids are shown short, and people name them by a prefix, which
// CheckIDPrefix checks before a store looks it up.
func ExampleCheckIDPrefix() {
	id := sa.NewID()
	fmt.Println(len(id), len(sa.ShortID(id)))
	fmt.Println(sa.ShortID("k3x9q2m7w4p8r1t5"))

	for _, ref := range []string{"k3x9q2...", "k3x9", "k3x", "K3X9"} {
		prefix, err := sa.CheckIDPrefix(ref)
		if err != nil {
			fmt.Println(errors.Is(err, sa.ErrInvalid), err)
			continue
		}
		fmt.Printf("%q finds the ids that start with %q\n", ref, prefix)
	}
	// Output:
	// 16 9
	// k3x9q2...
	// "k3x9q2..." finds the ids that start with "k3x9q2"
	// "k3x9" finds the ids that start with "k3x9"
	// true invalid input: id prefix "k3x" is too short: give at least 4 characters
	// true invalid input: id "K3X9" may contain only lowercase letters and digits
}

// ParseTaskStatus reads a status as a person types it, and says which
// statuses there are when it is none of them.
func ExampleParseTaskStatus() {
	for _, s := range []string{" Completed ", "", "done"} {
		status, err := sa.ParseTaskStatus(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q: %q terminal=%v\n", s, status, status.Terminal())
	}
	fmt.Println(sa.TaskStatusNames())
	// Output:
	// " Completed ": "completed" terminal=true
	// "": "" terminal=false
	// invalid input: unknown status "done": use one of queued, running, resumed, completed, error, cancelled
	// queued, running, resumed, completed, error, cancelled
}

// Terminal statuses never regress: a late event cannot turn a cancelled
// task into a completed one, and only a completed task may be resumed.
func ExampleTaskStatus_CanBecome() {
	fmt.Println(sa.TaskRunning.CanBecome(sa.TaskCompleted))
	fmt.Println(sa.TaskCancelled.CanBecome(sa.TaskCompleted))
	fmt.Println(sa.TaskCompleted.CanBecome(sa.TaskResumed))
	fmt.Println(sa.TaskQueued.CanBecome(sa.TaskResumed))
	// Output:
	// true
	// false
	// true
	// false
}

// Notifications and task listings word durations alike.
func ExampleFormatDuration() {
	for _, d := range []time.Duration{12 * time.Second, 125 * time.Second, 63*time.Minute + 20*time.Second} {
		fmt.Println(sa.FormatDuration(d))
	}
	// Output:
	// 12s
	// 2m 5s
	// 1h 3m
}

func ExamplePlural() {
	for _, n := range []int{0, 1, 3} {
		fmt.Println(sa.Plural(n, "tool call"))
	}
	// Output:
	// 0 tool calls
	// 1 tool call
	// 3 tool calls
}

// A message is a role and parts; Validate checks it before a store keeps
// it, and Text is what people see of it.
func ExampleUserMessage() {
	m := sa.UserMessage("Run the tests.")
	m.Parts = append(m.Parts, sa.Part{Type: sa.PartText, Text: "(a hint for the model)", Hidden: true})
	fmt.Printf("%s: %q, valid: %v\n", m.Role, m.Text(), m.Validate() == nil)

	call := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, Name: "bash"}}}
	err := call.Validate()
	fmt.Println(errors.Is(err, sa.ErrInvalid), err)
	// Output:
	// user: "Run the tests.", valid: true
	// true part 1: invalid input: a tool_call part needs call_id and name
}
