// Package cluster holds the tests of several superagents processes (the
// real binary) on one store: serve processes on one PostgreSQL database,
// one of which is killed while it runs tasks; and messages sent over MCP
// to a task that another process runs (another node, or a task worker on
// the same SQLite file). It has no code of its own.
package cluster
