package hosts_test

import (
	"regexp"
	"strings"

	"github.com/superagents/superagents/internal/hosttest"
)

// The words the user prompts start with, which the host's scripted model
// acts on.
const (
	// cmdRemember: the prompt carries the fact; the model says it noted it.
	cmdRemember = "REMEMBER"
	// cmdFork: the model forks a sub-agent (superagents_task, fork: true).
	cmdFork = "FORK"
	// cmdCheck <id>: the model lists its tasks, reads task <id> and resumes
	// it.
	cmdCheck = "CHECK"
	// cmdPeek <id>: the model reads task <id> (superagents_output).
	cmdPeek = "PEEK"
	// cmdLaunch: the model launches a plain task.
	cmdLaunch = "LAUNCH"
)

// Replies of the host's model when it is done.
const (
	replyNoted    = "Noted."
	replyLaunched = "The sub-agent is on it."
	replyDone     = "Done."
)

// forkDescription is the forked task's description, named in its notice.
const forkDescription = "recall the code word"

var idArg = regexp.MustCompile(`(?:CHECK|PEEK) ([0-9a-z]+)`)

// script is the host's model: it decides each reply from the last user
// prompt's word and from how far the model has got since (the tool
// results that follow that prompt). With Claude Code's deferred tools it
// first loads superagents' tools with ToolSearch.
func script(c hosttest.Conv) hosttest.Action {
	// The newest user prompt with a command; the host may add user
	// messages of its own after it (Claude Code's "Tool loaded.").
	at := -1
	for i := len(c.Items) - 1; i >= 0 && at < 0; i-- {
		if c.Items[i].Kind == hosttest.User && command(c.Items[i].Text) {
			at = i
		}
	}
	if at < 0 {
		// A request of the host's own (a title, a summary): plain text.
		return hosttest.Action{Text: replyDone}
	}
	prompt := c.Items[at].Text
	if len(c.Tools) == 0 {
		// The host's own request about the prompt (OpenCode's title).
		return hosttest.Action{Text: "A conversation"}
	}
	// The tool calls and results since the prompt.
	since := c.Items[at+1:]
	results := 0
	for _, it := range since {
		if it.Kind == hosttest.ToolResult && !strings.HasSuffix(it.Name, "ToolSearch") {
			results++
		}
	}
	tool := func(name string) string {
		if t := c.Tool(name); t != "" {
			return t
		}
		return ""
	}
	call := func(name string, input map[string]any) hosttest.Action {
		if t := tool(name); t != "" {
			return hosttest.Action{Tool: t, Input: input}
		}
		if search := c.Tool("ToolSearch"); search != "" && !searched(since) {
			return hosttest.Action{Tool: search, Input: map[string]any{
				"query": "select:mcp__superagents__superagents_task,mcp__superagents__superagents_output,mcp__superagents__superagents_list", "max_results": 5,
			}}
		}
		return hosttest.Action{Text: "I have no tool " + name + "."}
	}
	id := ""
	if m := idArg.FindStringSubmatch(prompt); m != nil {
		id = m[1]
	}
	switch {
	case strings.Contains(prompt, cmdRemember):
		return hosttest.Action{Text: replyNoted}
	case strings.Contains(prompt, cmdFork):
		if results == 0 {
			return call("superagents_task", map[string]any{
				"description": forkDescription, "prompt": "What is the code word?", "agent": "general", "fork": true,
			})
		}
		return hosttest.Action{Text: replyLaunched}
	case strings.Contains(prompt, cmdCheck):
		switch results {
		case 0:
			return call("superagents_list", map[string]any{})
		case 1:
			return call("superagents_output", map[string]any{"task_id": id})
		case 2:
			return call("superagents_task", map[string]any{"resume": id, "prompt": "Say the code word once more."})
		}
		return hosttest.Action{Text: replyDone}
	case strings.Contains(prompt, cmdPeek):
		if results == 0 {
			return call("superagents_output", map[string]any{"task_id": id})
		}
		return hosttest.Action{Text: replyDone}
	default: // cmdLaunch
		if results == 0 {
			return call("superagents_task", map[string]any{"description": "count the files", "prompt": "How many files are there?", "agent": "general"})
		}
		return hosttest.Action{Text: replyDone}
	}
}

// searched reports whether the model called ToolSearch since the prompt.
func searched(since []hosttest.Item) bool {
	for _, it := range since {
		if it.Kind == hosttest.Call && strings.HasSuffix(it.Name, "ToolSearch") {
			return true
		}
	}
	return false
}

// command reports whether a user prompt holds one of the script's words.
func command(prompt string) bool {
	for _, w := range []string{cmdRemember, cmdFork, cmdCheck, cmdPeek, cmdLaunch} {
		if strings.Contains(prompt, w) {
			return true
		}
	}
	return false
}
