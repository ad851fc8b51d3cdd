package superagents

import (
	"fmt"
	"strings"
	"time"
)

// Duration is how long a task's latest launch or resume has run: until it
// ended, or until now. Every listing, notification and view uses it.
func (t Task) Duration(now time.Time) time.Duration {
	end := now
	if t.CompletedAt != nil {
		end = *t.CompletedAt
	}
	return max(end.Sub(t.StartedAt), 0)
}

// FormatDuration shows a duration the way notifications and task tools
// do: 12s, 2m 5s, 1h 3m.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// Plural is n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ShortCommit is a commit id cut to 12 characters, as people read it.
func ShortCommit(c string) string { return c[:min(len(c), 12)] }

// WorktreeNote tells, once a task with a worktree has ended, where its
// work is ("" for a task without one): its notification and its output
// say the same.
func (t Task) WorktreeNote() string {
	w := t.Worktree
	if w == nil {
		return ""
	}
	switch {
	case w.Removed:
		return fmt.Sprintf("Worktree: the task changed no files, so its worktree and branch %s were removed.", w.Branch)
	case w.Changes == "" && w.Commits == 0:
		return fmt.Sprintf("Worktree: branch %s, in %s.", w.Branch, w.Path)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Worktree: branch %s, in %s", w.Branch, w.Path)
	if w.Commits > 0 {
		fmt.Fprintf(&b, " (%s on the branch)", Plural(w.Commits, "commit"))
	}
	b.WriteString(".")
	if w.Changes != "" {
		fmt.Fprintf(&b, "\nFiles changed since %s (git diff --stat, uncommitted and untracked files included):\n%s", ShortCommit(w.Base), w.Changes)
	}
	return b.String()
}
