package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The marker of a re-execution as Check's probe, inside the sandbox.
const (
	probeArg0 = "superagents-sandbox-probe"
	probeEnv  = "SUPERAGENTS_SANDBOX_PROBE"
	// lingerArg0 is the probe's own child that tries to outlive it.
	lingerArg0 = "superagents-sandbox-linger"
)

// lingerFor is how long the lingering child waits: longer than Check
// waits for it.
const lingerFor = 20 * time.Second

// lifetimeWait is how long Check waits, after the probe ended, for every
// process it started to end.
const lifetimeWait = 3 * time.Second

// probeSpec is what the probe, inside the sandbox, tries.
type probeSpec struct {
	Inside, Outside string // files to create
	Protected       string // a protected file of the workspace to change
	Secret          string // a private file to read
	PrivateDirs     []string
	Socket          string // a Unix socket in a private directory
	TCPPort         int    // a loopback TCP listener
	UDPPort         int    // a loopback UDP socket
	ParentPID       int    // a process outside the sandbox
}

// probeResult is one thing the probe tried.
type probeResult struct {
	Name    string `json:"name"`
	Refused bool   `json:"refused"`
	Detail  string `json:"detail,omitempty"`
}

func init() {
	switch {
	case len(os.Args) == 1 && os.Args[0] == lingerArg0:
		// Keep fd 3 (Check's pipe) open as long as this process lives.
		time.Sleep(lingerFor)
		os.Exit(0)
	case len(os.Args) == 2 && os.Args[1] == probeArg0:
		// argv[0] is the program's path: the sandbox's first process
		// runs it by path (see initScript).
		spec, ok := os.LookupEnv(probeEnv)
		if !ok {
			return
		}
		var s probeSpec
		if err := json.Unmarshal([]byte(spec), &s); err != nil {
			fmt.Fprintf(os.Stderr, "superagents sandbox probe: %v\n", err)
			os.Exit(exitCannotRun)
		}
		_ = json.NewEncoder(os.Stdout).Encode(s.run())
		os.Exit(0)
	}
}

// run tries everything, from inside the sandbox.
func (s probeSpec) run() []probeResult {
	var out []probeResult
	// add records a try: refused when err is set, else what got through.
	add := func(name string, err error, through string) {
		r := probeResult{Name: name, Refused: err != nil, Detail: through}
		if err != nil {
			r.Detail = err.Error()
		}
		out = append(out, r)
	}
	add("write outside", os.WriteFile(s.Outside, []byte("x"), 0o600), "written")
	add("write inside", os.WriteFile(s.Inside, []byte("x"), 0o600), "written")
	add("write protected", os.WriteFile(s.Protected, []byte("{}"), 0o600), "written")
	sockets := []struct {
		name               string
		family, typ, proto int
		connect            bool
	}{
		{"TCP", unix.AF_INET, unix.SOCK_STREAM, 0, true},
		{"TCP over IPv6", unix.AF_INET6, unix.SOCK_STREAM, 0, false},
		{"Multipath TCP", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, true},
		{"UDP", unix.AF_INET, unix.SOCK_DGRAM, 0, true},
		{"SCTP", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, false},
		{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, false},
		{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0, false},
	}
	for _, k := range sockets {
		port := s.TCPPort
		if k.typ == unix.SOCK_DGRAM {
			port = s.UDPPort
		}
		add(k.name, tryInetSocket(k.family, k.typ, k.proto, k.connect, port), "opened")
	}
	_, err := os.ReadFile(s.Secret)
	add("private file", err, "read")
	for _, dir := range s.PrivateDirs {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) > 0 {
			add("private "+dir, nil, fmt.Sprintf("%d entries listed", len(entries)))
			continue
		}
		add("private "+dir, errors.New("nothing there"), "")
	}
	c, err := net.Dial("unix", s.Socket)
	if err == nil {
		c.Close()
	}
	add("private socket", err, "connected")
	add("other process", readOther(s.ParentPID), "read its environment")
	held := capabilities()
	if held == "" {
		add("capabilities", errors.New("none held, no_new_privs set"), "")
	} else {
		add("capabilities", nil, held)
	}
	add("process lifetime", linger(), "")
	return out
}

// readOther reads another process's environment; nil when it could.
func readOther(pid int) error {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return err
	}
	// In a PID namespace of its own, the pid may be one of the
	// sandbox's own processes (superagents as a container's first
	// process): not another one's.
	if own, _ := os.ReadFile("/proc/self/environ"); bytes.Equal(env, own) {
		return errors.New("not visible: the pid is the sandbox's own process")
	}
	return nil
}

// tryInetSocket opens a socket and, when asked, connects it to (or, for
// UDP, sends a datagram to) a port of loopback.
func tryInetSocket(family, typ, proto int, connect bool, port int) error {
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if !connect || port == 0 {
		return nil
	}
	addr := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	if typ == unix.SOCK_DGRAM {
		if err := unix.Sendto(fd, []byte("probe"), 0, addr); err != nil {
			return fmt.Errorf("sendto: %w", err)
		}
		return nil
	}
	if err := unix.Connect(fd, addr); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

// capabilities returns the capabilities this process holds, and
// NoNewPrivs unless it is set; "" when it holds none and it is set.
func capabilities() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "cannot read /proc/self/status: " + err.Error()
	}
	var held []string
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		value = strings.TrimSpace(value)
		switch key {
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			// A bounding set only matters to root: another user gets
			// nothing from it with no_new_privs set.
			if v, _ := strconv.ParseUint(value, 16, 64); v != 0 && (key != "CapBnd" || os.Geteuid() == 0) {
				held = append(held, key+"="+value)
			}
		case "NoNewPrivs":
			if value != "1" {
				held = append(held, "NoNewPrivs="+value)
			}
		}
	}
	return strings.Join(held, " ")
}

// linger starts a child in a session of its own, holding fd 3, and
// leaves it: Check tells whether it outlived this process.
func linger() error {
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	cmd := &exec.Cmd{Path: self, Args: []string{lingerArg0}, ExtraFiles: []*os.File{os.NewFile(3, "check")},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return cmd.Process.Release()
}

// Check probes, live, what this system confines of the policy: it runs a
// probe in the sandbox (this very program again) that tries to write,
// open sockets of every family, read a private file and the private
// directories, reach a private socket, read another process's
// environment, keep capabilities, and leave a process behind.
func Check(p Policy) (Report, error) {
	scratch, err := os.MkdirTemp("", "superagents-check-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(scratch)
	dir := func(name string) string { return filepath.Join(scratch, name) }
	for _, d := range []string{"workspace", "outside", "tmp", "private"} {
		if err := os.Mkdir(dir(d), 0o700); err != nil {
			return Report{}, err
		}
	}
	secret := filepath.Join(dir("private"), "token")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		return Report{}, err
	}
	private := p.Private
	if private == nil {
		private = PrivatePaths(os.Getenv)
	}
	probePolicy := p
	probePolicy.Workspace, probePolicy.TempDirs = dir("workspace"), []string{dir("tmp")}
	// A configured writable directory does not reopen a private one.
	probePolicy.Writable = append(append([]string(nil), p.Writable...), dir("private"))
	probePolicy.Private = append(append([]string(nil), private...), dir("private"))
	env := []string{"PATH=" + os.Getenv("PATH")}
	s, err := New(probePolicy, env)
	if err != nil {
		return Report{}, err
	}
	report := Report{Mode: s.Mode(), Network: s.Network(), Support: s.Support()}

	protected := filepath.Join(dir("workspace"), ".mcp.json")
	if err := os.WriteFile(protected, nil, 0o600); err != nil {
		return Report{}, err
	}
	spec := probeSpec{
		Inside: filepath.Join(dir("workspace"), "f"), Outside: filepath.Join(dir("outside"), "f"), Protected: protected,
		Secret: secret, PrivateDirs: existing(private), ParentPID: os.Getpid(),
	}
	closeListeners, err := spec.listen(filepath.Join(dir("private"), "s.sock"))
	if err != nil {
		return Report{}, err
	}
	defer closeListeners()
	results, lifetime, err := s.runProbe(spec, env)
	if err != nil {
		return Report{}, err
	}
	report.Findings = findings(s, results, lifetime)
	return report, nil
}

// listen starts what the probe tries to reach: a Unix socket (in a
// private directory), and loopback TCP and UDP ports.
func (spec *probeSpec) listen(socket string) (closeAll func(), err error) {
	var closers []func() error
	closeAll = func() {
		for _, c := range closers {
			_ = c()
		}
	}
	sock, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	closers = append(closers, sock.Close)
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		closeAll()
		return nil, err
	}
	closers = append(closers, tcp.Close)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		closeAll()
		return nil, err
	}
	closers = append(closers, udp.Close)
	spec.Socket, spec.TCPPort, spec.UDPPort = socket, tcp.Addr().(*net.TCPAddr).Port, udp.LocalAddr().(*net.UDPAddr).Port
	return closeAll, nil
}

// runProbe runs the probe in the sandbox and returns what it found, and
// whether a process it left was gone once it ended.
func (s *Sandbox) runProbe(spec probeSpec, env []string) ([]probeResult, error, error) {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd, err := s.commandPath(self, []string{probeArg0, probeArg0}, append(env, probeEnv+"="+string(specJSON)))
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	w.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("run the probe in the sandbox: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var results []probeResult
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, nil, fmt.Errorf("read the probe's results: %w", err)
	}
	return results, outlived(r), nil
}

// outlived reports, as the probe's result, whether a process it started
// still held the pipe lifetimeWait after it ended.
func outlived(r *os.File) error {
	_ = r.SetReadDeadline(time.Now().Add(lifetimeWait))
	var b [1]byte
	if _, err := r.Read(b[:]); errors.Is(err, os.ErrDeadlineExceeded) {
		return nil // still held: not refused
	}
	return errors.New("ended with the command")
}

// existing are the paths that exist.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// findings turns the probe's results into the report's lines.
func findings(s *Sandbox, results []probeResult, lifetime error) []Finding {
	confinedMode := s.Mode() != Off
	var out []Finding
	for _, res := range results {
		f := Finding{Name: res.Name, Confined: res.Refused, Required: confinedMode, Detail: res.Detail}
		switch {
		case res.Name == "write inside":
			f.Name, f.Confined = "writes in the workspace ("+map[bool]string{true: "refused", false: "allowed"}[res.Refused]+")", res.Refused == (s.Mode() == ReadOnly)
		case res.Name == "write outside":
			f.Name = "writes outside the workspace"
		case res.Name == "write protected":
			f.Name = "writes to " + strings.Join(protectedNames, ", ") + " in the workspace"
		case res.Name == "process lifetime":
			f.Name, f.Confined, f.Detail = "processes a command leaves behind", lifetime != nil, "a process in a session of its own "+map[bool]string{true: "ended with the command", false: "was still running after the command ended"}[lifetime != nil]
		case res.Name == "private file":
			f.Name = "reads of a private file (with writable naming its directory)"
		case res.Name == "private socket":
			f.Name = "connections to a private Unix socket"
		case strings.HasPrefix(res.Name, "private "):
			f.Name = "reads of " + strings.TrimPrefix(res.Name, "private ")
		case res.Name == "other process":
			f.Name = "reads of superagents' process environment and memory"
		case res.Name == "capabilities":
			f.Name = "capabilities and no_new_privs"
		default: // a socket family
			f.Name += " sockets"
			f.Required = confinedMode && !s.Network()
		}
		out = append(out, f)
	}
	return out
}
