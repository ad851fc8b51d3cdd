package frontends

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/mcpdaemon"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/runtime"
)

// MCP serves the task tools to an agent host on standard input and output
// until the host closes the connection or a signal stops it; with a
// listener, it is the background server, which serves every connection
// until it has been idle for its grace period.
func (WaysIn) MCP(ctx context.Context, req cli.MCPRequest) error {
	rt, err := req.Open(ctx, req.Model)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(req.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcpserver.New(mcpserver.Options{
		Runtime: rt,
		Host:    cmp.Or(req.Host, rt.Config().MCP.Host),
		Getenv:  req.Getenv,
		Version: req.Version,
		Logger:  logger,
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
	if req.Listener != nil {
		err = serveBackground(ctx, req, rt, srv, logger)
	} else {
		err = srv.ServeIO(ctx, req.Stdin, req.Stdout)
	}
	if errors.Is(err, context.Canceled) {
		return nil // stopped by a signal: a normal end
	}
	return err
}

// serveBackground serves each connection of the listener as one MCP
// session, until no connection and no task of this process has been
// left for the grace period.
func serveBackground(ctx context.Context, req cli.MCPRequest, rt *runtime.Runtime, srv *mcpserver.Server, logger *slog.Logger) error {
	if req.Ready != nil {
		req.Ready()
	}
	return mcpdaemon.Serve(ctx, req.Listener, mcpdaemon.ServeOptions{
		Handle: func(ctx context.Context, conn net.Conn) {
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			if err := srv.ServeIO(ctx, conn, conn); err != nil && ctx.Err() == nil {
				logger.Warn("MCP session ended", "err", err)
			}
		},
		Busy: func(ctx context.Context) (bool, error) {
			active, err := rt.Store().ListTasks(ctx, sa.TaskFilter{Active: true, RunnerID: rt.RunnerID(), IncludeCleared: true, Limit: 1})
			return len(active) > 0, err
		},
		Idle: req.Idle,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(req.Stderr, "superagents mcp server %d: %s\n", os.Getpid(), fmt.Sprintf(format, args...))
		},
	})
}
