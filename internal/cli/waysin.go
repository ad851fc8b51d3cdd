package cli

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/superagents/superagents/internal/runtime"
)

// WaysIn runs the long-running ways in that commands of the command line
// start: the terminal chat, the MCP server on standard input and output,
// and the HTTP server. They are siblings of the command line above the
// runtime, and the command line does not import them: cmd/superagents
// hands them in (package frontends). The command line parses and checks
// the flags, and closes what Open opened when the command ends.
type WaysIn interface {
	Chat(ctx context.Context, req ChatRequest) error
	MCP(ctx context.Context, req MCPRequest) error
	Serve(ctx context.Context, req ServeRequest) error
}

// Process is what a way in gets of the process and of the command line's
// setup.
type Process struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        []string
	// Version is the program's version, for the servers to announce.
	Version string
	// DataDir is the data directory (flag, environment, XDG default).
	DataDir string
	// Open opens the runtime (store, engine, task manager) with a model
	// (empty: the configured one).
	Open func(ctx context.Context, model string) (*runtime.Runtime, error)
}

// ChatRequest opens a chat on an opened runtime.
type ChatRequest struct {
	Process
	Runtime *runtime.Runtime
	// SessionID opens that session (resolved from what the user typed);
	// Continue opens the latest one; neither starts a new chat with Agent.
	SessionID string
	Continue  bool
	Agent     string
	Model     string
	// Terminal runs the full-screen chat; otherwise lines are read from
	// standard input and the transcript printed as plain text.
	Terminal    bool
	HistoryFile string
	// Notice is the model notice the terminal chat shows in its transcript.
	Notice string
}

// MCPRequest serves the task tools over MCP on standard input and output,
// or, with a Listener, as the background server.
type MCPRequest struct {
	Process
	Model string
	// Host is the agent host whose transcripts a fork reads, as given by
	// --host (empty: the configuration's, then the client's own name).
	Host string
	// Listener, when set, makes this the background server: every
	// connection accepted is one MCP session, and the server returns once
	// it has had no connection and no task of its own queued or running
	// for Idle. Ready is called once it serves.
	Listener net.Listener
	Idle     time.Duration
	Ready    func()
}

// ServeRequest serves the HTTP API, events, dashboard and MCP over HTTP.
type ServeRequest struct {
	Process
	Addr, AllowOrigin string
	// Token is the API token given from outside (--token-file or
	// SUPERAGENTS_TOKEN); empty, the data directory's is used (made on
	// first start).
	Token           string
	Model           string
	AllowHosts      []string
	PrintToken      bool
	RateLimit       float64
	ShutdownTimeout time.Duration
}

// Usagef makes an error of the caller's input: the process exits with
// ExitUsage.
func Usagef(format string, args ...any) error { return usagef(format, args...) }
