// Package frontends runs the long-running ways in that the command line
// starts: the terminal chat (repl), the MCP server on standard input and
// output (mcpserver) and the HTTP server (httpapi, with MCP over HTTP).
// Those ways in and the command line are siblings above the runtime and
// none imports another; this package, the program's composition root
// with cmd/superagents, puts them together.
package frontends

import (
	"context"

	"github.com/superagents/superagents/internal/cli"
)

// WaysIn runs the chat, the MCP server and the HTTP server for the
// command line.
type WaysIn struct{}

var _ cli.WaysIn = WaysIn{}

// Main runs the command line with every way in: what cmd/superagents
// does, and what tests of the whole program call.
func Main(ctx context.Context, args []string, env cli.Env) int {
	env.WaysIn = WaysIn{}
	return cli.Main(ctx, args, env)
}
