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
