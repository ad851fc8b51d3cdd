package sqlite

import (
	"context"
	"fmt"

	sa "github.com/superagents/superagents"
)

// inChunk is how many ids one IN (...) list holds, well under SQLite's
// limit on parameters.
const inChunk = 500

// forChunks runs query, whose "(%s)" is an IN list, over ids a chunk at a
// time, handing each row to scan.
func (s *Store) forChunks(ctx context.Context, ids []string, query string, scan func(rowScanner) error) error {
	return s.inRead(ctx, func(q querier) error {
		for start := 0; start < len(ids); start += inChunk {
			chunk := ids[start:min(start+inChunk, len(ids))]
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			rows, err := q.QueryContext(ctx, fmt.Sprintf(query, placeholders(len(chunk))), args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := scan(rows); err != nil {
					rows.Close()
					return err
				}
			}
			err = rows.Close()
			if err == nil {
				err = rows.Err()
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// UsageByModelOf is UsageByModel for many sessions at once: session id →
// model → tokens. A session with no usage, or none at all, is left out.
// It reads the sums kept as messages are written (session_usage), not
// the messages.
func (s *Store) UsageByModelOf(ctx context.Context, sessionIDs []string) (map[string]map[string]sa.Usage, error) {
	out := make(map[string]map[string]sa.Usage)
	err := s.forChunks(ctx, sessionIDs, `SELECT session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
		FROM session_usage WHERE session_id IN (%s)`, func(r rowScanner) error {
		var id, model string
		var u sa.Usage
		if err := r.Scan(&id, &model, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens); err != nil {
			return err
		}
		if u.IsZero() {
			return nil
		}
		if out[id] == nil {
			out[id] = map[string]sa.Usage{}
		}
		out[id][model] = u
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("usage of %d sessions: %w", len(sessionIDs), err)
	}
	return out, nil
}

// ChildTasks returns the ids of the tasks each session launched (cleared
// ones too), oldest first: parent session id → task ids.
func (s *Store) ChildTasks(ctx context.Context, parentIDs []string) (map[string][]string, error) {
	out := make(map[string][]string)
	err := s.forChunks(ctx, parentIDs, `SELECT parent_session_id, id FROM tasks WHERE parent_session_id IN (%s)
		ORDER BY parent_session_id, created_at, id`, func(r rowScanner) error {
		var parent, id string
		if err := r.Scan(&parent, &id); err != nil {
			return err
		}
		out[parent] = append(out[parent], id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks of %d sessions: %w", len(parentIDs), err)
	}
	return out, nil
}
