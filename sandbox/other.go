//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
)

func probe() Support {
	return Support{Reason: "superagents has no sandbox for " + runtime.GOOS}
}

func systemTempDirs() []string { return nil }

func selfExecutable() (string, error) { return "", nil }

func (s *Sandbox) command([]string, []string) (*exec.Cmd, error) {
	return nil, errors.New("sandbox: not available on " + runtime.GOOS)
}
