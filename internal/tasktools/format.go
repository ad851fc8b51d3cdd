package tasktools

import (
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
)

// Indicators shows "(forked)" and "(resumed)" as TASK-LIST-2 asks: after the
// id, forked first; nothing for a plain task.
func Indicators(t sa.Task) string {
	var marks []string
	if t.IsForked {
		marks = append(marks, "(forked)")
	}
	if t.ResumeCount > 0 {
		marks = append(marks, "(resumed)")
	}
	return strings.Join(marks, " ")
}

// formatList lists tasks, one line each, newest first.
func formatList(list []View, now time.Time) string {
	if len(list) == 0 {
		return "No background tasks found"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Background tasks (%d):", len(list))
	for _, v := range list {
		t := v.Task
		id := t.ID
		if marks := Indicators(t); marks != "" {
			id += " " + marks
		}
		fmt.Fprintf(&b, "\n- %s [%s] %q, agent %s, %s", id, t.Status, t.Description, t.Agent, timing(t, now))
		if n := t.Progress.ToolCalls; n > 0 {
			fmt.Fprintf(&b, ", %s", sa.Plural(n, "tool call"))
		}
		if t.Status == sa.TaskCompleted && t.ResultRetrievedAt == nil {
			b.WriteString(", result unread")
		}
		if v.Question != "" {
			fmt.Fprintf(&b, ", waiting for an answer: %q", v.Question)
		}
	}
	return b.String()
}

// timing says how long a task has run or ran.
func timing(t sa.Task, now time.Time) string {
	switch {
	case t.Status == sa.TaskQueued:
		return "queued " + sa.FormatDuration(now.Sub(t.CreatedAt))
	case t.Status.Active():
		return "running " + sa.FormatDuration(t.Duration(now))
	case t.CompletedAt != nil:
		return "took " + sa.FormatDuration(t.Duration(now))
	}
	return string(t.Status)
}

// formatOutput is superagents_output's answer; answer says how to
// answer the task's question.
func formatOutput(out sa.TaskOutput, now time.Time, answer func(taskID string) string) string {
	t := out.Task
	name := fmt.Sprintf("Task %s (%q)", t.ID, t.Description)
	var b strings.Builder
	switch {
	case out.TimedOut:
		fmt.Fprintf(&b, "Timed out after %s waiting for %s: it is still %s (%s).", sa.FormatDuration(out.Waited), name, t.Status, progressText(t, now))
	case out.Told && t.Status.Active():
		fmt.Fprintf(&b, "Stopped waiting after %s: a question waits for your answer, or a message for you to read. %s is still %s (%s).",
			sa.FormatDuration(out.Waited), name, t.Status, progressText(t, now))
	case t.Status == sa.TaskCompleted:
		fmt.Fprintf(&b, "%s completed in %s.", name, sa.FormatDuration(t.Duration(time.Now())))
		if t.ResumeCount > 0 {
			fmt.Fprintf(&b, " This is the answer to resume #%d.", t.ResumeCount)
		}
		b.WriteString("\n\nResult:\n")
		b.WriteString(cmpText(t.Result, "(the task gave no text answer)"))
		addWorktreeNote(&b, t)
		return b.String()
	case t.Status == sa.TaskError:
		fmt.Fprintf(&b, "%s failed after %s: %s", name, sa.FormatDuration(t.Duration(time.Now())), t.Error)
		earlierAnswer(&b, t)
		addWorktreeNote(&b, t)
		return b.String()
	case t.Status == sa.TaskCancelled:
		fmt.Fprintf(&b, "%s was cancelled after %s", name, sa.FormatDuration(t.Duration(time.Now())))
		// Say why when it was not a plain cancel (its parent went away).
		if why, ok := strings.CutPrefix(t.Error, "cancelled: "); ok {
			fmt.Fprintf(&b, ": %s", why)
		}
		b.WriteString(".")
		earlierAnswer(&b, t)
		addWorktreeNote(&b, t)
		return b.String()
	case t.Status == sa.TaskQueued:
		fmt.Fprintf(&b, "%s is queued: as many tasks as allowed (tasks.concurrency) are running, and it starts when one of them ends.", name)
		return b.String()
	case t.Status == sa.TaskResumed:
		fmt.Fprintf(&b, "%s is being resumed (resume #%d): %s.", name, t.ResumeCount, progressText(t, now))
	default:
		fmt.Fprintf(&b, "%s is running: %s.", name, progressText(t, now))
	}
	if out.Question != "" {
		fmt.Fprintf(&b, "\n\nIt is waiting for an answer to its question: %s\n%s", out.Question, answer(t.ID))
	}
	if out.Partial != "" {
		b.WriteString("\n\nLatest output so far:\n")
		b.WriteString(out.Partial)
	}
	return b.String()
}

// sendHint is how a model answers a task's question.
func sendHint(taskID string) string {
	return fmt.Sprintf("Answer it with %s (task_id %q).", sa.SendTool, taskID)
}

// addWorktreeNote adds, for a task with a worktree, where its work is.
func addWorktreeNote(b *strings.Builder, t sa.Task) {
	if note := t.WorktreeNote(); note != "" {
		b.WriteString("\n\n" + note)
	}
}

// earlierAnswer adds, for a resume that was cancelled or failed, the
// answer before it, which stands.
func earlierAnswer(b *strings.Builder, t sa.Task) {
	if t.ResumeCount == 0 {
		return
	}
	fmt.Fprintf(b, "\nThat was resume #%d: the answer before it stands, and the task can be resumed again.\n\nResult:\n%s",
		t.ResumeCount, cmpText(t.Result, "(the task gave no text answer)"))
}

// progressText sums up a running task's progress.
func progressText(t sa.Task, now time.Time) string {
	p := t.Progress
	text := sa.FormatDuration(t.Duration(now)) + " elapsed, " + sa.Plural(p.ToolCalls, "tool call")
	if len(p.LastTools) > 0 {
		text += " (last: " + strings.Join(p.LastTools, ", ") + ")"
	}
	return text
}

func cmpText(s, empty string) string {
	if strings.TrimSpace(s) == "" {
		return empty
	}
	return s
}

// MessagesText lists the messages sent to a task for a person, oldest
// first, one line each: who sent it, whether the task got it, and its
// text (long ones cut); "" when none were sent.
func MessagesText(msgs []sa.TaskMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Messages sent to it (%d):", len(msgs))
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n- #%d from %s (%s): %s", m.Seq, senderName(m.From), delivery(m), cut(oneLine(m.Text), maxMessageLine))
	}
	return b.String()
}

// maxMessageLine is how many characters of a message MessagesText shows.
const maxMessageLine = 120

// senderName is who sent a message, as a person reading about the task
// says it: From is worded for the task's own model ("you").
func senderName(from string) string {
	switch from {
	case FromAgent:
		return "the agent that launched it"
	case FromHost:
		return "the agent that launched it over MCP"
	}
	return from
}

// delivery says whether a message reached its task.
func delivery(m sa.TaskMessage) string {
	switch {
	case m.DeliveredAt != nil:
		return "delivered"
	case m.Undelivered != "":
		return "not delivered: " + m.Undelivered
	}
	return "waiting for the task's next step"
}

// cut shortens s to n characters, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
