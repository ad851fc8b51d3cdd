package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/internal/config"
)

// DefaultServeAddr is where `superagents serve` listens by default.
const DefaultServeAddr = "127.0.0.1:5165"

// defaultRateLimit is --rate-limit's default: requests per second to the
// API, and as many to MCP. It is there to stop a runaway client, not to
// ration a local tool: a dashboard and a few agents stay well under it.
const defaultRateLimit = 200

type serveFlags struct {
	addr, allowOrigin string
	tokenFile         string
	model             string
	allowHosts        []string
	allowRemote       bool
	printToken        bool
	rateLimit         float64
	shutdownTimeout   time.Duration
}

const serveLong = `Serve the HTTP API (/v1/...), the live event stream (/v1/events), the
web dashboard (/) and the task tools over MCP's streamable HTTP (/mcp) on one
address, over the same store and task manager as the rest of superagents.

Every API request needs the token: Authorization: Bearer <token>. It is made
on first start and kept, readable by you only, in the data directory;
--print-token prints it. The dashboard asks for it once per browser tab.
To give several servers (a cluster on one database) the same token, set it
with --token-file FILE (readable by you only) or SUPERAGENTS_TOKEN.

The server listens on loopback only (127.0.0.1:5165). A non-loopback address
is refused unless --allow-remote is given: then anyone who can reach the
port and holds the token controls your agents, over plain HTTP.

While it runs, server.json in the data directory tells local programs its
URL, port and process id. SIGINT or SIGTERM stops it gracefully: it stops
accepting connections and removes server.json, requests in flight may
finish (--shutdown-timeout), then running tasks end as interrupted.`

func (a *app) serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Serve the HTTP API, live events, the web dashboard and MCP over HTTP",
		Long:  serveLong,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", DefaultServeAddr, "address to listen on (loopback unless --allow-remote)")
	fl.StringVar(&f.model, "model", "", "default model of sessions and tasks, as provider/model, e.g. anthropic/claude-sonnet-4-5 or offline (default: the agent's, then the configured one)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow listening on a non-loopback address (the API is then reachable from the network)")
	fl.StringSliceVar(&f.allowHosts, "allow-host", nil, "also accept requests whose Host header names this host (a name the server is reached by)")
	fl.StringVar(&f.allowOrigin, "allow-origin", "", "let web pages of this exact origin call the API (CORS), e.g. https://example.com")
	fl.StringVar(&f.tokenFile, "token-file", "", "read the API token from this file (mode 0600) instead of "+EnvToken+" or the data directory's")
	fl.BoolVar(&f.printToken, "print-token", false, "print the API token (making it if needed) and exit")
	fl.Float64Var(&f.rateLimit, "rate-limit", defaultRateLimit, "most API requests per second, in bursts of twice that, and as many again for MCP; the event stream is not counted (0: no limit)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", config.DefaultShutdownTimeout, "how long requests in flight may take to finish on shutdown")
	return cmd
}

func (a *app) serve(ctx context.Context, f serveFlags) error {
	ways, err := a.waysIn("serve")
	if err != nil {
		return err
	}
	a.ownFiles = append(a.ownFiles, f.tokenFile) // before the runtime's sandbox is made
	proc, err := a.process()
	if err != nil {
		return err
	}
	token, err := a.tokenFromOutside(f.tokenFile)
	if err != nil {
		return err
	}
	if !f.printToken {
		if f.rateLimit < 0 {
			return usagef("--rate-limit cannot be negative")
		}
		if err := checkListenAddr(a.env.Stderr, f.addr, f.allowRemote); err != nil {
			return err
		}
	}
	a.node = true // on PostgreSQL, serve works the cluster's tasks too
	return ways.Serve(ctx, ServeRequest{
		Process: proc, Addr: f.addr, AllowOrigin: f.allowOrigin, Token: token, Model: f.model,
		AllowHosts: f.allowHosts, PrintToken: f.printToken, RateLimit: f.rateLimit,
		ShutdownTimeout: f.shutdownTimeout,
	})
}

// checkListenAddr refuses a non-loopback address unless allowRemote, and
// then warns loudly on w.
func checkListenAddr(w io.Writer, addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: want HOST:PORT, like %s", addr, DefaultServeAddr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("--addr %q: bad port %q", addr, port)
	}
	if isLoopback(host) {
		return nil
	}
	if !allowRemote {
		return usagef("--addr %s is not a loopback address: the API would be reachable from the network; "+
			"listen on 127.0.0.1, or pass --allow-remote if you really mean it", addr)
	}
	bar := strings.Repeat("!", 72)
	fmt.Fprintf(w, "%s\nWARNING: listening on %s, beyond this machine, over plain HTTP.\n"+
		"Anyone who can reach this port and holds the token controls your agents\n"+
		"and, through their tools, your files and shell. Put a TLS proxy in front.\n%s\n", bar, addr, bar)
	return nil
}

// isLoopback reports whether a listen host is on this machine only.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
