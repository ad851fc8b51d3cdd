package transcripts

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
)

// Find returns the host's transcripts of conversations held in the working
// directory dir, newest first. None found is an empty list, not an error.
func Find(ctx context.Context, host Host, dir string, env Env) ([]Transcript, error) {
	dir, err := cleanDir(dir)
	if err != nil {
		return nil, err
	}
	if _, err := ParseHost(string(host)); err != nil {
		return nil, err
	}
	// The hosts record the directory as the system resolves it (getcwd);
	// ours may be named through a symbolic link ($PWD, --workspace).
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	var ts []Transcript
	seen := map[[2]string]bool{} // path and session: an OpenCode database holds many
	for _, d := range dirs {
		var found []Transcript
		switch host {
		case ClaudeCode:
			found, err = findClaude(env, d)
		case Codex:
			found, err = findCodex(env, d)
		case OpenCode:
			found, err = findOpenCode(ctx, env, d)
		}
		if err != nil {
			return nil, err
		}
		for _, t := range found {
			if key := [2]string{t.Path, t.SessionID}; !seen[key] {
				seen[key] = true
				ts = append(ts, t)
			}
		}
	}
	newestFirst(ts)
	return ts, nil
}

// Lookup finds the transcript of the host's session with that id.
func Lookup(ctx context.Context, host Host, id string, env Env) (Transcript, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return Transcript{}, fmt.Errorf("%w: empty %s session id", sa.ErrInvalid, host.Label())
	}
	var (
		ts  []Transcript
		err error
	)
	switch host {
	case ClaudeCode:
		ts, err = lookupClaude(env, id)
	case Codex:
		ts, err = lookupCodex(env, id)
	case OpenCode:
		ts, err = lookupOpenCode(ctx, env, id)
	default:
		_, err = ParseHost(string(host))
	}
	if err != nil {
		return Transcript{}, err
	}
	if len(ts) == 0 {
		return Transcript{}, sa.NotFoundf("no %s session %s", host.Label(), id)
	}
	newestFirst(ts)
	return ts[0], nil
}

// Inspect names the transcript at path, which the host must have written:
// a Claude Code or Codex JSONL file, or an OpenCode session file.
func Inspect(host Host, path string) (Transcript, error) {
	t := Transcript{Host: host, Path: path}
	switch host {
	case ClaudeCode:
		t.SessionID = strings.TrimSuffix(baseName(path), ".jsonl")
		return statTranscript(t)
	case Codex:
		meta, ok := codexMeta(path)
		t, err := statTranscript(t)
		if err != nil {
			return t, err
		}
		if !ok {
			return t, fmt.Errorf("%w: %s does not start with a session_meta line, so it is not a Codex rollout", ErrNotTranscript, path)
		}
		t.SessionID, t.Dir = meta.ID, meta.Cwd
		return t, nil
	case OpenCode:
		if _, err := statTranscript(t); err != nil {
			return t, err
		}
		return inspectOpenCode(path)
	}
	_, err := ParseHost(string(host))
	return t, err
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Read reads what the host wrote to the transcript after from (the zero
// Position reads it all). It never writes to the host's files.
func Read(ctx context.Context, t Transcript, from Position) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var (
		res Result
		err error
	)
	switch t.Host {
	case ClaudeCode:
		res, err = readClaude(t, from)
	case Codex:
		res, err = readCodex(t, from)
	case OpenCode:
		res, err = readOpenCode(ctx, t, from)
	default:
		_, err = ParseHost(string(t.Host))
	}
	if err != nil {
		return Result{}, err
	}
	res.From = from
	return res, nil
}

// FindPendingCall returns, among the host's transcripts for dir (newest
// first), the one whose newest assistant message holds a call to a tool
// whose name ends with toolSuffix (hosts prefix the names of MCP tools, as
// in mcp__superagents__superagents_task) with arguments equal to args as
// JSON values. It returns sa.ErrNotFound when none does. The Result is
// what was read to find it: for an OpenCode session, its newest messages
// only (Read with the transcript's stored position imports it).
func FindPendingCall(ctx context.Context, host Host, dir string, env Env, toolSuffix string, args json.RawMessage) (Transcript, Result, error) {
	var want any
	if err := json.Unmarshal(args, &want); err != nil {
		return Transcript{}, Result{}, fmt.Errorf("%w: tool arguments are not JSON: %v", sa.ErrInvalid, err)
	}
	ts, err := Find(ctx, host, dir, env)
	if err != nil {
		return Transcript{}, Result{}, err
	}
	for _, t := range ts {
		if found, ok := pendingIn(ctx, t, toolSuffix, want); ok {
			return t, found, nil
		}
	}
	return Transcript{}, Result{}, sa.NotFoundf("no %s conversation in %s is waiting for a %s call with these arguments", host.Label(), dir, toolSuffix)
}

// pendingIn reports whether the newest assistant message of t's
// conversation holds the call, and returns what it read to find out. It
// reads only the newest messages where the host allows (see readNewest),
// more of them while none of those read is an assistant's, then the whole
// conversation.
func pendingIn(ctx context.Context, t Transcript, toolSuffix string, want any) (Result, bool) {
	for _, n := range pendingWindows {
		res, whole, err := readNewest(ctx, t, n)
		if err != nil {
			return Result{}, false // another conversation may still be the one
		}
		msgs := res.All()
		if whole || slices.ContainsFunc(msgs, func(m sa.Message) bool { return m.Role == sa.RoleAssistant }) {
			return res, holdsCall(msgs, toolSuffix, want)
		}
	}
	res, err := Read(ctx, t, Position{})
	if err != nil {
		return Result{}, false
	}
	return res, holdsCall(res.All(), toolSuffix, want)
}

// holdsCall reports whether the newest assistant message calls the tool
// with these arguments, and the call has no result yet.
func holdsCall(msgs []sa.Message, toolSuffix string, want any) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != sa.RoleAssistant {
			continue
		}
		for _, p := range msgs[i].Parts {
			if p.Type != sa.PartToolCall || !strings.HasSuffix(p.Name, toolSuffix) || answered(msgs[i+1:], p.CallID) {
				continue
			}
			var got any
			if json.Unmarshal(p.Input, &got) == nil && reflect.DeepEqual(got, want) {
				return true
			}
		}
		return false
	}
	return false
}

func answered(msgs []sa.Message, callID string) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == sa.PartToolResult && p.CallID == callID {
				return true
			}
		}
	}
	return false
}
