// Package sandboxtest lets tests of confined commands run where the
// system can confine them, and fail rather than skip where they must run
// (SUPERAGENTS_REQUIRE_SANDBOX=1, as scripts/test sets).
package sandboxtest

import (
	"fmt"
	"net"
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

// Isolates reports whether this system runs sandboxed commands in
// namespaces of their own (see sandbox.Support.Isolation).
func Isolates(t testing.TB) bool {
	t.Helper()
	s, err := sandbox.New(sandbox.Policy{Workspace: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.Enforced() && s.Support().Isolation
}

// RequireIsolation skips the test when this system cannot run sandboxed
// commands in namespaces of their own, or fails it under RequireEnv=1.
func RequireIsolation(t testing.TB) {
	t.Helper()
	Require(t, false)
	if Isolates(t) {
		return
	}
	s, _ := sandbox.New(sandbox.Policy{Workspace: t.TempDir()}, nil)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s=1 but this system cannot isolate sandboxed commands: %s", RequireEnv, s.Support().Reason)
	}
	t.Skipf("this system cannot isolate sandboxed commands: %s", s.Support().Reason)
}

// Listen starts a TCP listener on loopback that answers every connection
// with line, closed when the test ends, and returns its port: what a
// sandboxed command's connection is refused or let through to.
func Listen(t testing.TB, line string) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, line)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}
