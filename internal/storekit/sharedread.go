package storekit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	sa "github.com/superagents/superagents"
)

// LiveReads gives the snapshots of a store's reads of a live session:
// inRead runs a function over one snapshot, live checks in it that a
// session is live, and lineage reads the snapshot's sessions.
func LiveReads[Q any, L sa.LatestReader](inRead func(context.Context, func(Q) error) error,
	live func(context.Context, Q, string) error, lineage func(Q) L) ReadLive[L] {
	return func(ctx context.Context, sessionID, what string, read func(L) error) error {
		err := inRead(ctx, func(q Q) error {
			if err := live(ctx, q, sessionID); err != nil {
				return err
			}
			return read(lineage(q))
		})
		if err != nil {
			return fmt.Errorf("%s of session %s: %w", what, sessionID, err)
		}
		return nil
	}
}

// Lineage is the part of a store's LineageReader whose SQL both stores
// share, over one snapshot: the store's own embeds it. It sees deleted
// sessions too: their messages are still part of their descendants'
// histories.
type Lineage struct{ r Reader }

// NewLineage is the shared part of the lineage reader over r.
func NewLineage(r Reader) Lineage { return Lineage{r: r} }

// Link returns a session's parent and fork point ("" and 0 for a root).
func (l Lineage) Link(ctx context.Context, id string) (string, int64, error) {
	var parent *string
	var forkPoint *int64
	err := l.r.ScanShared(ctx, `SELECT parent_id, fork_message_id FROM sessions WHERE id = $1`, []any{id}, &parent, &forkPoint)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, fmt.Errorf("session %s: %w", id, sa.ErrNotFound)
	}
	if err != nil || parent == nil || forkPoint == nil {
		return "", 0, err
	}
	return *parent, *forkPoint, nil
}

// LastClear returns the id of a session's last clear up to upto, 0 when
// there is none.
func (l Lineage) LastClear(ctx context.Context, id string, upto int64) (int64, error) {
	var last int64
	err := l.r.ScanShared(ctx, `SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = $1 AND kind = 'clear' AND id <= $2`,
		[]any{id, upto}, &last)
	return last, err
}

// CountMessages counts a session's own messages after after, up to upto.
func (l Lineage) CountMessages(ctx context.Context, id string, after, upto int64) (int, error) {
	var n int
	err := l.r.ScanShared(ctx, `SELECT COUNT(*) FROM messages WHERE session_id = $1 AND id > $2 AND id <= $3`,
		[]any{id, after, upto}, &n)
	return n, err
}

// TaskSQL words what a store's task queries differ in.
type TaskSQL struct {
	// Contains is the condition that a task's description, folded,
	// contains the folded search in parameter param.
	Contains func(param string) string
	// ToolCalls is the expression of a task's number of tool calls.
	ToolCalls string
	// Limit is the argument of a LIMIT: limit, 0 for none.
	Limit func(limit int) any
}

// SharedReads are the reads of a store whose SQL both stores share: a
// store embeds them.
type SharedReads struct {
	db     Reader                                                 // a statement at a time
	inRead func(ctx context.Context, fn func(Reader) error) error // one snapshot
	tasks  TaskSQL
}

// NewSharedReads are the shared reads of a store that reads through db,
// or one snapshot through inRead, with tasks' SQL.
func NewSharedReads(db Reader, inRead func(ctx context.Context, fn func(Reader) error) error, tasks TaskSQL) SharedReads {
	return SharedReads{db: db, inRead: inRead, tasks: tasks}
}

// Changes returns the change log after an ID, oldest first.
func (s SharedReads) Changes(ctx context.Context, after int64, limit int) ([]sa.Change, error) {
	var (
		out     []sa.Change
		c       sa.Change
		data    string
		created int64
	)
	err := s.db.EachShared(ctx, `SELECT id, kind, session_id, task_id, data, created_at
		FROM changes WHERE id > $1 ORDER BY id LIMIT CAST($2 AS INTEGER)`, []any{after, ChangesLimit(limit)},
		[]any{&c.ID, &c.Kind, &c.SessionID, &c.TaskID, &data, &created}, func() error {
			c.Data, c.CreatedAt = json.RawMessage(data), time.Unix(0, created).UTC()
			out = append(out, c)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	return out, nil
}

// LastChangeID returns the newest change's ID, 0 when there is none.
func (s SharedReads) LastChangeID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.ScanShared(ctx, `SELECT COALESCE(MAX(id), 0) FROM changes`, nil, &id); err != nil {
		return 0, fmt.Errorf("last change: %w", err)
	}
	return id, nil
}

// Runners lists the registered runners.
func (s SharedReads) Runners(ctx context.Context) ([]sa.Runner, error) {
	var (
		out           []sa.Runner
		r             sa.Runner
		started, seen int64
	)
	err := s.db.EachShared(ctx, `SELECT id, host, pid, started_at, seen_at FROM runners ORDER BY started_at`, nil,
		[]any{&r.ID, s.db.RawDest(&r.Host), &r.PID, &started, &seen}, func() error {
			r.StartedAt, r.SeenAt = time.Unix(0, started).UTC(), time.Unix(0, seen).UTC()
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	return out, nil
}

// TaskWhere turns a filter into a WHERE clause and its arguments ($1 on),
// for r.
func (s SharedReads) TaskWhere(r Reader, f sa.TaskFilter) (string, []any) {
	where := ` WHERE 1 = 1`
	var args []any
	param := func(arg any) string {
		args = append(args, arg)
		return `$` + strconv.Itoa(len(args))
	}
	// A key no row can hold (NUL, invalid UTF-8) selects nothing.
	key := func(column, v string, raw bool) {
		switch {
		case !Storable(v):
			where += ` AND 1 = 0`
		case raw:
			where += ` AND ` + column + ` = ` + param(r.Raw(v))
		default:
			where += ` AND ` + column + ` = ` + param(v)
		}
	}
	if f.ParentSessionID != "" {
		key(`parent_session_id`, f.ParentSessionID, false)
	}
	if f.Status != "" {
		key(`status`, string(f.Status), false)
	}
	if f.Agent != "" {
		key(`agent`, f.Agent, true)
	}
	if f.BatchID != "" {
		key(`batch_id`, f.BatchID, true)
	}
	if f.RunnerID != "" {
		key(`runner_id`, f.RunnerID, false)
	}
	if f.Search != "" {
		// Not LIKE: it knows the case of ASCII letters only, and takes %
		// and _ for wildcards. The search is folded once, here.
		where += ` AND ` + s.tasks.Contains(param(r.Raw(sa.FoldCase(f.Search))))
	}
	if f.Active {
		where += ` AND status IN ('queued', 'running', 'resumed')`
	}
	if !f.IncludeCleared {
		where += ` AND cleared_at IS NULL`
	}
	return where, args
}

// TaskListQuery is the query of a page of the tasks a filter selects,
// newest first, reading columns, with its arguments.
func (s SharedReads) TaskListQuery(f sa.TaskFilter, columns string) (string, []any, error) {
	if err := CheckPage("tasks", f.Offset, f.Limit); err != nil {
		return "", nil, err
	}
	where, args := s.TaskWhere(s.db, f)
	n := len(args)
	args = append(args, s.tasks.Limit(f.Limit), f.Offset)
	return `SELECT ` + columns + ` FROM tasks` + where + ` ORDER BY created_at DESC, id DESC
		LIMIT CAST($` + strconv.Itoa(n+1) + ` AS INTEGER) OFFSET CAST($` + strconv.Itoa(n+2) + ` AS INTEGER)`, args, nil
}

// CountTasks counts the tasks a filter selects.
func (s SharedReads) CountTasks(ctx context.Context, f sa.TaskFilter) (int, error) {
	where, args := s.TaskWhere(s.db, f)
	var n int
	if err := s.db.ScanShared(ctx, `SELECT COUNT(*) FROM tasks`+where, args, &n); err != nil {
		return 0, fmt.Errorf("count tasks: %w", err)
	}
	return n, nil
}

// TaskStats sums up the tasks a filter selects, from one snapshot.
func (s SharedReads) TaskStats(ctx context.Context, f sa.TaskFilter) (sa.TaskStats, error) {
	stats := sa.TaskStats{ByStatus: map[sa.TaskStatus]int{}, ByAgent: map[string]int{}}
	err := s.inRead(ctx, func(r Reader) error {
		where, args := s.TaskWhere(r, f)
		var (
			key string
			n   int
		)
		groups := []struct {
			column string
			dest   any
			add    func()
		}{
			{"status", &key, func() { stats.ByStatus[sa.TaskStatus(key)] = n; stats.Total += n }},
			{"agent", r.RawDest(&key), func() { stats.ByAgent[key] = n }},
		}
		for _, g := range groups {
			err := r.EachShared(ctx, `SELECT `+g.column+`, COUNT(*) FROM tasks`+where+` GROUP BY `+g.column, args,
				[]any{g.dest, &n}, func() error { g.add(); return nil })
			if err != nil {
				return err
			}
		}
		var avg *float64
		var low, high, calls *int64
		err := r.ScanShared(ctx, `SELECT COUNT(completed_at), CAST(AVG(completed_at - started_at) AS DOUBLE PRECISION),
			MIN(completed_at - started_at), MAX(completed_at - started_at), CAST(SUM(`+s.tasks.ToolCalls+`) AS BIGINT)
			FROM tasks`+where, args, &stats.Durations.Count, &avg, &low, &high, &calls)
		if avg != nil && low != nil && high != nil {
			stats.Durations.Avg = time.Duration(*avg)
			stats.Durations.Min, stats.Durations.Max = time.Duration(*low), time.Duration(*high)
		}
		if calls != nil {
			stats.ToolCalls = int(*calls)
		}
		return err
	})
	if err != nil {
		return sa.TaskStats{}, fmt.Errorf("task stats: %w", err)
	}
	return stats, nil
}
