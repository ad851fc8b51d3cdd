// Package hosts holds the tests that drive the real agent hosts — Claude
// Code, Codex and OpenCode, installed from npm at the versions
// scripts/test pins — headless, with superagents as their MCP server and
// a scripted model on loopback in each host's own wire format. They check
// what reaches each host's model: a forked sub-agent carries the host's
// conversation; the fork note and the notices of ended tasks reach the
// model; a task outlives the one-shot host process that launched it and
// belongs to that host conversation; a server without a key says so; a
// message the model sends a running task reaches the task's next model
// request; a task's question reaches the host's model (a notice) or its
// user (Claude Code's interactive session, through the Tasks extension),
// and the answer reaches the task.
//
// The package has only tests (internal/hosttest is the harness).
package hosts
