package repl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
)

// The chat follows the store's change log, not the task manager's
// callbacks: a task's end and its notification are one transaction, so
// when the chat reads the notification it knows, from the store, whether
// the agent's other tasks have ended too. That holds for tasks run by
// other processes as well, and it keeps the order of what is shown: the
// notification first, then the turn it wakes.

// follower is where the chat's reading of the change log is.
type follower struct {
	mu sync.Mutex
	// shown: the changes up to this one were shown (their notifications
	// are out); handled: and the wakes they allowed have started.
	shown, handled int64
	// wakes holds the agents whose wake waits for a change to be shown.
	wakes map[string]int64
	moved chan struct{} // closed (and replaced) when handled moves
	done  chan struct{} // closed when following stops
}

// showed records that a change was shown and returns the agents whose
// wake waited for it.
func (f *follower) showed(id int64) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shown = id
	var due []string
	for agent, at := range f.wakes {
		if at <= id {
			due = append(due, agent)
			delete(f.wakes, agent)
		}
	}
	slices.Sort(due)
	return due
}

func (f *follower) handledTo(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handled = id
	close(f.moved)
	f.moved = make(chan struct{})
}

// deferWake makes an agent's wake wait until the change target is shown,
// unless it is already; it reports whether it had to.
func (f *follower) deferWake(agent string, target int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if target <= f.shown {
		return false
	}
	f.wakes[agent] = max(f.wakes[agent], target)
	return true
}

func (f *follower) wait() {
	if f.done != nil {
		<-f.done
	}
}

// startFollowing reads the tree's running tasks, then follows the change
// log from before that read, so that nothing is missed.
func (c *Chat) startFollowing(ctx context.Context) error {
	cursor := c.rt.Events().Now()
	active, err := c.store.ListTasks(ctx, sa.TaskFilter{Active: true})
	if err != nil {
		return fmt.Errorf("list the running tasks: %w", err)
	}
	for _, t := range active {
		if c.belongs(ctx, t.ParentSessionID) {
			c.running[t.ID] = t
		}
	}
	at := cursor.After()
	c.follow = follower{shown: at, handled: at, wakes: map[string]int64{}, moved: make(chan struct{}), done: make(chan struct{})}
	go c.followChanges(cursor)
	return nil
}

func (c *Chat) followChanges(cursor *events.Cursor) {
	defer close(c.follow.done)
	for {
		ch, err := cursor.Next(c.base)
		if err != nil {
			return
		}
		c.observe(ch)
		for _, id := range c.follow.showed(ch.ID) {
			c.maybeWake(c.base, id)
		}
		c.follow.handledTo(ch.ID)
	}
}

// observe handles one change: a task of the tree that changed or asked,
// or a notification to one of its agents (of a task's ending or
// question), shown and maybe waking the agent.
func (c *Chat) observe(ch sa.Change) {
	ctx := c.base
	switch {
	case ch.Kind == sa.ChangeSessionMessage:
		m, err := ch.Message()
		if err != nil || m.Kind != sa.KindNotification || !c.belongs(ctx, ch.SessionID) {
			return
		}
		c.emit(Event{Session: ch.SessionID, Kind: TaskNotice, Text: m.Text()})
		// A question is no ending: the user's /cancel has no say in it,
		// and the agent may answer it.
		if !c.questions.notified(ch.TaskID) && c.quiet.notified(ch.SessionID) {
			return // the user cancelled that task: nothing to answer
		}
		// Consider a wake as soon as this change counts as shown.
		c.follow.deferWake(ch.SessionID, ch.ID)
	case ch.Kind == sa.ChangeTaskQuestion:
		if c.belongs(ctx, ch.SessionID) {
			c.questions.asked(ch.TaskID)
		}
	case ch.CarriesTask():
		t, err := ch.Task()
		if err != nil || !c.belongs(ctx, t.ParentSessionID) {
			return
		}
		c.quiet.changed(t)
		c.questions.ended(t)
		c.mu.Lock()
		if t.Status.Active() {
			c.running[t.ID] = t
		} else {
			delete(c.running, t.ID)
		}
		c.mu.Unlock()
		if !t.Status.Active() {
			c.refreshCost(ctx, t.ParentSessionID)
		}
		c.emit(Event{Session: t.ParentSessionID, Kind: TasksChanged})
	}
}

// belongs reports whether a session is an agent of the chat's tree.
func (c *Chat) belongs(ctx context.Context, id string) bool {
	c.mu.Lock()
	member, known := c.members[id]
	c.mu.Unlock()
	if known {
		return member
	}
	root, err := rootOf(ctx, c.store, id)
	if err != nil && !errors.Is(err, sa.ErrNotFound) {
		return false // unknown for now: ask again next time
	}
	member = err == nil && root.ID == c.root
	c.mu.Lock()
	c.members[id] = member
	c.mu.Unlock()
	return member
}

// maybeWake runs a turn of an agent without new input, so that it answers
// the notifications of its tasks: once all its tasks have ended and their
// notifications are shown, if it has not answered them yet, if it is idle
// (else when its turn ends), and never when the user killed it. The
// runtime's waker applies the rule (once per batch, not before the last
// task ended) and looks again when the agent's turn ends; wakeNow the
// chat's own conditions.
func (c *Chat) maybeWake(ctx context.Context, id string) {
	if _, err := c.state(ctx, id); err != nil {
		return
	}
	c.bg.Wake(ctx, id) //nolint:errcheck // looked at again at the next ending
}

// wakeNow starts the wake turn of an agent the waker found due, and
// reports whether it did; when it cannot yet (the notifications are not
// all shown, or a turn runs), maybeWake is called again when it can, or
// the waker looks again when that turn ends.
func (c *Chat) wakeNow(id string) bool {
	ctx := c.base
	a, err := c.state(ctx, id)
	if err != nil {
		return false
	}
	a.waking.Lock()
	defer a.waking.Unlock()
	if !c.canWake(a) {
		return false
	}
	// Every ending is stored by now: show their notifications first.
	last, err := c.store.LastChangeID(ctx)
	if err != nil || c.follow.deferWake(id, last) {
		return false
	}
	c.mu.Lock()
	if !c.canWakeLocked(a) {
		c.mu.Unlock()
		return false
	}
	t, err := c.startTurn(a, id)
	c.mu.Unlock()
	if err != nil {
		return false
	}
	t.Start()
	return true
}

// canWake says whether a wake may be considered now: not after Close, nor
// for a killed agent, nor while it runs a turn (the user was quicker).
func (c *Chat) canWake(a *agentState) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.canWakeLocked(a)
}

func (c *Chat) canWakeLocked(a *agentState) bool {
	return !c.closed && !a.killed && a.turn == nil
}

// RunningTasks returns how many background tasks of the chat's agents run
// in this process: those that quitting stops.
func (c *Chat) RunningTasks() int {
	n := 0
	for _, id := range c.agentIDs() {
		n += c.rt.Tasks().Active(id)
	}
	return n
}

// QuitWarning says what quitting now would stop, or "" when nothing.
func (c *Chat) QuitWarning() string {
	switch n := c.RunningTasks(); n {
	case 0:
		return ""
	case 1:
		return "1 background task is still running: quitting stops it (it ends as interrupted)."
	default:
		return fmt.Sprintf("%d background tasks are still running: quitting stops them (they end as interrupted).", n)
	}
}

func (c *Chat) agentIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.agents))
	for id := range c.agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Settle waits until the chat's background work is over: no task of its
// agents runs, here or in another process (the nodes of a cluster, which
// run them on PostgreSQL), every notification was shown, and the turns
// they woke have ended (with the tasks those launched, and so on).
func (c *Chat) Settle(ctx context.Context) error {
	for {
		waited := false
		for _, id := range c.agentIDs() {
			active, err := c.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: id, Active: true, IncludeCleared: true, Limit: 1})
			if err != nil {
				return err
			}
			if c.rt.Tasks().Active(id) > 0 || len(active) > 0 {
				waited = true
				if err := c.rt.Tasks().Wait(ctx, id); err != nil {
					return err
				}
			}
		}
		// The notifications are stored by now; once they are read, the
		// wakes they call for have started.
		if err := c.catchUp(ctx); err != nil {
			return err
		}
		for _, t := range c.runningTurns() {
			waited = true
			select {
			case <-t.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if !waited {
			return nil
		}
	}
}

// catchUp waits until the chat has handled every change stored so far.
func (c *Chat) catchUp(ctx context.Context) error {
	target, err := c.store.LastChangeID(ctx)
	if err != nil {
		return err
	}
	c.rt.Events().Sync()
	f := &c.follow
	for {
		f.mu.Lock()
		handled, moved := f.handled, f.moved
		f.mu.Unlock()
		if handled >= target {
			return nil
		}
		select {
		case <-moved:
		case <-f.done:
			return errors.New("the chat stopped following its tasks")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *Chat) runningTurns() []*Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Turn
	for _, a := range c.agents {
		if a.turn != nil && !c.untold[a.turn] {
			out = append(out, a.turn)
		}
	}
	for t := range c.untold {
		out = append(out, t)
	}
	return out
}

// cancelTasks cancels the running tasks of the agents given, and returns
// how many it cancelled.
func (c *Chat) cancelTasks(ctx context.Context, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		list, err := c.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: id, Active: true})
		if err != nil {
			return n, err
		}
		for _, t := range list {
			if _, err := c.rt.Tasks().Cancel(ctx, t.ID); err == nil {
				n++
			} else if !errors.Is(err, sa.ErrConflict) { // ended meanwhile
				return n, err
			}
		}
	}
	return n, nil
}

// agentLabel names an agent in a line about it.
func agentLabel(id string) string { return "agent [" + sa.ShortID(id) + "]" }

// noticeText is a notification as shown: for an agent out of view, with
// the agent it belongs to.
func noticeText(e Event, current string) string {
	if e.Session == current {
		return e.Text
	}
	return agentLabel(e.Session) + ": " + e.Text
}

// describe makes a task's description from its prompt: its first words.
func describe(prompt string) string {
	const maxWords = 6
	words := strings.Fields(prompt)
	text := strings.Join(words, " ")
	if len(words) > maxWords {
		text = strings.Join(words[:maxWords], " ") + "…"
	}
	return clip(text, 60)
}
