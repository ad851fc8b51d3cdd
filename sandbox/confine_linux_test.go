package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/proctest"
	"github.com/superagents/superagents/internal/sandboxtest"
	"github.com/superagents/superagents/sandbox"
)

// These tests are what an attacker in a workspace would try, each as a
// command run in the sandbox. They run as root and as an unprivileged
// user in CI (scripts/test).

// TestCheckFindsEverythingConfined: the live probes of `superagents
// sandbox check` — sockets of every family, superagents' files and
// sockets, capabilities, other processes, processes left behind — find
// everything the default policy asks for confined.
func TestCheckFindsEverythingConfined(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	for _, tc := range []struct {
		name    string
		network bool
		open    []string // findings not confined, as the policy allows
	}{
		{"no network", false, nil},
		{"network = true", true, []string{"TCP sockets", "TCP over IPv6 sockets", "Multipath TCP sockets", "UDP sockets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report, err := sandbox.Check(sandbox.Policy{Network: tc.network, Private: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			if !report.OK() {
				t.Fatalf("not everything is confined:\n%s", report)
			}
			for _, f := range report.Findings {
				wantOpen := false
				for _, name := range tc.open {
					wantOpen = wantOpen || f.Name == name
				}
				if f.Confined == wantOpen {
					t.Errorf("%s: confined = %v, want %v (%s)", f.Name, f.Confined, !wantOpen, f.Detail)
				}
			}
		})
	}
}

// TestNoNetworkMeansNone: without the network, a command opens no
// Internet socket by any protocol; Unix sockets still work.
func TestNoNetworkMeansNone(t *testing.T) {
	sandboxtest.Require(t, true)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	port := udp.LocalAddr().(*net.UDPAddr).Port
	for _, tc := range []struct {
		name, script string
		network      bool
		want         string
		ok           bool
	}{
		// bash opens the sockets itself, as a script or DNS lookup would.
		{"UDP refused", fmt.Sprintf(`exec bash -c 'echo x > /dev/udp/127.0.0.1/%d'`, port), false, "Permission denied", false},
		{"UDP with network = true", fmt.Sprintf(`exec bash -c 'echo x > /dev/udp/127.0.0.1/%d && echo sent'`, port), true, "sent", true},
		{"Unix sockets still work", `exec bash -c 'sleep 0.1 | cat && echo piped'`, false, "piped", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			out, ok := run(t, sandbox.Policy{Workspace: d.workspace, Network: tc.network}, d.workspace, tc.script)
			if ok != tc.ok || !strings.Contains(out, tc.want) {
				t.Fatalf("ok=%v output %q; want ok=%v and %q", ok, out, tc.ok, tc.want)
			}
		})
	}
}

// TestNoPrivilegesInside: a command holds no capability, even when
// superagents runs as root, and cannot read superagents' environment.
func TestNoPrivilegesInside(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	d := newDirs(t)
	script := fmt.Sprintf(`grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status; cat /proc/%d/environ /proc/$PPID/environ 2>/dev/null | tr '\0' '\n' | grep -c SECRET_OF_THE_PARENT; true`, os.Getpid())
	t.Setenv("SECRET_OF_THE_PARENT", "sk-very-secret")
	out, ok := run(t, sandbox.Policy{Workspace: d.workspace}, d.workspace, script)
	if !ok {
		t.Fatalf("the probe failed:\n%s", out)
	}
	for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
		"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "\n0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPrivatePathsAreOutOfReach: superagents' data directory (its
// database, token, sockets) is empty to a command, wherever it is (under
// the writable /tmp too) and even when the configuration makes it
// writable; a workspace below it (a task's worktree) stays usable.
func TestPrivatePathsAreOutOfReach(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	for _, tc := range []struct {
		name           string
		writable       bool // [sandbox] writable names the data directory
		workspaceBelow bool // the workspace is a worktree in the data directory
	}{
		{"data directory", false, false},
		{"data directory made writable", true, false},
		{"workspace below the data directory", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			data := filepath.Join(d.temp, "data") // below a writable directory
			ws := d.workspace
			if tc.workspaceBelow {
				ws = filepath.Join(data, "worktrees", "t1")
			}
			for _, dir := range []string{data, ws} {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(data, "server.token"), []byte("the-token"), 0o600); err != nil {
				t.Fatal(err)
			}
			sock, err := net.Listen("unix", filepath.Join(data, "s.sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer sock.Close()
			p := sandbox.Policy{Workspace: ws, TempDirs: []string{d.temp}, Private: []string{data}}
			if tc.writable {
				p.Writable = []string{data}
			}
			script := fmt.Sprintf(`cat %[1]s/server.token; ls -A %[1]s | grep -v worktrees | sed 's/^/LISTED /'; echo > %[1]s/planted; echo x > %[2]s/inside && cat %[2]s/inside`, data, ws)
			if tc.workspaceBelow { // the same, relative to where the command starts
				script += `; cat ../../server.token; ls -A ../.. | grep -v worktrees | sed 's/^/LISTED /'`
			}
			if _, err := exec.LookPath("nc"); err == nil {
				script += fmt.Sprintf("; nc -U %s/s.sock </dev/null && echo connected", data)
			}
			out, _ := run(t, p, ws, script)
			for _, leak := range []string{"the-token", "LISTED", "connected"} {
				if strings.Contains(out, leak) {
					t.Errorf("the command reached %q:\n%s", leak, out)
				}
			}
			if !strings.Contains(out, "x\n") {
				t.Errorf("the workspace is not usable:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(data, "planted")); err == nil {
				t.Errorf("the command wrote in the data directory")
			}
		})
	}
}

// TestNothingOutlivesTheCall: a process a command starts in a session of
// its own (setsid, as a daemon does) ends with the command.
func TestNothingOutlivesTheCall(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	d := newDirs(t)
	arg := proctest.SleepArg(t)
	out, ok := run(t, sandbox.Policy{Workspace: d.workspace}, d.workspace, "setsid -f sleep "+arg+" >/dev/null 2>&1 </dev/null; echo detached")
	if !ok || !strings.Contains(out, "detached") {
		t.Fatalf("ok=%v output %q", ok, out)
	}
	proctest.WaitNoneFound(t, arg)
}

// dieWithParentEnv makes the test binary the parent of a sandboxed sleep
// (see TestMain), which the test then kills outright.
const dieWithParentEnv = "SUPERAGENTS_TEST_SANDBOX_PARENT"

func TestMain(m *testing.M) {
	if arg := os.Getenv(dieWithParentEnv); arg != "" {
		os.Exit(sandboxedSleepParent(arg))
	}
	os.Exit(m.Run())
}

// sandboxedSleepParent runs a sandboxed command that leaves a sleep
// behind, says so, and waits to be killed.
func sandboxedSleepParent(arg string) int {
	ws, err := os.MkdirTemp("", "superagents-parent-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	s, err := sandbox.New(sandbox.Policy{Workspace: ws}, os.Environ())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd, err := s.Command([]string{"sh", "-c", "setsid -f sleep " + arg + "; sleep " + arg}, os.Environ())
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("started")
	_ = cmd.Wait()
	return 0
}

// TestCommandsDieWithSuperagents: when superagents is killed outright
// (kill -9), the commands it runs die with it, the processes they left in
// sessions of their own too.
func TestCommandsDieWithSuperagents(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	arg := proctest.SleepArg(t)
	parent := exec.Command(os.Args[0], "-test.run", "^$")
	parent.Env = append(os.Environ(), dieWithParentEnv+"="+arg)
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		for _, pid := range proctest.Find(arg) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("the parent said %q", line)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(proctest.Find(arg)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	proctest.WaitNoneFound(t, arg)
}

// protectedProject makes a repository with one commit, a project
// configuration, an agent profile and MCP servers in ws, and returns
// what the protected paths hold.
func protectedProject(t *testing.T, ws string) map[string]string {
	t.Helper()
	files := map[string]string{
		".superagents/config.toml":      "model = \"offline/echo\"\n",
		".superagents/agents/review.md": "---\nname: review\n---\nReview.\n",
		".mcp.json":                     `{"mcpServers":{}}`,
		"README":                        "hello\n",
	}
	for name, text := range files {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=u", "-c", "user.email=u@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "start")
	return protectedState(t, ws)
}

// protectedState is what the protected paths of ws hold: each file below
// them by its path, with its content (a link: its target).
func protectedState(t *testing.T, ws string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, name := range []string{".superagents", ".mcp.json", ".git", ".git/config", ".git/hooks", ".git/commondir"} {
		root := filepath.Join(ws, name)
		_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			switch {
			case err != nil:
				return nil
			case name == ".git" && path != root:
				return filepath.SkipDir // only what .git itself is
			case info.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(path)
				state[path] = "-> " + target
			case info.IsDir():
				state[path] = fmt.Sprintf("dir, inode %d", info.Sys().(*syscall.Stat_t).Ino)
			default:
				b, _ := os.ReadFile(path)
				state[path] = string(b)
			}
			return nil
		})
	}
	return state
}

// TestProtectedPathsStayAsTheyAre: what names programs run outside the
// sandbox (the project's superagents configuration and agent profiles,
// its MCP servers, git's configuration and hooks) cannot be changed by a
// command in any of the ways an attacker would try, while ordinary work
// in the repository (a commit) still can.
func TestProtectedPathsStayAsTheyAre(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	for _, tc := range []struct{ name, script string }{
		{"append to the project configuration", `echo '[providers.anthropic]' >> .superagents/config.toml`},
		{"replace the configuration by a rename", `echo 'base_url = "x"' > "$T/c" && mv -f "$T/c" .superagents/config.toml`},
		{"move the configuration directory away and make another", `mv .superagents .old; mkdir -p .superagents && echo evil > .superagents/config.toml`},
		{"remove the configuration directory", `rm -rf .superagents`},
		{"add an agent profile", `echo evil > .superagents/agents/evil.md`},
		{"rewrite the MCP servers", `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json`},
		{"remove and recreate the MCP servers", `rm -f .mcp.json; echo '{}' > .mcp.json`},
		{"plant a git hook", `echo 'touch /tmp/pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`},
		{"set git's file system monitor", `git config core.fsmonitor 'touch /tmp/pwned'`},
		{"rename git's configuration away", `mv .git/config .git/config.old; printf '[core]\n\tfsmonitor = x\n' > .git/config`},
		{"swap the repository", `mv .git .git-old; git init -q . && git config core.fsmonitor x`},
		{"point the repository at another's configuration", `mkdir -p "$T/evil" && printf '[core]\n\tfsmonitor = x\n' > "$T/evil/config" && echo "$T/evil" > .git/commondir`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			before := protectedProject(t, d.workspace)
			p := sandbox.Policy{Workspace: d.workspace, TempDirs: []string{d.temp}}
			s, err := sandbox.New(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			guard := s.Guard()
			out, _ := run(t, p, d.workspace, "T="+d.temp+"; "+tc.script)
			note := guard.Restore()
			after := protectedState(t, d.workspace)
			for path, was := range before {
				if after[path] != was {
					t.Errorf("%s: %q, was %q", path, after[path], was)
				}
			}
			for path := range after {
				if _, ok := before[path]; !ok {
					t.Errorf("%s was created: %q", path, after[path])
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s\nnote: %s", out, note)
			}
		})
	}

	t.Run("a commit still works", func(t *testing.T) {
		d := newDirs(t)
		before := protectedProject(t, d.workspace)
		p := sandbox.Policy{Workspace: d.workspace, TempDirs: []string{d.temp}}
		out, ok := run(t, p, d.workspace, `echo more >> README && git add README && git -c user.name=a -c user.email=a@example.com commit -qm more && git log --oneline | wc -l`)
		if !ok || !strings.Contains(out, "2") {
			t.Errorf("a commit in the sandbox: ok=%v\n%s", ok, out)
		}
		if after := protectedState(t, d.workspace); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the commit changed the protected paths:\n%v\nwas\n%v", after, before)
		}
	})
}

// TestProtectedPathsCreatedAreMovedAside: a command that creates a
// protected path the workspace did not have (which no mount can keep
// from being made) has it moved aside when it ends, with a note saying
// so; a repository it makes itself with git init is its own.
func TestProtectedPathsCreatedAreMovedAside(t *testing.T) {
	sandboxtest.Require(t, false)
	d := newDirs(t)
	p := sandbox.Policy{Workspace: d.workspace, TempDirs: []string{d.temp}}
	s, err := sandbox.New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	guard := s.Guard()
	out, ok := run(t, p, d.workspace, `mkdir .superagents && echo 'model = "x"' > .superagents/config.toml && echo '{}' > .mcp.json && git init -q . && echo ok`)
	if !ok {
		t.Fatalf("the command failed:\n%s", out)
	}
	note := guard.Restore()
	for _, name := range []string{".superagents", ".mcp.json"} {
		if _, err := os.Lstat(filepath.Join(d.workspace, name)); err == nil {
			t.Errorf("%s is still there", name)
		}
		if _, err := os.Lstat(filepath.Join(d.workspace, name+".refused-by-sandbox")); err != nil {
			t.Errorf("%s was not moved aside: %v", name, err)
		}
		if !strings.Contains(note, filepath.Join(d.workspace, name)) {
			t.Errorf("the note does not name %s: %s", name, note)
		}
	}
	if _, err := os.Stat(filepath.Join(d.workspace, ".git", "config")); err != nil {
		t.Errorf("the repository the command made lost its configuration: %v", err)
	}
	if again := guard.Restore(); again != "" {
		t.Errorf("a second Restore: %s", again)
	}
	// Made again: moved aside beside the first, which stays.
	guard = s.Guard()
	if out, ok := run(t, p, d.workspace, `mkdir .superagents && echo 'model = "y"' > .superagents/config.toml`); !ok {
		t.Fatalf("the command failed:\n%s", out)
	}
	if note := guard.Restore(); !strings.Contains(note, "moved aside") {
		t.Errorf("the second time: %s", note)
	}
	for name, want := range map[string]string{".superagents.refused-by-sandbox": "x", ".superagents.refused-by-sandbox.2": "y"} {
		if b, err := os.ReadFile(filepath.Join(d.workspace, name, "config.toml")); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}
