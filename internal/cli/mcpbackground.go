package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/mcpclient"
	"github.com/superagents/superagents/internal/mcpdaemon"
	"github.com/superagents/superagents/sandbox"
)

// EnvMCPIdle sets how long the background MCP server waits, with no
// connection and no task of its own, before it exits (a Go duration;
// default 30s). It is meant for tests.
const EnvMCPIdle = "SUPERAGENTS_MCP_IDLE"

// startWait bounds the wait for a background server to be ready.
const startWait = 15 * time.Second

// mcpFlags are the flags of `superagents mcp`.
type mcpFlags struct {
	model, host string
	foreground  bool
	// The background server's own: the socket it serves, the pipe it says
	// it is ready on, and whether this process only starts it (detach).
	serveSocket string
	readyFD     int
	detach      bool
}

// mcpProxy connects the host to the background server of this data
// directory, workspace and settings, starting it when none runs, and
// copies the protocol both ways. When no server can be had, it serves in
// this process, and says so.
func (a *app) mcpProxy(ctx context.Context, ways WaysIn, req MCPRequest, cfg config.Config, f mcpFlags) error {
	foreground := func(why error, input *mcpdaemon.UnavailableError) error {
		fmt.Fprintf(a.env.Stderr, "superagents mcp: warning: no background server (%s); serving in this process instead, so its tasks stop when the host exits\n",
			oneLine(why.Error()))
		if input != nil {
			req.Stdin = input.Input
		}
		return ways.MCP(ctx, req)
	}
	self, err := os.Executable()
	if err != nil {
		return foreground(fmt.Errorf("find the superagents binary: %w", err), nil)
	}
	args, err := a.mcpServerArgs(req.DataDir, f, "")
	if err != nil {
		return err
	}
	key, err := a.mcpKey(cfg, self, args)
	if err != nil {
		return err
	}
	hash := key.Hash()
	paths, err := mcpdaemon.PathsFor(a.env.Getenv, req.DataDir, hash)
	if err != nil {
		return foreground(err, nil)
	}
	args, _ = a.mcpServerArgs(req.DataDir, f, paths.Socket)
	start := func(ctx context.Context) error {
		log, err := mcpdaemon.OpenLog(mcpLogPath(req.DataDir, hash))
		if err != nil {
			return err
		}
		defer log.Close()
		return mcpdaemon.Start(ctx, mcpdaemon.StartOptions{
			Path: self, Args: append(args, "--detach"), Env: a.mcpEnviron(), Log: log, Wait: startWait,
		})
	}
	// A host that stops reading ends the session; it must not kill this
	// process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	defer signal.Reset(syscall.SIGPIPE)
	// The server's own warning goes to its log, which the user does not
	// see: this process says it, once a server serves (serving in this
	// process instead, the engine says it).
	var warn sync.Once
	err = mcpdaemon.Proxy(ctx, req.Stdin, req.Stdout, func(ctx context.Context) (net.Conn, error) {
		conn, err := mcpdaemon.Dial(ctx, paths.Socket, start)
		if err == nil {
			warn.Do(func() {
				if w := a.mcpSandboxWarning(cfg); w != "" {
					fmt.Fprintf(a.env.Stderr, "superagents mcp: warning: %s\n", w)
				}
			})
		}
		return conn, err
	})
	if un, ok := errors.AsType[*mcpdaemon.UnavailableError](err); ok {
		if ctx.Err() != nil {
			return nil // stopped by a signal while the server started
		}
		return foreground(un.Err, un)
	}
	return err
}

// mcpSandboxWarning is what the background server's engine warns of
// (Engine.SandboxWarning) when this system cannot enforce the configured
// sandbox, or "" when it can: the sandbox of the workspace, with the
// environment the server gets.
func (a *app) mcpSandboxWarning(cfg config.Config) string {
	ws, err := a.workspaceDir()
	if err != nil {
		return ""
	}
	s, err := sandbox.New(sandbox.Policy{
		Mode:      sandbox.Strictest(cfg.Sandbox.Mode),
		Network:   cfg.Sandbox.Network,
		Writable:  cfg.Sandbox.Writable,
		Workspace: ws,
		Private:   a.privatePaths(),
	}, a.mcpEnviron())
	if err != nil {
		return err.Error()
	}
	return s.Warning()
}

// privatePaths are superagents' own files as this command places them
// (sandbox.PrivatePaths), with its data directory and the files named on
// its command line.
func (a *app) privatePaths() []string {
	dataDir, _ := a.resolveDataDir()
	return sandbox.PrivatePaths(a.env.Getenv, append([]string{dataDir}, a.ownFiles...)...)
}

// mcpLogPath is the background server's log, in the data directory.
func mcpLogPath(dataDir, hash string) string {
	return filepath.Join(dataDir, "logs", "mcp-server-"+hash+".log")
}

// mcpServerArgs are the arguments that run the background server of
// this command's settings on socket.
func (a *app) mcpServerArgs(dataDir string, f mcpFlags, socket string) ([]string, error) {
	data, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	ws, err := a.workspaceDir()
	if err != nil {
		return nil, err
	}
	args := []string{"--data-dir", data, "--workspace", ws}
	if a.database != "" {
		args = append(args, "--database", a.database)
	}
	if a.trustProject {
		args = append(args, "--trust-project")
	}
	args = append(args, "mcp")
	if f.model != "" {
		args = append(args, "--model", f.model)
	}
	if f.host != "" {
		args = append(args, "--host", f.host)
	}
	if socket != "" {
		args = append(args, "--serve-socket", socket, "--ready-fd", strconv.Itoa(mcpdaemon.ReadyFD))
	}
	return args, nil
}

// mcpKey is what the background server's behaviour depends on: the
// binary, the arguments it gets (data directory, workspace, flags), the
// configuration files, and the environment that matters.
func (a *app) mcpKey(cfg config.Config, self string, args []string) (mcpdaemon.Key, error) {
	var k mcpdaemon.Key
	k.AddFile("binary", self)
	k.Add("args", strings.Join(args, "\x00"))
	ws, err := a.workspaceDir()
	if err != nil {
		return k, err
	}
	if dir := a.userConfigDir(); dir != "" {
		k.AddFile("config", filepath.Join(dir, config.FileName))
		k.AddFile("config", filepath.Join(dir, mcpclient.UserFile))
	}
	k.AddFile("config", filepath.Join(ws, config.ProjectDir, config.FileName))
	k.AddFile("config", filepath.Join(ws, mcpclient.ProjectFile))
	names := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" {
			names[p.APIKeyEnv] = true
		}
	}
	for _, kv := range a.mcpEnviron() {
		name, value, _ := strings.Cut(kv, "=")
		if names[name] || keyVar(name) {
			k.Add("env "+name, value)
		}
	}
	return k, nil
}

// keyVar tells the environment variables that change what the background
// server does, or what the commands its agents run may reach: where it
// finds the user's and the hosts' files, the providers' keys and
// addresses, superagents' own settings, the commands its tools run, the
// proxies and certificates connections go through, and the tokens
// (GITHUB_TOKEN, GH_TOKEN, any *_TOKEN) commands act with. A host whose
// values differ gets a server of its own rather than the first host's.
func keyVar(name string) bool {
	switch name {
	case "HOME", "PATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
		"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
		config.EnvAnthropicBaseURL, config.EnvOpenAIBaseURL, config.EnvOllamaHost:
		return true
	}
	if slices.Contains(networkVars, strings.ToUpper(name)) {
		return true
	}
	return strings.HasPrefix(name, "SUPERAGENTS_") || strings.HasSuffix(name, "_API_KEY") ||
		strings.HasSuffix(strings.ToUpper(name), "_TOKEN")
}

// networkVars are the variables that choose the proxies and the
// certificates connections use, in either case (http_proxy is as common
// as HTTP_PROXY).
var networkVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
}

// mcpEnviron is the environment the background server runs with: this
// process's, as the host gave it.
func (a *app) mcpEnviron() []string {
	if a.env.Environ != nil {
		return a.env.Environ
	}
	// Run in-process (tests): what can be read of the variables that
	// matter.
	var env []string
	names := []string{"HOME", "PATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
		"XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "SUPERAGENTS_DATA_DIR", "SUPERAGENTS_MODEL",
		config.EnvOfflineScript, EnvMCPIdle, "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
		config.EnvAnthropicBaseURL, config.EnvOpenAIBaseURL, config.EnvOllamaHost, "GITHUB_TOKEN", "GH_TOKEN"}
	for _, name := range networkVars {
		names = append(names, name, strings.ToLower(name))
	}
	for _, name := range names {
		if v := a.env.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// mcpDetach is the first of the two processes the background server is
// started through: it starts the server and exits at once.
func (a *app) mcpDetach(req MCPRequest, f mcpFlags) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the superagents binary: %w", err)
	}
	args, err := a.mcpServerArgs(req.DataDir, f, f.serveSocket)
	if err != nil {
		return err
	}
	return mcpdaemon.Detach(self, args, a.mcpEnviron())
}

// mcpServe is the background server: it takes the lock of its socket (or
// learns that another server serves there, and leaves), listens, and
// serves until it has been idle for the grace period.
func (a *app) mcpServe(ctx context.Context, ways WaysIn, req MCPRequest, f mcpFlags) (err error) {
	ready := mcpdaemon.OpenReady(f.readyFD)
	defer func() { ready.Done(err) }()
	idle := mcpdaemon.DefaultIdle
	if v := a.env.Getenv(EnvMCPIdle); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return usagef("%s=%s: want a positive duration such as 30s", EnvMCPIdle, v)
		}
		idle = d
	}
	paths := mcpdaemon.PathsOf(f.serveSocket)
	lock, err := mcpdaemon.Claim(ctx, paths, startWait)
	if err != nil {
		return err
	}
	if lock == nil {
		fmt.Fprintf(a.env.Stderr, "superagents mcp server %d: another server serves this socket; leaving\n", os.Getpid())
		return nil
	}
	defer lock.Release()
	ln, err := mcpdaemon.Listen(paths.Socket)
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Fprintf(a.env.Stderr, "superagents mcp server %d: started at %s\n", os.Getpid(), time.Now().Format(time.RFC3339))
	req.Listener, req.Idle, req.Ready = ln, idle, func() { ready.Done(nil) }
	err = ways.MCP(ctx, req)
	fmt.Fprintf(a.env.Stderr, "superagents mcp server %d: stopped at %s\n", os.Getpid(), time.Now().Format(time.RFC3339))
	return err
}

// tasksModel says, for the line `superagents mcp` starts with, which
// model the tasks use by default and where its key comes from.
func tasksModel(cfg config.Config) string {
	if cfg.Model == config.OfflineModel {
		switch {
		case cfg.Defaulted:
			return "the offline model (no API key set)"
		case cfg.ModelOrigin == "flag":
			return "the offline model (--model)"
		}
		return "the offline model (chosen by " + strings.TrimPrefix(cfg.ModelOrigin, "env ") + ")"
	}
	provider, _, _ := strings.Cut(cfg.Model, "/")
	p := cfg.Providers[provider]
	switch {
	case !p.APIKey.IsZero() && strings.HasPrefix(p.KeyOrigin, "env "):
		return cfg.Model + " (" + strings.TrimPrefix(p.KeyOrigin, "env ") + ")"
	case !p.APIKey.IsZero():
		return cfg.Model + " (API key from " + p.KeyOrigin + ")"
	case p.APIKeyEnv != "":
		return cfg.Model + " (no API key: " + p.APIKeyEnv + " is not set)"
	}
	return cfg.Model
}
