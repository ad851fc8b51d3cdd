package frontends

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/superagents/superagents/cli"
	"github.com/superagents/superagents/mcpserver"
)

// MCP serves the task tools to an agent host on standard input and output
// until the host closes the connection or a signal stops it.
func (WaysIn) MCP(ctx context.Context, req cli.MCPRequest) error {
	rt, err := req.Open(ctx, req.Model)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Runtime: rt,
		Host:    cmp.Or(req.Host, rt.Engine.Config.MCP.Host),
		Getenv:  req.Getenv,
		Version: req.Version,
		Logger:  slog.New(slog.NewTextHandler(req.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	// A host that stops reading must end the session, not kill the
	// process before it stops its tasks: with SIGPIPE ignored, a write to
	// a closed stdout is an error like any other.
	signal.Ignore(syscall.SIGPIPE)
	defer signal.Reset(syscall.SIGPIPE)
	err = srv.ServeIO(ctx, req.Stdin, req.Stdout)
	if errors.Is(err, context.Canceled) {
		return nil // stopped by a signal: a normal end
	}
	return err
}
