package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// sandboxExec is macOS's command that runs a program under a Seatbelt
// profile.
const sandboxExec = "/usr/bin/sandbox-exec"

// probe looks for sandbox-exec, which every macOS has.
func probe() Support {
	if _, err := os.Stat(sandboxExec); err != nil {
		return Support{Reason: fmt.Sprintf("%s is missing: %v", sandboxExec, err)}
	}
	return Support{Mechanism: "Seatbelt", Files: true, Network: true}
}

// systemTempDirs: /tmp is /private/tmp; TMPDIR, below /var/folders, is
// added from the environment.
func systemTempDirs() []string { return []string{"/tmp", "/private/tmp"} }

// selfExecutable is not needed: sandbox-exec is the first process.
func selfExecutable() (string, error) { return "", nil }

// command runs argv under sandbox-exec with the generated profile.
func (s *Sandbox) command(argv, env []string) (*exec.Cmd, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	args := seatbeltArgs(s.writable, s.policy.Network, append([]string{path}, argv[1:]...))
	args = seatbeltPrivate(args, s.private, realPath(s.policy.Workspace), s.policy.Mode == WorkspaceWrite)
	if s.policy.Mode == WorkspaceWrite {
		args = seatbeltProtected(args, realPath(s.policy.Workspace))
	}
	cmd := exec.Command(sandboxExec, args...)
	cmd.Env = env
	return cmd, nil
}
