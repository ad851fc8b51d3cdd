package agents

import (
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
)

// SystemPrompt returns the system prompt of an agent of this profile that
// can call the named tools. It is the profile's prompt, followed, when the
// background task tools are among the tools, by a section on how to use
// them that names only the ones available. Profiles need not mention
// tools that an agent may or may not get (the task tools are left out
// when the spawn depth limit is reached).
func (p Profile) SystemPrompt(toolNames []string) string {
	section := taskToolsGuide(toolNames)
	if section == "" {
		return p.Prompt
	}
	return p.Prompt + "\n\n" + section
}

func taskToolsGuide(toolNames []string) string {
	has := func(name string) bool { return slices.Contains(toolNames, name) }
	if !has(sa.TaskTool) {
		return ""
	}
	lines := []string{
		"# Background tasks",
		"You can hand work to background agents with " + sa.TaskTool + ". It starts a sub-agent on your prompt and returns a task id at once, without waiting: keep working while it runs.",
		"- Give each task a complete, self-contained prompt and pick the agent whose description fits the work.",
		"- Set fork: true to give the sub-agent this conversation's context, so you need not repeat what you already know.",
		"- Start independent tasks together, but do not start a task for what one or two tool calls can do.",
	}
	if has(sa.OutputTool) {
		lines = append(lines, "- When a task finishes you are notified; then read its result with "+sa.OutputTool+". Do not poll in a loop while you have other work.")
	} else {
		lines = append(lines, "- When a task finishes you are notified with its result.")
	}
	if has(sa.ListTool) {
		lines = append(lines, "- "+sa.ListTool+" shows your tasks and their status.")
	}
	if has(sa.CancelTool) {
		lines = append(lines, "- "+sa.CancelTool+" stops a task that is no longer needed.")
	}
	if has(sa.SendTool) {
		lines = append(lines, "- "+sa.SendTool+" tells a running task something it should know (it reads it before its next step, without stopping), and answers a task that asks you a question.")
	}
	return strings.Join(lines, "\n")
}
