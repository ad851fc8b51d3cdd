// Package sandboxtest lets tests of confined commands run where the
// system can confine them, and fail rather than skip where they must run
// (SUPERAGENTS_REQUIRE_SANDBOX=1, as scripts/test sets).
package sandboxtest

import (
	"os"
	"testing"

	"github.com/superagents/superagents/sandbox"
)

// RequireEnv is the variable that makes a missing sandbox a failure.
const RequireEnv = "SUPERAGENTS_REQUIRE_SANDBOX"

// Require skips the test when this system cannot confine file writes
// (and, with network, connections), or fails it under RequireEnv=1.
func Require(t testing.TB, network bool) {
	t.Helper()
	s, err := sandbox.New(sandbox.Policy{Workspace: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sup := s.Support()
	if sup.Files && (!network || sup.Network) {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s=1 but this system cannot sandbox commands: %s", RequireEnv, sup.Reason)
	}
	t.Skipf("this system cannot sandbox commands: %s", sup.Reason)
}
