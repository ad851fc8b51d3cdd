package tasks

import (
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
)

// notification is the message a task's ending leaves in its parent
// session: a visible line for people and a hidden hint for the model.
func notification(t sa.Task, batch sa.BatchState) sa.Message {
	return sa.Message{
		Role: sa.RoleUser,
		Kind: sa.KindNotification,
		Parts: []sa.Part{
			sa.TextPart(visibleLine(t) + branchLine(t) + "\n" + progressLine(batch)),
			{Type: sa.PartText, Hidden: true, Text: hint(t, batch)},
		},
	}
}

// visibleLine is what a person sees when a task ends.
func visibleLine(t sa.Task) string {
	took := sa.FormatDuration(elapsed(t))
	if t.ResumeCount > 0 {
		switch t.Status {
		case sa.TaskCompleted:
			return fmt.Sprintf("✓ Resume #%d completed in %s.", t.ResumeCount, took)
		case sa.TaskCancelled:
			return fmt.Sprintf("⊘ Resume #%d cancelled after %s.", t.ResumeCount, took)
		default:
			return fmt.Sprintf("✗ Resume #%d failed in %s.", t.ResumeCount, took)
		}
	}
	switch t.Status {
	case sa.TaskCompleted:
		return fmt.Sprintf("✓ Agent \"%s\" finished in %s.", t.Description, took)
	case sa.TaskCancelled:
		return fmt.Sprintf("⊘ Agent \"%s\" cancelled after %s.", t.Description, took)
	default:
		return fmt.Sprintf("✗ Agent \"%s\" failed in %s.", t.Description, took)
	}
}

// branchLine says, for a task with a worktree, where its work is, on one
// line ("" otherwise).
func branchLine(t sa.Task) string {
	w := t.Worktree
	switch {
	case w == nil:
		return ""
	case w.Removed:
		return "\nNo files changed: its worktree and branch were removed."
	}
	return fmt.Sprintf("\nBranch %s, worktree %s.", w.Branch, w.Path)
}

// elapsed is how long the task's latest launch or resume ran.
func elapsed(t sa.Task) time.Duration { return t.Duration(time.Now()) }

// progressLine counts the batch's ended tasks.
func progressLine(batch sa.BatchState) string {
	return fmt.Sprintf("Task Progress: %d/%d", batch.Done(), batch.Total)
}

// hint tells the model what happened and what it can do next.
func hint(t sa.Task, batch sa.BatchState) string {
	id := t.ID
	var b strings.Builder
	switch {
	case t.ResumeCount > 0 && t.Status == sa.TaskCompleted:
		fmt.Fprintf(&b, "Resume #%d of background task %s (%q) completed. Its response:\n%s", t.ResumeCount, id, t.Description, t.Result)
	case t.ResumeCount > 0 && t.Status == sa.TaskCancelled:
		fmt.Fprintf(&b, "Resume #%d of background task %s (%q) was cancelled. %s", t.ResumeCount, id, t.Description, earlierStands)
	case t.ResumeCount > 0:
		fmt.Fprintf(&b, "Resume #%d of background task %s (%q) failed: %s\n%s", t.ResumeCount, id, t.Description, t.Error, earlierStands)
	case t.Status == sa.TaskCompleted:
		fmt.Fprintf(&b, "Background task %s (%q) finished. Read its result with superagents_output (task_id %q).", id, t.Description, id)
	case t.Status == sa.TaskCancelled:
		fmt.Fprintf(&b, "Background task %s (%q) was cancelled.", id, t.Description)
	default:
		fmt.Fprintf(&b, "Background task %s (%q) failed: %s", id, t.Description, t.Error)
	}
	if note := t.WorktreeNote(); note != "" {
		b.WriteString("\n" + note)
	}
	switch {
	case batch.Active > 0:
		fmt.Fprintf(&b, "\n%d other task(s) still running. You may keep working, or wait for them with superagents_output (block: true); you will be notified as each one ends.", batch.Active)
	case batch.Total > 1:
		fmt.Fprintf(&b, "\nAll %d tasks finished.", batch.Done())
		if len(batch.Completed) > 0 {
			fmt.Fprintf(&b, " Read the results with superagents_output, task_id one of: %s.", strings.Join(batch.Completed, ", "))
		}
	}
	return b.String()
}

// earlierStands tells a model what a resume that did not complete left.
const earlierStands = "The answer before it stands (superagents_output shows it), and the task can be resumed again."
