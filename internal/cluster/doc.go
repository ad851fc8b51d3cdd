// Package cluster holds the test of several superagents serve processes
// (the real binary) on one PostgreSQL database, one of which is killed
// while it runs tasks. It has no code of its own.
package cluster
