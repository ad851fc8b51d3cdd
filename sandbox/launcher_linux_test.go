package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLauncherNeverRunsUnconfined: when the launcher cannot apply its
// rules it fails, with a message, rather than run the command.
func TestLauncherNeverRunsUnconfined(t *testing.T) {
	// Package sandboxtest would import this package: its check, inline.
	if sup := probe(); !sup.Files {
		if os.Getenv("SUPERAGENTS_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("SUPERAGENTS_REQUIRE_SANDBOX=1 but: %s", sup.Reason)
		}
		t.Skip(sup.Reason)
	}
	self, err := selfExecutable()
	if err != nil {
		t.Fatal(err)
	}
	marker := t.TempDir() + "/ran"
	tests := []struct {
		name, rules string
		code        int
		want        string
	}{
		{"rules that do not parse", "{not json", exitCannotRun, "superagents sandbox: read the rules: "},
		{"a writable path that is a file", `{"writable":["/dev/null"]}`, exitCannotRun, "superagents sandbox: confine the command: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := &exec.Cmd{
				Path: self,
				Args: []string{launcherArg0, "/bin/sh", "sh", "-c", "touch " + marker},
				Env:  []string{rulesEnv + "=" + tc.rules},
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != tc.code || !strings.HasPrefix(out.String(), tc.want) {
				t.Fatalf("err %v, output %q; want exit %d and %q", err, out.String(), tc.code, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}
