package tools

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Policy is the [permissions] section of the configuration file: what the
// built-in tools may do, for every agent and per agent.
//
//	[permissions]
//	read_only = false                 # true: no write, edit or bash for any agent
//	[permissions.bash]
//	allow = []                        # empty: every command not denied
//	deny  = ["rm -rf /", "sudo", "git push"]
//	unlisted = "refuse"               # or "ask": ask the task's user about a command not allowed
//	[permissions.agents.reviewer]     # an agent's own rules, added to the above
//	read_only = true
//
// The bash patterns are a guard rail against a model's mistakes, not a
// sandbox: they are matched against the command as written, and a shell
// offers many ways to do one thing (variables, eval of computed strings,
// scripts written to a file first...). See BashRules for the syntax.
type Policy struct {
	Rules
	// Agents holds per-agent rules, by profile name. Deny lists add up and
	// read_only set anywhere wins; an agent's allow list, when present,
	// replaces the global one.
	Agents map[string]Rules `toml:"agents"`
	// Narrowing is a policy that can only take away from this one (a
	// project's file, which must not loosen the user's rules): its
	// read_only and deny lists add to these, a command must match its
	// allow list too, and its unlisted can turn "ask" into "refuse", never
	// the reverse.
	Narrowing *Policy `toml:"-"`
}

// Rules are the permissions of one agent.
type Rules struct {
	// ReadOnly removes the tools that change the workspace (write, edit
	// and bash, which can change anything).
	ReadOnly bool      `toml:"read_only"`
	Bash     BashRules `toml:"bash"`
}

// BashRules decide which commands the bash tool runs.
//
// A command is parsed as bash and split into its simple commands: every
// part of a pipeline, a list (; && ||), a subshell, a command substitution
// $(...), a function body, and the script given to bash -c, sh -c or eval
// when it is a plain string. Quotes and backslashes are removed from the
// words as the shell would; expansions ($VAR, globs, braces) are left as
// written.
//
// A pattern is a list of words separated by spaces; in a pattern word, *
// matches any run of characters (spaces and slashes included) and ? any
// one character. A pattern matches a simple command when its words match
// consecutive words of the command, one for one; the command may have more
// words after them (so "git push" matches "git push origin main").
//
//   - Deny patterns match anywhere in a simple command, and the first word
//     of the pattern also matches a command word by its base name: "rm"
//     denies "rm x", "/bin/rm x", "sudo rm x" and "find . | xargs rm", and
//     also "echo rm" (deny errs on the side of refusing).
//   - Allow patterns must match from the first word, exactly: "go test"
//     allows "go test ./..." but not "./go test". When the allow list is
//     not empty, every simple command must be allowed, "cd" and "echo"
//     included.
//   - Deny wins over allow. An empty allow list allows every command that
//     is not denied.
//
// When there are rules and the command cannot be parsed, it is refused.
//
// Unlisted says what becomes of a command the allow list does not allow
// (never of a denied one): "refuse" (the default, also when empty) or
// "ask": a task whose user can be asked (see Asker) waits for the user to
// allow or refuse it; elsewhere it is refused.
type BashRules struct {
	Allow    []string `toml:"allow"`
	Deny     []string `toml:"deny"`
	Unlisted string   `toml:"unlisted"`
	// Narrow are more allow lists, from a narrowing policy: every simple
	// command must also match a pattern of each one that is not empty.
	Narrow [][]string `toml:"-"`
}

// What BashRules.Unlisted may say.
const (
	UnlistedRefuse = "refuse"
	UnlistedAsk    = "ask"
)

// Asks reports whether a command the allow list does not allow is to be
// asked about.
func (b BashRules) Asks() bool { return b.Unlisted == UnlistedAsk }

// Validate reports malformed patterns and agent names.
func (p Policy) Validate() error {
	var errs []error
	if err := p.Rules.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Agents)) {
		if strings.TrimSpace(name) == "" {
			errs = append(errs, errors.New("permissions.agents: empty agent name"))
			continue
		}
		if err := p.Agents[name].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("permissions.agents.%s: %w", name, err))
		}
	}
	if p.Narrowing != nil {
		if err := p.Narrowing.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ForAgent returns the rules that apply to the named agent.
func (p Policy) ForAgent(agent string) Rules {
	r := Rules{ReadOnly: p.ReadOnly, Bash: BashRules{
		Allow:    slices.Clone(p.Bash.Allow),
		Deny:     slices.Clone(p.Bash.Deny),
		Unlisted: p.Bash.Unlisted,
		Narrow:   slices.Clone(p.Bash.Narrow),
	}}
	if own, ok := p.Agents[agent]; ok {
		r.ReadOnly = r.ReadOnly || own.ReadOnly
		r.Bash.Deny = append(r.Bash.Deny, own.Bash.Deny...)
		r.Bash.Narrow = append(r.Bash.Narrow, own.Bash.Narrow...)
		if own.Bash.Allow != nil {
			r.Bash.Allow = slices.Clone(own.Bash.Allow)
		}
		if own.Bash.Unlisted != "" {
			r.Bash.Unlisted = own.Bash.Unlisted
		}
	}
	if p.Narrowing != nil {
		r = r.narrow(p.Narrowing.ForAgent(agent))
	}
	return r
}

// narrow adds what n takes away: a command must pass both r and n.
func (r Rules) narrow(n Rules) Rules {
	r.ReadOnly = r.ReadOnly || n.ReadOnly
	r.Bash.Deny = append(r.Bash.Deny, n.Bash.Deny...)
	r.Bash.Narrow = append(r.Bash.Narrow, n.Bash.Narrow...)
	if len(n.Bash.Allow) > 0 {
		r.Bash.Narrow = append(r.Bash.Narrow, n.Bash.Allow)
	}
	// Asking is looser than refusing: n may only refuse.
	if n.Bash.Unlisted == UnlistedRefuse {
		r.Bash.Unlisted = UnlistedRefuse
	}
	return r
}

// Validate reports malformed patterns.
func (r Rules) Validate() error { return r.Bash.Validate() }

// Validate reports malformed patterns: empty ones, and ones holding shell
// operators, which could never match a single simple command.
func (b BashRules) Validate() error {
	var errs []error
	check := func(list string, patterns []string) {
		for _, p := range patterns {
			if err := validateCommandPattern(p); err != nil {
				errs = append(errs, fmt.Errorf("bash.%s: %w", list, err))
			}
		}
	}
	check("allow", b.Allow)
	check("deny", b.Deny)
	for _, list := range b.Narrow {
		check("allow", list)
	}
	switch b.Unlisted {
	case "", UnlistedRefuse, UnlistedAsk:
	default:
		errs = append(errs, fmt.Errorf("bash.unlisted: %q is not a choice: use %q (the default) or %q", b.Unlisted, UnlistedRefuse, UnlistedAsk))
	}
	return errors.Join(errs...)
}

func validateCommandPattern(p string) error {
	if len(strings.Fields(p)) == 0 {
		return errors.New("empty pattern")
	}
	for _, op := range []string{";", "|", "&", "(", ")", "<", ">", "`", "$(", "\n"} {
		if strings.Contains(p, op) {
			return fmt.Errorf("pattern %q contains %q: a pattern matches one simple command, so write one pattern per command", p, op)
		}
	}
	return nil
}

// Check returns nil when the rules let command run, and otherwise an error
// that says which simple command is refused and why.
func (b BashRules) Check(command string) error {
	if len(b.Allow) == 0 && len(b.Deny) == 0 && len(b.Narrow) == 0 {
		return nil
	}
	cmds, err := simpleCommands(command, 0)
	if err != nil {
		return fmt.Errorf("the command cannot be checked against the permission policy: %w", err)
	}
	for _, words := range cmds {
		for _, p := range b.Deny {
			if matchesAnywhere(strings.Fields(p), words) {
				return fmt.Errorf("%q is denied by the permission policy (pattern %q)", strings.Join(words, " "), p)
			}
		}
	}
	for _, allow := range append([][]string{b.Allow}, b.Narrow...) {
		if len(allow) == 0 {
			continue
		}
		for _, words := range cmds {
			allowed := slices.ContainsFunc(allow, func(p string) bool {
				return matchesAt(strings.Fields(p), words, 0, false)
			})
			if !allowed {
				return &NotAllowedError{Command: strings.Join(words, " "), Allow: allow}
			}
		}
	}
	return nil
}

// NotAllowedError refuses a simple command the allow list does not allow
// (one not denied: a denied command is refused with a plain error).
type NotAllowedError struct {
	// Command is the simple command refused; Allow the allow list.
	Command string
	Allow   []string
}

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("%q is not allowed by the permission policy; allowed commands: %s", e.Command, strings.Join(e.Allow, ", "))
}

// maxScriptNesting bounds how deep bash -c "bash -c '...'" is followed.
const maxScriptNesting = 8

// simpleCommands parses a bash script and returns the words of each of its
// simple commands, in order.
func simpleCommands(script string, nesting int) ([][]string, error) {
	if nesting > maxScriptNesting {
		return nil, errors.New("scripts nested too deeply")
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, err
	}
	var cmds [][]string
	var walkErr error
	syntax.Walk(file, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || walkErr != nil {
			return walkErr == nil
		}
		words := make([]string, len(call.Args))
		for i, w := range call.Args {
			words[i] = wordText(w)
		}
		cmds = append(cmds, words)
		if inner, ok := innerScript(call.Args); ok {
			sub, err := simpleCommands(inner, nesting+1)
			if err != nil {
				walkErr = fmt.Errorf("script given to %s: %w", words[0], err)
				return false
			}
			cmds = append(cmds, sub...)
		}
		return true
	})
	return cmds, walkErr
}

// innerScript returns the script that bash -c, sh -c (and the like) or
// eval will run, when it is a literal string.
func innerScript(args []*syntax.Word) (string, bool) {
	name := path.Base(wordText(args[0]))
	switch name {
	case "eval":
		var parts []string
		for _, w := range args[1:] {
			s, ok := literal(w)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " "), len(parts) > 0
	case "bash", "sh", "dash", "zsh", "ksh":
		for i := 1; i < len(args)-1; i++ {
			if flag, _ := literal(args[i]); strings.HasPrefix(flag, "-") && strings.Contains(flag, "c") {
				return literal(args[i+1])
			}
		}
	}
	return "", false
}

// wordText returns a word as the shell would pass it when it holds no
// expansion; expansions are kept as written.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		writeWordPart(&b, part, false)
	}
	return b.String()
}

// literal returns the word's value when it has no expansion at all.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		if !writeWordPart(&b, part, false) {
			return "", false
		}
	}
	return b.String(), true
}

// writeWordPart writes a part of a word and reports whether it was
// literal text.
func writeWordPart(b *strings.Builder, part syntax.WordPart, quoted bool) bool {
	switch p := part.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
		return true
	case *syntax.SglQuoted:
		b.WriteString(p.Value)
		return !p.Dollar
	case *syntax.DblQuoted:
		lit := true
		for _, inner := range p.Parts {
			lit = writeWordPart(b, inner, true) && lit
		}
		return lit && !p.Dollar
	default:
		var src strings.Builder
		if err := syntax.NewPrinter().Print(&src, part); err != nil {
			b.WriteString("?")
		} else {
			b.WriteString(src.String())
		}
		return false
	}
}

// unescape removes the backslashes the shell would remove: all of them
// outside quotes, and inside double quotes those before $ ` " \ and a
// newline.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// matchesAnywhere reports whether the pattern words match a run of the
// command's words starting anywhere, the first one also by base name.
func matchesAnywhere(pattern, words []string) bool {
	for start := 0; start+len(pattern) <= len(words); start++ {
		if matchesAt(pattern, words, start, true) {
			return true
		}
	}
	return false
}

func matchesAt(pattern, words []string, start int, byBaseName bool) bool {
	if len(pattern) == 0 || start+len(pattern) > len(words) {
		return false
	}
	for i, p := range pattern {
		w := words[start+i]
		if wildcardMatch(p, w) {
			continue
		}
		if i == 0 && byBaseName && !strings.Contains(p, "/") && strings.Contains(w, "/") && wildcardMatch(p, path.Base(w)) {
			continue
		}
		return false
	}
	return true
}

// wildcardMatch matches s against a pattern where * is any run of
// characters and ? any one character.
func wildcardMatch(pattern, s string) bool {
	p, n := []rune(pattern), []rune(s)
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
