package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// Script is a list of canned answers for demos and tests, written in TOML:
//
//	# Rules are tried in order; the first whose conditions all hold answers.
//	[[rules]]
//	matches = '(?i)read (\S+)'   # a Go regexp on the latest user message
//	step = 1                     # only as the first answer to that message
//	reply = "Let me read {{group 1}}."
//	tool_calls = [{ name = "read", input = { path = "{{group 1}}" } }]
//
//	[[rules]]
//	after_tool = "read"          # right after a result of the read tool
//	reply = "The file says: {{last_tool_result}}"
//
// Conditions (each optional; a rule without any matches everything):
//   - contains: the latest user message contains this text (ignoring case);
//   - matches: the latest user message matches this regexp;
//   - after_tool: the latest message is a result of this tool;
//   - step: the model call within the turn, 1 for the first answer to the
//     user's message, 2 after the first round of tool calls, and so on.
//
// Answers: reply (text) and/or tool_calls (name and input table). Both are
// templates in Go's text/template syntax (text, function calls, pipelines,
// if/else) with these functions:
//   - last_user: the latest user message;
//   - last_tool_result: the results of the latest tool message, one per line;
//   - tool_result "name": the latest result of that tool;
//   - group N: group N of the matches regexp (0 is the whole match);
//   - slice s i [j] and len s, as in text/template (bytes of text).
//
// A rule may call only tools the request offers; otherwise the call fails
// with an error that names the rule.
type Script struct {
	// Path is the file the script was read from.
	Path  string
	Rules []Rule
}

// Rule is one canned answer and the conditions under which it is given.
type Rule struct {
	Contains  string     `toml:"contains"`
	Matches   string     `toml:"matches"`
	AfterTool string     `toml:"after_tool"`
	Step      int        `toml:"step"`
	Reply     string     `toml:"reply"`
	ToolCalls []ToolCall `toml:"tool_calls"`

	// where names the rule in errors: "file:line: rules.N".
	where string
	re    *regexp.Regexp
}

// ToolCall is a tool call a rule makes.
type ToolCall struct {
	Name  string         `toml:"name"`
	Input map[string]any `toml:"input"`
}

// LoadScript reads and checks a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("offline script: %w", err)
	}
	return ParseScript(path, data)
}

// ParseScript parses and checks a script; path names it in errors, which
// give the line of the rule at fault.
func ParseScript(path string, data []byte) (*Script, error) {
	var file struct {
		Rules []Rule `toml:"rules"`
	}
	f, err := config.DecodeFile(path, data, &file)
	if err != nil {
		return nil, err
	}
	if len(file.Rules) == 0 {
		return nil, &config.Error{Path: path, Msg: "the script has no rules: add [[rules]] tables"}
	}
	s := &Script{Path: path, Rules: file.Rules}
	for i := range s.Rules {
		r := &s.Rules[i]
		key := "rules." + strconv.Itoa(i)
		r.where = fmt.Sprintf("%s:%d: rule %d", path, f.Line(key), i+1)
		if err := r.check(); err != nil {
			return nil, f.Errorf(key, "%v", err)
		}
	}
	return s, nil
}

// check validates a rule and compiles its regexp.
func (r *Rule) check() error {
	if r.Reply == "" && len(r.ToolCalls) == 0 {
		return errors.New("a rule needs a reply or tool_calls")
	}
	if r.Step < 0 {
		return errors.New("step must be 1 or more (or left out)")
	}
	if r.Matches != "" {
		re, err := regexp.Compile(r.Matches)
		if err != nil {
			return fmt.Errorf("matches: %v", err)
		}
		r.re = re
	}
	if _, err := checkTemplate(r.Reply); err != nil {
		return err
	}
	for j, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", j+1)
		}
		if _, err := mapStrings(c.Input, checkTemplate); err != nil {
			return fmt.Errorf("tool call %d: %v", j+1, err)
		}
		if _, err := json.Marshal(c.Input); err != nil {
			return fmt.Errorf("tool call %d: input cannot be written as JSON: %v", j+1, err)
		}
	}
	return nil
}

// match returns the regexp groups when the rule applies to the turn.
func (r *Rule) match(t turn) ([]string, bool) {
	if r.Contains != "" && !strings.Contains(strings.ToLower(t.user), strings.ToLower(r.Contains)) {
		return nil, false
	}
	if r.AfterTool != "" && !t.afterTool(r.AfterTool) {
		return nil, false
	}
	if r.Step != 0 && r.Step != t.step {
		return nil, false
	}
	if r.re == nil {
		return nil, true
	}
	groups := r.re.FindStringSubmatch(t.user)
	return groups, groups != nil
}

// answer renders the rule's reply and tool calls for the turn.
func (r *Rule) answer(t turn, groups []string, offered []superagents.ToolSpec) (string, []superagents.Part, error) {
	funcs := t.funcs(groups)
	text, err := execute("reply", r.Reply, funcs)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", r.where, err)
	}
	var calls []superagents.Part
	for j, c := range r.ToolCalls {
		if !offers(offered, c.Name) {
			return "", nil, fmt.Errorf("%s calls tool %q, which this request does not offer (offered: %s)", r.where, c.Name, toolNames(offered))
		}
		input, err := mapStrings(c.Input, func(s string) (string, error) { return execute("input", s, funcs) })
		if err != nil {
			return "", nil, fmt.Errorf("%s: tool call %d: %v", r.where, j+1, err)
		}
		if input == nil {
			input = map[string]any{}
		}
		raw, err := json.Marshal(input)
		if err != nil {
			return "", nil, fmt.Errorf("%s: tool call %d: %v", r.where, j+1, err)
		}
		calls = append(calls, superagents.Part{Type: superagents.PartToolCall, Name: c.Name, Input: raw})
	}
	return text, calls, nil
}

// mapStrings applies f to every string inside a tool call's input.
func mapStrings(v any, f func(string) (string, error)) (any, error) {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		if v == nil {
			return nil, nil
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := mapStrings(e, f)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := mapStrings(e, f)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func offers(tools []superagents.ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func toolNames(tools []superagents.ToolSpec) string {
	if len(tools) == 0 {
		return "none"
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
