package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
)

// scanUsage reads a session id, a model and four token sums into out
// (session id → model → tokens), leaving out sums of zero.
func scanUsage(rows pgx.Rows, out map[string]map[string]sa.Usage) error {
	defer rows.Close()
	for rows.Next() {
		var id, model string
		var u sa.Usage
		if err := rows.Scan(&id, binTo{&model}, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens); err != nil {
			return err
		}
		if u.IsZero() {
			continue
		}
		if out[id] == nil {
			out[id] = map[string]sa.Usage{}
		}
		out[id][model] = u
	}
	return rows.Err()
}

// UsageByModel returns the tokens used by the messages a session stores
// itself, summed per model: every one of them, also those before a clear
// or a compaction, which no history shows but which were paid for. A
// session that does not exist is ErrNotFound; a deleted one whose rows are
// kept still answers.
func (s *Store) UsageByModel(ctx context.Context, sessionID string) (map[string]sa.Usage, error) {
	out := map[string]map[string]sa.Usage{}
	err := s.inRead(ctx, func(q querier) error {
		var one int
		err := q.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1`, sessionID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("session %s: %w", sessionID, sa.ErrNotFound)
		}
		if err != nil {
			return err
		}
		rows, err := q.Query(ctx, `SELECT session_id, model, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens)
			FROM messages WHERE session_id = $1 GROUP BY session_id, model`, sessionID)
		if err != nil {
			return err
		}
		return scanUsage(rows, out)
	})
	if err != nil {
		return nil, fmt.Errorf("usage of session %s: %w", sessionID, err)
	}
	if out[sessionID] == nil {
		return map[string]sa.Usage{}, nil
	}
	return out[sessionID], nil
}

// UsageByModelOf is UsageByModel for many sessions at once: session id →
// model → tokens. A session with no usage, or none at all, is left out.
// It reads the sums kept as messages are written (session_usage), not
// the messages.
func (s *Store) UsageByModelOf(ctx context.Context, sessionIDs []string) (map[string]map[string]sa.Usage, error) {
	out := map[string]map[string]sa.Usage{}
	rows, err := s.pool.Query(ctx, `SELECT session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
		FROM session_usage WHERE session_id = ANY($1)`, sessionIDs)
	if err == nil {
		err = scanUsage(rows, out)
	}
	if err != nil {
		return nil, fmt.Errorf("usage of %d sessions: %w", len(sessionIDs), err)
	}
	return out, nil
}

// ChildTasks returns the ids of the tasks each session launched (cleared
// ones too), oldest first: parent session id → task ids.
func (s *Store) ChildTasks(ctx context.Context, parentIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	rows, err := s.pool.Query(ctx, `SELECT parent_session_id, id FROM tasks WHERE parent_session_id = ANY($1)
		ORDER BY parent_session_id, created_at, id`, parentIDs)
	if err != nil {
		return nil, fmt.Errorf("tasks of %d sessions: %w", len(parentIDs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var parent, id string
		if err := rows.Scan(&parent, &id); err != nil {
			return nil, fmt.Errorf("tasks of %d sessions: %w", len(parentIDs), err)
		}
		out[parent] = append(out[parent], id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tasks of %d sessions: %w", len(parentIDs), err)
	}
	return out, nil
}
