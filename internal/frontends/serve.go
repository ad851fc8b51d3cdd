package frontends

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/httpapi"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/proc"
)

// mcpSessionTimeout ends an MCP session whose client went quiet: no
// request for this long and no task of its still running, so a host that
// waits for a long task's notification keeps its session (the tasks stay
// in the store either way).
const mcpSessionTimeout = 30 * time.Minute

// Serve runs the HTTP API, the event stream, the dashboard and MCP over
// HTTP until ctx ends, or prints the API token when asked.
func (WaysIn) Serve(ctx context.Context, req cli.ServeRequest) error {
	dir := req.DataDir
	token, created := req.Token, false
	if token == "" {
		var err error
		if token, created, err = httpapi.LoadOrCreateToken(dir); err != nil {
			return err
		}
	}
	if req.PrintToken {
		_, err := fmt.Fprintln(req.Stdout, token)
		return err
	}
	if running, err := httpapi.ReadDiscovery(dir); err == nil && proc.Alive(running.PID) {
		return fmt.Errorf("a server for this data directory already runs at %s (pid %d); stop it first, or remove %s/%s if that process is not superagents",
			running.URL, running.PID, dir, httpapi.DiscoveryFile)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(req.Stderr, "warning: %v (replacing it)\n", err)
	}

	rt, err := req.Open(ctx, req.Model)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(req.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// The task tools over MCP's streamable HTTP, at /mcp behind the token.
	tools, err := mcpserver.New(mcpserver.Options{Runtime: rt, Host: rt.Config().MCP.Host, Getenv: req.Getenv, Version: req.Version, Logger: logger})
	if err != nil {
		return err
	}
	defer tools.Close()
	srv, err := httpapi.New(httpapi.Options{
		Runtime: rt, Token: token, Version: req.Version,
		MCP:         tools.HTTPHandler(mcpserver.HTTPOptions{SessionTimeout: mcpSessionTimeout}),
		AllowOrigin: req.AllowOrigin, AllowHosts: req.AllowHosts, Logger: logger,
		RateLimit: req.RateLimit, RateBurst: int(2 * req.RateLimit), ShutdownTimeout: req.ShutdownTimeout,
	})
	if err != nil {
		return cli.Usagef("%w", err)
	}
	ln, err := net.Listen("tcp", req.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", req.Addr, err)
	}
	bound := ln.Addr().(*net.TCPAddr)
	host, port := bound.IP.String(), bound.Port
	if bound.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, fmt.Sprint(port))
	started := time.Now().UTC()
	if err := httpapi.WriteDiscovery(dir, httpapi.Discovery{URL: url, Port: port, PID: os.Getpid(), Started: started, Version: req.Version}); err != nil {
		ln.Close()
		return err
	}
	// server.json sends local programs to a server that answers: it goes
	// as soon as shutdown begins and the listener closes, not once the
	// requests in flight and the task manager are done, which may take a
	// while during which the port accepts nobody.
	removeDiscovery := sync.OnceFunc(func() {
		if err := httpapi.RemoveDiscovery(dir, os.Getpid()); err != nil {
			fmt.Fprintf(req.Stderr, "warning: %v\n", err)
		}
	})
	stopRemoval := context.AfterFunc(ctx, removeDiscovery)
	defer func() {
		stopRemoval()
		removeDiscovery() // also when Serve failed; waits for a removal under way
	}()
	if created {
		fmt.Fprintf(req.Stderr, "A new API token was made and saved in %s (superagents serve --print-token prints it).\n", dir)
	}
	fmt.Fprintf(req.Stderr, "superagents serve: listening on %s (dashboard and API); Ctrl+C stops it\n", url)
	err = srv.Serve(ctx, ln)
	fmt.Fprintln(req.Stderr, "superagents serve: stopped; running tasks end as interrupted")
	return err
}
