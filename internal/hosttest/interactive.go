package hosttest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/httpapi"
	"github.com/superagents/superagents/internal/termtest"
)

// Claude Code declares some MCP extensions (the Tasks extension,
// io.modelcontextprotocol/tasks) only in its interactive terminal session,
// never with -p. Interactive runs that session in a tmux terminal.

// Interactive starts Claude Code's interactive session in a terminal (a
// tmux window, see termtest), with the same model, MCP configuration and
// allowed tools as Run; session, when not empty, is resumed (--resume).
// Its first-run screens are skipped through its state file
// (~/.claude.json, seen with 2.1.328; written when the home has none):
// onboarding done (which also chose the theme) and the workspace's folder
// trusted. Its debug log goes into the home (DebugLog). The test's
// cleanup ends the terminal.
func (h *Host) Interactive(t testing.TB, session string) *termtest.Terminal {
	t.Helper()
	if h.Name != ClaudeCode {
		t.Fatalf("hosttest: Interactive drives Claude Code, not %s", h.Name)
	}
	if state := filepath.Join(h.Home, ".claude.json"); !exists(state) {
		writeJSON(t, state, map[string]any{
			"hasCompletedOnboarding": true,
			"theme":                  "dark",
			"projects": map[string]any{
				h.Workspace: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true},
			},
		})
	}
	args := append([]string{h.Bin}, h.args("", session)...)
	// Each session writes a debug log of its own (DebugLog reads them).
	logs, _ := filepath.Glob(filepath.Join(h.Home, debugLogPrefix+"*"+debugLogSuffix))
	args = append(dropPrompt(args), "--debug-file", filepath.Join(h.Home, fmt.Sprintf("%s%03d%s", debugLogPrefix, len(logs)+1, debugLogSuffix)))
	env := make([]string, 0, len(h.env))
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TERM=xterm-256color")
	// Once the test's cleanup has ended the terminal, Claude Code is
	// given up to 10 s to exit (it writes into the home as it goes), so
	// that the home can be removed.
	t.Cleanup(func() { StopServers(t, h.Bin, h.Home) })
	return termtest.Start(t, termtest.Options{Width: 160, Height: 50, Dir: h.Workspace, Env: env, Args: args})
}

// Claude Code's interactive sessions write their debug logs (--debug-file)
// into the home, numbered: claude-debug-001.log, ...
const debugLogPrefix, debugLogSuffix = "claude-debug-", ".log"

// DebugLog returns what Claude Code's interactive sessions wrote into
// their debug logs so far, oldest session first: among other things what
// it did with each MCP task (seen with 2.1.328: "task ID: answered KEY"
// after a tasks/update, "task ID: cancel sent" after a tasks/cancel).
func (h *Host) DebugLog() string {
	logs, _ := filepath.Glob(filepath.Join(h.Home, debugLogPrefix+"*"+debugLogSuffix))
	sort.Strings(logs)
	var b strings.Builder
	for _, path := range logs {
		data, _ := os.ReadFile(path)
		b.Write(data)
	}
	return b.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// dropPrompt removes -p PROMPT and --output-format FORMAT from Claude
// Code's one-shot arguments.
func dropPrompt(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-p", "--output-format":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// Sessions lists the ids of Claude Code's conversations in the home, as
// its transcripts under ~/.claude/projects name them.
func (h *Host) Sessions() []string {
	paths, _ := filepath.Glob(filepath.Join(h.Home, ".claude", "projects", "*", "*.jsonl"))
	var ids []string
	for _, p := range paths {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	return ids
}

// Serve runs `superagents serve` on a port of loopback, with the host's
// server's data directory and configuration, and makes it the host's MCP
// server over streamable HTTP (its /mcp, behind the API token in an
// Authorization header) instead of `superagents mcp` over stdio. It
// returns the server's URL; the test's cleanup stops it.
func (h *Host) Serve(ctx context.Context, t testing.TB) string {
	t.Helper()
	if h.Name != ClaudeCode {
		t.Fatalf("hosttest: Serve configures Claude Code, not %s", h.Name)
	}
	r := h.Superagents(ctx, "serve", "--print-token")
	token := strings.TrimSpace(r.Stdout)
	if r.Err != nil || token == "" {
		t.Fatalf("superagents serve --print-token:\n%s", r)
	}
	env := baseEnv(h.Home)
	for k, v := range h.serverEnv {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(h.superagents, "serve", "--addr", "127.0.0.1:0", "--workspace", h.Workspace)
	cmd.Dir, cmd.Env = h.Workspace, env
	logPath := filepath.Join(h.Home, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(time.Minute) // a bound on a hung start
	var d httpapi.Discovery
	for {
		d, err = httpapi.ReadDiscovery(h.DataDir)
		if err == nil && d.PID == cmd.Process.Pid {
			break
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("superagents serve exited before listening (%v):\n%s", werr, Trim(string(log), 2000))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the discovery file names another process")
			}
			t.Fatalf("superagents serve did not listen within a minute: %v", err)
		}
	}
	writeJSON(t, filepath.Join(h.Home, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"superagents": map[string]any{"type": "http", "url": d.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + token}},
	}})
	return d.URL
}

// WaitConnected waits until Claude Code's interactive session, in term,
// has connected the MCP server named server (it connects its servers
// while it takes prompts, and a prompt sent before offers the model none
// of their tools): it opens /mcp until the list shows the server
// connected ("✔ superagents"), then closes it. It fails the test after a
// minute, a bound on a hung start.
func WaitConnected(t testing.TB, term *termtest.Terminal, server string) {
	t.Helper()
	const closeHint = "Esc to close"
	deadline := time.Now().Add(time.Minute)
	for {
		term.Keys("-l", "/mcp")
		term.WaitText("/mcp", 1)
		// An Enter that comes while the session starts may be lost: press
		// it again until the list shows.
		var screen string
		for screen == "" {
			term.Keys("Enter")
			for range 20 {
				if s := term.Screen(); strings.Contains(s, closeHint) {
					screen = s
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if screen == "" && time.Now().After(deadline) {
				t.Fatalf("Claude Code did not show /mcp within a minute; the screen:\n%s", term.Screen())
			}
		}
		for range 20 {
			if strings.Contains(screen, "✔ "+server) {
				term.Keys("Escape")
				term.Wait("the MCP servers' list to close", func(s string) bool { return !strings.Contains(s, closeHint) })
				return
			}
			time.Sleep(100 * time.Millisecond)
			screen = term.Screen()
		}
		if time.Now().After(deadline) {
			t.Fatalf("Claude Code has not connected the MCP server %s within a minute; its /mcp:\n%s", server, screen)
		}
		term.Keys("Escape")
		term.Wait("the MCP servers' list to close", func(s string) bool { return !strings.Contains(s, closeHint) })
	}
}
