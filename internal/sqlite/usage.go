package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sa "github.com/superagents/superagents"
)

// UsageByModel returns the tokens used by the messages a session stores
// itself, summed per model: every one of them, also those before a clear
// or a compaction, which no history shows but which were paid for. A
// session that does not exist is ErrNotFound; a deleted one whose rows are
// kept still answers.
func (s *Store) UsageByModel(ctx context.Context, sessionID string) (map[string]sa.Usage, error) {
	out := make(map[string]sa.Usage)
	err := s.inRead(ctx, func(q querier) error {
		var one int
		err := q.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, sessionID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %s: %w", sessionID, sa.ErrNotFound)
		}
		if err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, `SELECT model, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens)
			FROM messages WHERE session_id = ? GROUP BY model`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var model string
			var u sa.Usage
			if err := rows.Scan(&model, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens); err != nil {
				return err
			}
			if !u.IsZero() {
				out[model] = u
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("usage of session %s: %w", sessionID, err)
	}
	return out, nil
}
