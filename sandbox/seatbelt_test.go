package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// checkSeatbeltArgs checks what sandbox-exec is given for these
// directories: a well-formed profile that depends on their number only,
// one parameter per directory carrying it unchanged, then the command.
func checkSeatbeltArgs(t *testing.T, writable []string, network bool) {
	t.Helper()
	argv := []string{"/bin/bash", "-c", "echo hi"}
	args := seatbeltArgs(writable, network, argv)
	if len(args) < 2 || args[0] != "-p" {
		t.Fatalf("args start %q, want -p PROFILE", args)
	}
	profile := args[1]
	placeholders := make([]string, len(writable))
	for i := range placeholders {
		placeholders[i] = "/x"
	}
	if want := seatbeltArgs(placeholders, network, argv)[1]; profile != want {
		t.Fatalf("the profile depends on the paths:\n%s\nwant\n%s", profile, want)
	}
	if err := balanced(profile); err != "" {
		t.Fatalf("profile: %s\n%s", err, profile)
	}
	rest := args[2:]
	for i, dir := range writable {
		if len(rest) < 2 || rest[0] != "-D" || rest[1] != seatbeltParam(i)+"="+dir {
			t.Fatalf("parameter %d: got %q, want -D %s=%s", i, rest[:min(2, len(rest))], seatbeltParam(i), dir)
		}
		if !strings.Contains(profile, `(subpath (param "`+seatbeltParam(i)+`"))`) {
			t.Fatalf("the profile does not use %s:\n%s", seatbeltParam(i), profile)
		}
		rest = rest[2:]
	}
	if !slices.Equal(rest, append([]string{"--"}, argv...)) {
		t.Fatalf("command part %q", rest)
	}
	if got := strings.Contains(profile, "(deny network*)"); got == network {
		t.Fatalf("network=%v but deny network* present=%v:\n%s", network, got, profile)
	}
	checkSeatbeltEscapes(t, profile)
}

// checkSeatbeltEscapes checks that the profile closes the ways out through
// processes outside the sandbox, after (allow default): in a profile the
// last rule that matches wins.
func checkSeatbeltEscapes(t *testing.T, profile string) {
	t.Helper()
	allowAll := strings.Index(profile, "(allow default)")
	if allowAll < 0 {
		t.Fatalf("no (allow default):\n%s", profile)
	}
	for _, rule := range []string{
		"(deny appleevent-send)",
		"(deny lsopen)",
		"(deny job-creation)",
		`(deny process-exec (literal "/bin/launchctl"))`,
		"(deny mach-lookup\n",
		`(global-name "com.apple.coreservices.appleevents")`,
		`(global-name "com.apple.coreservices.launchservicesd")`,
		`(global-name "com.apple.coreservices.quarantine-resolver")`,
		`(global-name "com.apple.lsd.mapdb")`,
		`(global-name "com.apple.lsd.modifydb")`,
		`(global-name "com.apple.lsd.open")`,
		`(global-name "com.apple.lsd.openurl")`,
	} {
		at := strings.Index(profile, rule)
		if at < 0 {
			t.Errorf("the profile lacks %s:\n%s", rule, profile)
		} else if at < allowAll {
			t.Errorf("%s comes before (allow default), which overrides it:\n%s", rule, profile)
		}
	}
	// Only the named services are refused: ordinary programs look up
	// others (the user database, preferences, DNS), and run programs.
	for _, rule := range []string{"(deny mach-lookup)", "(deny process-exec)", "(deny default)"} {
		if strings.Contains(profile, rule) {
			t.Errorf("the profile has %s, which would break ordinary commands:\n%s", rule, profile)
		}
	}
	if !strings.Contains(profile, seatbeltEscapes) || balanced(seatbeltEscapes) != "" {
		t.Errorf("the escape rules are not whole forms in the profile:\n%s", profile)
	}
}

// balanced reports unbalanced parentheses or an open string in an SBPL
// profile ("" when well formed).
func balanced(profile string) string {
	depth, inString := 0, false
	for i := 0; i < len(profile); i++ {
		c := profile[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return "a ')' closes nothing"
			}
		}
	}
	if inString {
		return "a string is never closed"
	}
	if depth != 0 {
		return "a '(' is never closed"
	}
	return ""
}

func TestSeatbeltArgs(t *testing.T) {
	tests := []struct {
		name     string
		writable []string
		network  bool
	}{
		{"read-only, no network", nil, false},
		{"read-only, network", nil, true},
		{"plain paths", []string{"/Users/me/project", "/private/tmp"}, false},
		{"spaces", []string{"/Users/me/My Project"}, false},
		{"quotes and backslashes", []string{`/Users/me/a"b\c`, `/tmp/")(allow default)(`}, false},
		{"parentheses and semicolons", []string{"/tmp/x) (allow network*) ; (", "/tmp/#|comment"}, true},
		{"newlines and control characters", []string{"/tmp/a\nb", "/tmp/\t\x01"}, false},
		{"equals signs", []string{"/tmp/a=b=c"}, false},
		{"non-ASCII", []string{"/Users/zoë/プロジェクト"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkSeatbeltArgs(t, tc.writable, tc.network) })
	}
}

func FuzzSeatbeltArgs(f *testing.F) {
	f.Add("/Users/me/project", `/tmp/")(allow default)(`, false)
	f.Add("/tmp/a\nb", "", true)
	f.Fuzz(func(t *testing.T, a, b string, network bool) {
		checkSeatbeltArgs(t, []string{a, b}, network)
	})
}

// TestSeatbeltPrivate: superagents' own paths are denied after every
// allow, as parameters, and the command still comes last.
func TestSeatbeltPrivate(t *testing.T) {
	argv := []string{"/bin/bash", "-c", "echo hi"}
	args := seatbeltPrivate(seatbeltArgs([]string{"/ws"}, false, argv), []string{"/data", "/run/s (1)"}, "/ws", true)
	profile := args[1]
	if err := balanced(profile); err != "" {
		t.Fatalf("profile: %s\n%s", err, profile)
	}
	deny := strings.LastIndex(profile, `(deny file-read* file-write*`)
	if deny < 0 || !strings.Contains(profile[deny:], `(subpath (param "PRIVATE_1"))`) || !strings.HasSuffix(profile, "(allow file-write* (subpath (param \"WORKSPACE\")))\n") {
		t.Fatalf("the private paths are not denied last:\n%s", profile)
	}
	want := []string{"-D", "WRITABLE_0=/ws", "-D", "PRIVATE_0=/data", "-D", "PRIVATE_1=/run/s (1)", "-D", "WORKSPACE=/ws", "--", "/bin/bash", "-c", "echo hi"}
	if !slices.Equal(args[2:], want) {
		t.Fatalf("args = %q, want %q", args[2:], want)
	}
}

// TestSeatbeltProtected: the workspace's protected paths are denied
// writes after every allow (the workspace's own included), as
// parameters, and the command still comes last.
func TestSeatbeltProtected(t *testing.T) {
	argv := []string{"/bin/bash", "-c", "echo hi"}
	args := seatbeltProtected(seatbeltPrivate(seatbeltArgs([]string{"/ws"}, false, argv), []string{"/data"}, "/ws", true), "/ws")
	profile := args[1]
	if err := balanced(profile); err != "" {
		t.Fatalf("profile: %s\n%s", err, profile)
	}
	allow := strings.LastIndex(profile, `(allow file-write* (subpath (param "WORKSPACE")))`)
	deny := strings.LastIndex(profile, "(deny file-write*\n")
	if allow < 0 || deny < allow || !strings.Contains(profile[deny:], `(subpath (param "PROTECTED_4"))`) ||
		!strings.Contains(profile[deny:], `(deny file-write-unlink (literal (param "PROTECTED_WORKSPACE")) (literal (param "PROTECTED_GIT")))`) {
		t.Fatalf("the protected paths are not denied after the workspace's allow:\n%s", profile)
	}
	want := []string{"-D", "WRITABLE_0=/ws", "-D", "PRIVATE_0=/data", "-D", "WORKSPACE=/ws",
		"-D", "PROTECTED_0=/ws/.superagents", "-D", "PROTECTED_1=/ws/.mcp.json", "-D", "PROTECTED_2=/ws/.git/config", "-D", "PROTECTED_3=/ws/.git/hooks", "-D", "PROTECTED_4=/ws/.git/commondir",
		"-D", "PROTECTED_WORKSPACE=/ws", "-D", "PROTECTED_GIT=/ws/.git", "--", "/bin/bash", "-c", "echo hi"}
	if !slices.Equal(args[2:], want) {
		t.Fatalf("args = %q\nwant %q", args[2:], want)
	}
}
